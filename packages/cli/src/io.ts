/** What a command may touch of the outside world; tests pass their own. */
export interface CliIO {
  readonly stdout: (text: string) => void
  readonly stderr: (text: string) => void
  readonly env: Readonly<Record<string, string | undefined>>
  readonly cwd: string
  readonly isTTY: boolean
}

/** A command: parses its own arguments and returns the process exit code. */
export type Command = (args: ReadonlyArray<string>, io: CliIO) => Promise<number>
