// The `lathe` command after its first line (`bin.ts`): commands load lazily, and the git questions of start-up go out
// before the heavy modules load.
import module from "node:module"
import { prefetchStartupGit } from "@lathe/core/git-prefetch"
import { launcherKeys, takeLauncherKeys } from "@lathe/core/launcher-keys"
import { terminalDoor } from "./terminal-text.js"

/**
 * Runs `lathe` with this process's arguments, streams and environment, and sets `process.exitCode`. `startedUp` is
 * called once the command modules are loaded, before any command runs.
 */
export const launch = async (startedUp: () => void): Promise<void> => {
  module.enableCompileCache?.()
  // Provider keys the launcher handed over on a descriptor (never in this process's environment): Lathe reads its
  // settings from the environment view below, which holds them. Programs Lathe starts (bash, hooks, plugin programs)
  // start from that view too and are scrubbed of them as before (see `scrubEnv`); process.env never holds them.
  takeLauncherKeys()
  const argv = process.argv.slice(2)
  // `lathe run` and the interactive session work on this directory: the git questions of start-up (project root and
  // id, branch and changes) go to git processes now and are answered while this process loads its modules.
  if (runsAgentHere(argv)) prefetchStartupGit(process.cwd())
  // stdout carries only what Lathe prints: the answer, a listing, or one JSON event per line (`--format json`).
  // Anything else this process writes there (a plugin's console.log or process.stdout.write, a library's chatter) goes
  // to stderr. The interactive session keeps stdout as it is: the terminal UI draws on it.
  const stdout = process.stdout.write.bind(process.stdout)
  if (!interactive(argv))
    process.stdout.write = ((...args: Parameters<typeof process.stderr.write>) =>
      process.stderr.write(...args)) as typeof process.stdout.write
  const { main } = await import("./main.js")
  startedUp()
  // The one door to the terminal: every write passes `terminalDoor` on its way to stderr (read by a person) and to
  // stdout when it is a terminal; a pipe gets stdout as written (JSON events, exports: data, exact).
  const toTerminal = Boolean(process.stdout.isTTY)
  process.exitCode = await main(argv, {
    stdout: (text) => stdout(toTerminal ? terminalDoor(text) : text),
    stderr: (text) => process.stderr.write(terminalDoor(text)),
    env: { ...process.env, ...launcherKeys() },
    cwd: process.cwd(),
    isTTY: Boolean(process.stdout.isTTY),
    stdin: process.stdin,
    stdinIsTTY: Boolean(process.stdin.isTTY),
    onInterrupt: (handler) => {
      process.on("SIGINT", handler)
      process.on("SIGTERM", handler)
      return () => {
        process.off("SIGINT", handler)
        process.off("SIGTERM", handler)
      }
    }
  })
}

/** Whether `argv` starts the interactive session (no command, or only its options), which draws on stdout. */
function interactive(args: ReadonlyArray<string>): boolean {
  const [first] = args
  return first === undefined || (first.startsWith("-") && !/^-(h|v|-help|-version)$/.test(first))
}

/** Whether `argv` starts the agent on this directory: `lathe run …` or the interactive session, not attached to a server. */
function runsAgentHere(args: ReadonlyArray<string>): boolean {
  const [first] = args
  const command =
    first === undefined || first === "run" || (first.startsWith("-") && !/^-(h|v|-help|-version)$/.test(first))
  return command && !args.some((arg) => arg === "--attach" || arg.startsWith("--attach="))
}
