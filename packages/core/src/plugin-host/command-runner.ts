import type { RunProgramOptions, RunProgramResult } from "@lathe/plugin"
import { Context, Effect, Layer, Schema } from "effect"
import { Config, type ConfigShape } from "../config/config.js"
import { Paths } from "../config/paths.js"
import { scrubEnv, secretValues } from "../config/secret-values.js"
import { launcherKeys } from "../process/launcher-keys.js"
import { DEFAULT_RUN_TIMEOUT_MS, runProcess } from "../process/run-process.js"

// How a program is run and how it ended are the kit's (`ctx.run`'s contract); the host runs it.
export type { RunProgramOptions, RunProgramResult }

/** A program could not be run at all: it does not exist, or the sandbox the config requires is not available. */
export class CommandRunError extends Schema.TaggedError<CommandRunError>()("CommandRunError", {
  file: Schema.String,
  message: Schema.String
}) {}

/** Turns a program's argv into the argv actually spawned (e.g. inside a sandbox). */
export type ArgvWrap = (argv: readonly [string, ReadonlyArray<string>]) => readonly [string, ReadonlyArray<string>]

/**
 * Spawns `file args` (no shell) in its own process group with exactly `env`, feeds it `input`, and resolves when it
 * exits; on the time limit the whole group gets SIGTERM, then SIGKILL ({@link runProcess}, with its output as text).
 * Rejects only when the program cannot start.
 */
export const spawnProgram = async (options: {
  readonly file: string
  readonly args: ReadonlyArray<string>
  readonly cwd: string
  readonly env: Readonly<Record<string, string>>
  readonly timeoutMs: number
  readonly input?: string | undefined
  readonly wrap?: ArgvWrap | undefined
  /** Bytes for the program's file descriptors 3, 4, … (see `runProcess`), e.g. the sandbox's seccomp filter. */
  readonly extraInputs?: ReadonlyArray<Uint8Array> | undefined
}): Promise<RunProgramResult> => {
  const argv: readonly [string, ReadonlyArray<string>] = [options.file, options.args]
  const [file, args] = options.wrap ? options.wrap(argv) : argv
  const result = await runProcess({
    file,
    args,
    cwd: options.cwd,
    env: options.env,
    timeoutMs: options.timeoutMs,
    ...(options.input === undefined ? {} : { input: options.input }),
    ...(options.extraInputs === undefined ? {} : { extraInputs: options.extraInputs })
  })
  return {
    exitCode: result.exitCode,
    signal: result.signal,
    stdout: result.stdout.toString("utf8"),
    stderr: result.stderr.toString("utf8"),
    timedOut: result.timedOut
  }
}

/**
 * The environment every program Lathe starts gets: this process's (with the provider keys the launcher handed over,
 * so `shell.env.inherit` can name them as for bash), without the secrets `config` knows of.
 */
export const childEnv = (
  config: ConfigShape,
  base: Readonly<Record<string, string | undefined>> = { ...process.env, ...launcherKeys() }
) => scrubEnv(base, { inherit: config.info.shell?.env?.inherit ?? [], secrets: secretValues(config, base) }).env

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
