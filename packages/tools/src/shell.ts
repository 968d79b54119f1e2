import { existsSync } from "node:fs"
import { scrubEnv } from "@lathe/plugin"
import { runProcess } from "@lathe/plugin/process"

/** Output kept in memory per command; beyond it the rest is dropped (and said so). */
export const MAX_CAPTURE_BYTES = 32 * 1024 * 1024
/** Between SIGTERM to the process group and SIGKILL. */
const KILL_GRACE_MS = 200
/** After the shell exits, how long to wait for background children to let go of its output pipes. */
const DRAIN_MS = 100

/** How a command ended. */
export interface ShellResult {
  /** stdout and stderr, interleaved in arrival order. */
  readonly output: string
  /** The exit code; null when killed by a signal. */
  readonly exitCode: number | null
  readonly signal: NodeJS.Signals | null
  readonly timedOut: boolean
  readonly aborted: boolean
  /** Output past {@link MAX_CAPTURE_BYTES} was dropped. */
  readonly overflowed: boolean
  readonly durationMs: number
}

/** What every command's environment gets over its own: no pager, no colours, no prompt for a password. */
export const TERMINAL_ENV = { TERM: "dumb", PAGER: "cat", GIT_PAGER: "cat", GIT_TERMINAL_PROMPT: "0" } as const

/** The shell that runs commands: bash when installed (non-login, so the caller's PATH is kept), else sh. */
export const shellCommand = (command: string): readonly [string, ReadonlyArray<string>] => {
  const bash = ["/bin/bash", "/usr/bin/bash", "/usr/local/bin/bash"].find((path) => existsSync(path))
  return bash ? [bash, ["-c", command]] : ["/bin/sh", ["-c", command]]
}

/**
 * The environment a command gets: `base` scrubbed by the kit's `scrubEnv`, the host's rule for every program: without
 * the host's provider key variables (`names`, the plugin's `ctx.secretNames`), without every variable whose name looks
 * like a secret (KEY, SECRET, TOKEN, PASSWORD, PAT, AUTH, DSN, …), whose value holds a URL with a password, or whose
 * value carries one of `secrets` (the credentials Lathe holds, `ctx.secrets`), except the names listed in `inherit`,
 * which pass as they are. `dropped` names what was removed.
 */
export const commandEnv = (
  base: NodeJS.ProcessEnv,
  options: {
    readonly inherit?: ReadonlyArray<string>
    readonly secrets?: ReadonlyArray<string>
    readonly names?: ReadonlyArray<string>
  } = {}
): { readonly env: Record<string, string>; readonly dropped: ReadonlyArray<string> } => scrubEnv(base, options)

/**
 * Runs `command` in a new process group with stdin closed (reads see EOF at once), through the kit's `runProcess`.
 * `onOutput` gets each chunk as it arrives. On timeout or abort the whole group (the shell and every child it started)
 * gets SIGTERM, then SIGKILL shortly after, so nothing is left running (under `wrap`, the group holds the sandbox
 * program, which must take its whole tree down when it dies: bwrap's `--die-with-parent` and PID namespace do).
 * Resolves when the shell has exited and its output is drained (at most {@link DRAIN_MS} after it exits); never
 * rejects for a failing command (see `exitCode`).
 */
export const runShell = async (options: {
  readonly command: string
  readonly cwd: string
  readonly timeoutMs: number
  readonly signal: AbortSignal
  /** Each chunk of output as it arrives. */
  readonly onOutput?: (chunk: string) => void
  /** The command's environment before the terminal settings are added (default: this process's). */
  readonly env?: NodeJS.ProcessEnv
  /** Turns the shell's argv into the argv actually spawned, e.g. inside a sandbox. */
  readonly wrap?: (argv: readonly [string, ReadonlyArray<string>]) => readonly [string, ReadonlyArray<string>]
  /** Bytes for the spawned program's file descriptors 3, 4, … (the sandbox's seccomp filter, see `SandboxedRun`). */
  readonly extraInputs?: ReadonlyArray<Uint8Array>
  /** Messages of the program's IPC channel (the sandbox's allow-list forwarder, see `SandboxedRun`). */
  readonly onMessage?: (message: unknown, handle: unknown) => void
}): Promise<ShellResult> => {
  const started = performance.now()
  const shell = shellCommand(options.command)
  const [file, args] = options.wrap ? options.wrap(shell) : shell
  // stdout and stderr interleaved in arrival order, under one cap for both (the runner keeps nothing itself).
  const chunks: Array<string> = []
  let bytes = 0
  let overflowed = false
  const result = await runProcess({
    file,
    args,
    cwd: options.cwd,
    env: { ...(options.env ?? process.env), ...TERMINAL_ENV },
    timeoutMs: options.timeoutMs,
    signal: options.signal,
    killGraceMs: KILL_GRACE_MS,
    drainMs: DRAIN_MS,
    maxOutputBytes: 0,
    ...(options.extraInputs && options.extraInputs.length > 0 ? { extraInputs: options.extraInputs } : {}),
    ...(options.onMessage ? { onMessage: options.onMessage } : {}),
    onOutput: (text) => {
      const size = Buffer.byteLength(text)
      if (bytes + size > MAX_CAPTURE_BYTES) {
        overflowed = true
        return
      }
      bytes += size
      chunks.push(text)
      options.onOutput?.(text)
    }
  })
  return {
    output: chunks.join(""),
    exitCode: result.exitCode,
    signal: result.signal,
    timedOut: result.timedOut,
    aborted: result.aborted,
    overflowed,
    durationMs: Math.round(performance.now() - started)
  }
}
