import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { HostCallSite, HostTerminal } from "@lathe/plugin"
import { type ShellResult, shellCommand, TERMINAL_ENV } from "./shell.js"

/**
 * Runs a bash command in the host's terminal (`ctx.terminal`: an editor's, where the person watches it) instead of a
 * process of Lathe's own: the same shell argv, wrapped by the same sandbox, in the same folder with the same scrubbed
 * environment. The sandbox's extra inputs (bubblewrap's seccomp filter on fd 3, 4, …) cannot cross the protocol as
 * descriptors: they go in a private temp folder that a `/bin/sh` in front of the sandbox opens on those descriptors
 * before it execs the sandbox, so what runs is exactly what Lathe would have spawned. The folder is removed after.
 */
export const runInTerminal = async (
  terminal: HostTerminal,
  options: HostCallSite & {
    readonly command: string
    readonly cwd: string
    readonly timeoutMs: number
    readonly signal: AbortSignal
    readonly env: Readonly<Record<string, string>>
    readonly wrap?: (argv: readonly [string, ReadonlyArray<string>]) => readonly [string, ReadonlyArray<string>]
    readonly extraInputs?: ReadonlyArray<Uint8Array>
  }
): Promise<ShellResult> => {
  const started = performance.now()
  const shell = shellCommand(options.command)
  const [file, args] = options.wrap ? options.wrap(shell) : shell
  const inputs = options.extraInputs ?? []
  const folder = inputs.length > 0 ? await mkdtemp(join(tmpdir(), "lathe-terminal-")) : undefined
  try {
    let argv: readonly [string, ReadonlyArray<string>] = [file, args]
    if (folder) {
      const paths = inputs.map((_, i) => join(folder, `fd${i + 3}`))
      for (const [i, bytes] of inputs.entries()) await writeFile(paths[i] ?? "", bytes, { mode: 0o600 })
      // `exec 3<"$1" 4<"$2"; shift 2; exec "$@"`: the descriptors the sandbox reads, then the sandbox itself.
      const open = paths.map((_, i) => `${i + 3}<"$${i + 1}"`).join(" ")
      argv = [
        "/bin/sh",
        ["-c", `exec ${open}; shift ${paths.length}; exec "$@"`, "lathe-sandbox", ...paths, file, ...args]
      ]
    }
    const result = await terminal.run({
      sessionID: options.sessionID,
      callID: options.callID,
      file: argv[0],
      args: argv[1],
      cwd: options.cwd,
      env: { ...options.env, ...TERMINAL_ENV },
      signal: options.signal,
      timeoutMs: options.timeoutMs
    })
    return {
      output: result.output,
      exitCode: result.exitCode,
      signal: result.signal as NodeJS.Signals | null,
      timedOut: result.timedOut,
      aborted: result.aborted,
      overflowed: false,
      durationMs: Math.round(performance.now() - started)
    }
  } finally {
    if (folder) await rm(folder, { recursive: true, force: true })
  }
}
