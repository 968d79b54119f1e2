/**
 * What a host may do in a tool's place: read and write the text of files (`ctx.files`) and run a command
 * (`ctx.terminal`). An editor driving Lathe over the Agent Client Protocol fills them, so the agent reads the person's
 * unsaved buffers, its edits land in the editor, and its commands run in the editor's terminal where the person
 * watches them. Absent, a tool does the work itself: the disk, a process of its own.
 */

/** The call a host's file or terminal work is done for: the session says which editor session it belongs to. */
export interface HostCallSite {
  readonly sessionID: string
  readonly callID: string
}

/** Where the text of files lives for the person (`PluginContext.files`). Paths are absolute; text is UTF-8. */
export interface HostFiles {
  /** The text of `path` as the person sees it now: an editor's unsaved buffer, else the file on disk. */
  readonly readText: (path: string, at: HostCallSite) => Promise<string>
  /**
   * Writes `text` to `path` (its folder exists). Resolves once written: a host whose editor keeps the text in a
   * buffer resolves once the editor saved it (snapshots and undo look at the disk).
   */
  readonly writeText: (path: string, text: string, at: HostCallSite) => Promise<void>
}

/** A command for the host's terminal: the program and its arguments as spawned (already inside any sandbox). */
export interface HostTerminalCommand extends HostCallSite {
  readonly file: string
  readonly args: ReadonlyArray<string>
  readonly cwd: string
  /** The whole environment of the command (it does not inherit the host's). */
  readonly env: Readonly<Record<string, string>>
  /** Kill the command (and release the terminal) when this aborts. */
  readonly signal: AbortSignal
  /** Kill the command after this long, in ms. */
  readonly timeoutMs: number
}

/** How a command run in the host's terminal ended. */
export interface HostTerminalResult {
  /** Its output (stdout and stderr as the terminal shows them). */
  readonly output: string
  readonly exitCode: number | null
  readonly signal: string | null
  readonly timedOut: boolean
  readonly aborted: boolean
}

/** A terminal the host runs commands in (`PluginContext.terminal`), e.g. an editor's. */
export interface HostTerminal {
  /**
   * Runs `command` and resolves when it ended and its terminal is released. It rejects only when the host could
   * not run it at all; a failing command resolves with its exit code.
   */
  readonly run: (command: HostTerminalCommand) => Promise<HostTerminalResult>
}
