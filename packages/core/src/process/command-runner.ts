import { spawn } from "node:child_process"
import { Context, Effect, Layer, Schema } from "effect"
import { Config, type ConfigShape } from "../config/config.js"
import { Paths } from "../config/paths.js"
import { scrubEnv, secretValues } from "./secret-values.js"

/** How long a program may run when the caller gives no time limit: 2 minutes. */
export const DEFAULT_RUN_TIMEOUT_MS = 2 * 60 * 1000
/** Output kept per stream; the rest is dropped. */
const MAX_STREAM_CHARS = 4 * 1024 * 1024
/** Between SIGTERM to the process group and SIGKILL. */
const KILL_GRACE_MS = 200

/** How to run one program. */
export interface RunProgramOptions {
  /** The working directory (default: the project root). */
  readonly cwd?: string
  /** Killed, with everything it started, after this long (default {@link DEFAULT_RUN_TIMEOUT_MS}). */
  readonly timeoutMs?: number
  /** Written to its stdin, which is then closed (default: stdin closed at once). */
  readonly input?: string
}

/** How a program ended. */
export interface RunProgramResult {
  /** The exit code; null when it was killed by a signal. */
  readonly exitCode: number | null
  /** The signal that killed it, if one did. */
  readonly signal: string | null
  readonly stdout: string
  readonly stderr: string
  /** It outlived its time limit and was killed. */
  readonly timedOut: boolean
}

/** A program could not be run at all: it does not exist, or the sandbox the config requires is not available. */
export class CommandRunError extends Schema.TaggedError<CommandRunError>()("CommandRunError", {
  file: Schema.String,
  message: Schema.String
}) {}

/** Turns a program's argv into the argv actually spawned (e.g. inside a sandbox). */
export type ArgvWrap = (argv: readonly [string, ReadonlyArray<string>]) => readonly [string, ReadonlyArray<string>]

const killGroup = (pid: number | undefined, signal: NodeJS.Signals): void => {
  if (pid === undefined) return
  try {
    process.kill(-pid, signal)
  } catch {
    // ESRCH: the group is gone already.
  }
}

/**
 * Spawns `file args` (no shell) in its own process group with exactly `env`, feeds it `input`, and resolves when it
 * exits; on the time limit the whole group gets SIGTERM, then SIGKILL. Rejects only when the program cannot start.
 */
export const spawnProgram = (options: {
  readonly file: string
  readonly args: ReadonlyArray<string>
  readonly cwd: string
  readonly env: Readonly<Record<string, string>>
  readonly timeoutMs: number
  readonly input?: string | undefined
  readonly wrap?: ArgvWrap | undefined
}): Promise<RunProgramResult> =>
  new Promise((resolve, reject) => {
    const argv: readonly [string, ReadonlyArray<string>] = [options.file, options.args]
    const [file, args] = options.wrap ? options.wrap(argv) : argv
    const child = spawn(file, [...args], {
      cwd: options.cwd,
      env: { ...options.env },
      detached: true,
      stdio: [options.input === undefined ? "ignore" : "pipe", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    let timedOut = false
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      if (stdout.length < MAX_STREAM_CHARS) stdout += chunk
    })
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
      if (stderr.length < MAX_STREAM_CHARS) stderr += chunk
    })
    child.stdin?.on("error", () => undefined) // a program that exits without reading its input
    child.stdin?.end(options.input)
    let killTimer: NodeJS.Timeout | undefined
    const timer = setTimeout(() => {
      timedOut = true
      killGroup(child.pid, "SIGTERM")
      killTimer = setTimeout(() => killGroup(child.pid, "SIGKILL"), KILL_GRACE_MS)
    }, options.timeoutMs)
    child.on("error", (error) => {
      clearTimeout(timer)
      reject(error)
    })
    child.on("close", (code, signal) => {
      clearTimeout(timer)
      if (killTimer) clearTimeout(killTimer)
      if (timedOut) killGroup(child.pid, "SIGKILL")
      resolve({ exitCode: code, signal, stdout, stderr, timedOut })
    })
  })

/** The environment every program Lathe starts gets: this process's, without the secrets `config` knows of. */
export const childEnv = (config: ConfigShape, base: Readonly<Record<string, string | undefined>> = process.env) =>
  scrubEnv(base, { inherit: config.info.shell?.env?.inherit ?? [], secrets: secretValues(config, base) }).env

/** Runs a program without a sandbox, with {@link childEnv}: what the default layer does for each run. */
export const runUnsandboxed = (
  file: string,
  args: ReadonlyArray<string>,
  options: RunProgramOptions & { readonly cwd: string; readonly env: Readonly<Record<string, string>> },
  wrap?: ArgvWrap
): Effect.Effect<RunProgramResult, CommandRunError> =>
  Effect.tryPromise({
    try: () =>
      spawnProgram({
        file,
        args,
        cwd: options.cwd,
        env: options.env,
        timeoutMs: options.timeoutMs ?? DEFAULT_RUN_TIMEOUT_MS,
        input: options.input,
        wrap
      }),
    catch: (error) =>
      new CommandRunError({
        file,
        message: `Could not run ${file}: ${error instanceof Error ? error.message : String(error)}`
      })
  })

/**
 * Runs programs for plugins the way bash runs commands: with the secrets Lathe holds removed from their environment
 * and, in the host's layer (`@lathe/tools`' sandboxed runner, which the CLI provides), inside the same sandbox. A
 * failing program is a result with its exit code, not an error; the error is for a program that could not start.
 */
export class CommandRunner extends Context.Service<
  CommandRunner,
  {
    readonly run: (
      file: string,
      args: ReadonlyArray<string>,
      options?: RunProgramOptions
    ) => Effect.Effect<RunProgramResult, CommandRunError>
  }
>()("@lathe/core/CommandRunner") {
  /** No sandbox: each program runs in its own process group with {@link childEnv}, in the project root by default. */
  static readonly layer: Layer.Layer<CommandRunner, never, Config | Paths> = Layer.effect(
    CommandRunner,
    Effect.gen(function* () {
      const config = yield* Config
      const paths = yield* Paths
      return unsandboxedRunner(config, paths.root)
    })
  )
}

/** The runner of {@link CommandRunner.layer}, for hosts that build it from a config they already hold. */
export const unsandboxedRunner = (config: ConfigShape, root: string): CommandRunner["Service"] => {
  const env = childEnv(config)
  return CommandRunner.of({
    run: Effect.fn("CommandRunner.run")(function* (file, args, options = {}) {
      return yield* runUnsandboxed(file, args, { ...options, cwd: options.cwd ?? root, env })
    })
  })
}
