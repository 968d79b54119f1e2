/** What a command may touch of the outside world; tests pass their own. */
export interface CliIO {
  readonly stdout: (text: string) => void
  readonly stderr: (text: string) => void
  readonly env: Readonly<Record<string, string | undefined>>
  readonly cwd: string
  /** Whether stdout is a terminal. */
  readonly isTTY: boolean
  /** Standard input, for prompts read from a pipe or answers typed at a terminal. */
  readonly stdin?: NodeJS.ReadableStream
  /** Whether stdin is a terminal (a person can answer questions). */
  readonly stdinIsTTY?: boolean
  /** Registers a Ctrl-C handler; returns a function that removes it. */
  readonly onInterrupt?: (handler: () => void) => () => void
}

/** A command: parses its own arguments and returns the process exit code. */
export type Command = (args: ReadonlyArray<string>, io: CliIO) => Promise<number>
