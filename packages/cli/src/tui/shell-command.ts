import { runShell } from "@lathe/tools"

/** What a `!cmd` the person ran comes to: its exit code, what the transcript shows, and what the model is told. */
export interface ShellOutcome {
  readonly code: number
  /** The output's last 40 lines (with a count of the rest) and a closing `(exit N)` or timeout line. */
  readonly lines: ReadonlyArray<string>
  /** Passed to the model with the person's next message. */
  readonly forModel: string
}

/**
 * Runs the person's own command in `cwd`: not sandboxed and not asked (they typed it), killed with its children after
 * 2 minutes. `onLive` gets the last 12 lines of output as it comes.
 */
export const runPersonShell = async (
  command: string,
  cwd: string,
  env: Readonly<Record<string, string | undefined>>,
  onLive: (lines: ReadonlyArray<string>) => void
): Promise<ShellOutcome> => {
  let live = ""
  const result = await runShell({
    command,
    cwd,
    env: { ...env },
    timeoutMs: 120_000,
    signal: new AbortController().signal,
    onOutput: (chunk) => {
      live = (live + chunk).slice(-20_000)
      onLive(live.split("\n").slice(-12))
    }
  })
  const code = result.exitCode ?? (result.signal ? 128 : 1)
  const lines = result.output.replace(/\n$/, "").split("\n")
  return {
    code,
    lines: [
      ...(lines.length > 40 ? [`… ${lines.length - 40} more lines`, ...lines.slice(-40)] : lines),
      result.timedOut ? "(killed after 2 minutes)" : `(exit ${code})`
    ],
    forModel: `The user ran a shell command themselves: \`${command}\` (exit ${code}). Output:\n${result.output.slice(-20_000)}`
  }
}
