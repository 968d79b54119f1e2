// The `lathe` command after its first line (`bin.ts`): commands load lazily, and the git questions of start-up go out
// before the heavy modules load.
import { writeSync } from "node:fs"
import module from "node:module"
import { launcherKeys, takeLauncherKeys } from "@lathe/core/launcher-keys"
import { startupMark } from "@lathe/core/startup-marks"
import type { CliIO } from "./io.js"
import { terminalDoor } from "./terminal-text.js"

/**
 * Runs `lathe` with this process's arguments, streams and environment, and sets `process.exitCode`. `startedUp` is
 * called once the command modules are loaded, before any command runs.
 */
export const launch = async (startedUp: () => void): Promise<void> => {
  startupMark("launch")
  module.enableCompileCache?.()
  // Provider keys the launcher handed over on a descriptor (never in this process's environment): Lathe reads its
  // settings from the environment view below, which holds them. Programs Lathe starts (bash, hooks, plugin programs)
  // start from that view too and are scrubbed of them as before (see `scrubEnv`); process.env never holds them.
  takeLauncherKeys()
  const argv = process.argv.slice(2)
  // `lathe run` and the interactive session work on this directory: the git questions of start-up (project root and
  // id, branch and changes) go to git processes now and are answered while this process loads its modules. Imported
  // here, not statically: the process runner behind it loads `node:child_process` (and with it `net`, `dgram` and
  // Node's streams), which `--version` and the other commands would pay for at every start.
  if (runsAgentHere(argv)) (await import("@lathe/core/git-prefetch")).prefetchStartupGit(process.cwd())
  startupMark("git started")
  const { main } = await import("./main.js")
  startupMark("main loaded")
  startedUp()
  process.exitCode = await main(argv, informational(argv) ? informationalIO() : processIO(argv))
}

/**
 * The streams of every command but the informational ones. Standard input and whether it and stdout are terminals
 * are read when a command asks: Node builds `process.stdin` (a stream, with `readline` behind it for a terminal) on
 * first use, and a command given its prompt as an argument never does.
 */
const processIO = (argv: ReadonlyArray<string>): CliIO => {
  // stdout carries only what Lathe prints: the answer, a listing, or one JSON event per line (`--format json`).
  // Anything else this process writes there (a plugin's console.log or process.stdout.write, a library's chatter) goes
  // to stderr. The interactive session keeps stdout as it is: the terminal UI draws on it.
  const stdout = process.stdout.write.bind(process.stdout)
  if (!interactive(argv))
    process.stdout.write = ((...args: Parameters<typeof process.stderr.write>) =>
      process.stderr.write(...args)) as typeof process.stdout.write
  // The one door to the terminal: every write passes `terminalDoor` on its way to stderr (read by a person) and to
  // stdout when it is a terminal; a pipe gets stdout as written (JSON events, exports: data, exact).
  const toTerminal = Boolean(process.stdout.isTTY)
  return {
    stdout: (text) => stdout(toTerminal ? terminalDoor(text) : text),
    stderr: (text) => process.stderr.write(terminalDoor(text)),
    env: { ...process.env, ...launcherKeys() },
    cwd: process.cwd(),
    isTTY: toTerminal,
    get stdin() {
      return process.stdin
    },
    get stdinIsTTY() {
      return Boolean(process.stdin.isTTY)
    },
    onInterrupt: (handler) => {
      process.on("SIGINT", handler)
      process.on("SIGTERM", handler)
      return () => {
        process.off("SIGINT", handler)
        process.off("SIGTERM", handler)
      }
    }
  }
}

/**
 * The streams of `lathe --version` and `lathe --help`, which only print a few lines of Lathe's own text: written to
 * the descriptors themselves, so Node never builds `process.stdout` (a stream class, and for a terminal `tty` with
 * `net` behind it: about a third of what `--version` cost above `node -e 0`). The text passes `terminalDoor` whatever
 * stdout is (asking whether it is a terminal would load `tty`): it holds no control characters, so it comes out as
 * written. A descriptor that would block (a non-blocking pipe that is full) gets the rest through Node's stream.
 */
const informationalIO = (): CliIO => ({
  stdout: (text) => writeAll(1, terminalDoor(text)),
  stderr: (text) => writeAll(2, terminalDoor(text)),
  env: { ...process.env, ...launcherKeys() },
  cwd: process.cwd(),
  isTTY: false
})

/** Descriptors whose writes go through Node's stream from now on (one `writeSync` could not take everything). */
const streamed = new Set<1 | 2>()

/**
 * Writes `text` to descriptor `fd` (1 or 2). What `writeSync` cannot take now (EAGAIN) goes through `process.stdout`
 * or `process.stderr`, and so does every later write there, in order. A reader that went away (EPIPE, as with
 * `lathe --help | head -1`) gets nothing more.
 */
const writeAll = (fd: 1 | 2, text: string): void => {
  // Asked for only when needed: reading `process.stdout` builds the stream.
  const stream = () => (fd === 1 ? process.stdout : process.stderr)
  if (streamed.has(fd)) {
    stream().write(text)
    return
  }
  const bytes = Buffer.from(text, "utf8")
  let written = 0
  try {
    while (written < bytes.length) written += writeSync(fd, bytes, written)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === "EPIPE") return
    if (code !== "EAGAIN") throw error
    streamed.add(fd)
    stream().write(bytes.subarray(written))
  }
}

/** Whether `argv` only asks for the version or the help text (`lathe -v`, `--version`, `-h`, `--help`, `help`). */
export const informational = (args: ReadonlyArray<string>): boolean => {
  const [first] = args
  return first === "help" || (first !== undefined && /^-(h|v|-help|-version)$/.test(first))
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
