// The host's CommandRunner (a plugin's `ctx.run`): host code, so it lives with the CLI, which composes core and the
// tools' sandbox; a feature package sees the kit alone.
import { realpath } from "node:fs/promises"
import {
  CommandRunError,
  CommandRunner,
  Config,
  childEnv,
  DEFAULT_RUN_TIMEOUT_MS,
  Paths,
  spawnProgram,
  truncationDir
} from "@lathe/core"
import {
  bashOptionsFromConfig,
  chooseSandbox,
  detectSandbox,
  prepareSandboxedRun,
  type SandboxDetector
} from "@lathe/tools"
import { Effect, Layer } from "effect"

/** Options of {@link sandboxedCommandRunner}; tests pass a detector and the folders the sandbox leaves writable. */
export interface SandboxedRunnerOptions {
  /** Finds the machine's sandbox (default {@link detectSandbox}). */
  readonly detect?: SandboxDetector
  /** The OS temp dir the sandbox leaves writable (default `os.tmpdir()`). */
  readonly tempDir?: string
  /** Lathe's truncation dir, writable in `workspace-write` (default: `tool-output` in the data dir). */
  readonly truncationDir?: string
  /** The environment programs start from, before the secrets are removed (default: this process's). */
  readonly baseEnv?: Readonly<Record<string, string | undefined>>
}

const failure = (file: string, error: unknown) =>
  new CommandRunError({
    file,
    message: `Could not run ${file}: ${error instanceof Error ? error.message : String(error)}`
  })

/**
 * The `CommandRunner` the CLI gives plugins: each program runs like a bash command, in the sandbox `prepareSandboxedRun`
 * builds from the config's `sandbox` (default `workspace-write`, network closed; the protected paths stay read-only,
 * and are checked after the run) and with the environment of every child
 * (`childEnv`: secrets removed). Without a sandbox on this machine it runs unsandboxed, as bash does; when the config
 * requires one, the run fails with bash's refusal.
 */
export const sandboxedCommandRunner = (
  options: SandboxedRunnerOptions = {}
): Layer.Layer<CommandRunner, never, Config | Paths> =>
  Layer.effect(
    CommandRunner,
    Effect.gen(function* () {
      const config = yield* Config
      const paths = yield* Paths
      const env = childEnv(config, options.baseEnv)
      const configured = bashOptionsFromConfig(config.info).sandbox ?? { mode: "off" }
      // Plugin programs (formatters) get no allow-list proxy: a list of hosts leaves their network closed.
      const settings = Array.isArray(configured.network) ? { ...configured, network: false } : configured
      const detect = options.detect ?? (() => detectSandbox())
      return CommandRunner.of({
        run: Effect.fn("CommandRunner.run")(function* (file, args, runOptions = {}) {
          const cwd = runOptions.cwd ?? paths.root
          const prepared = yield* Effect.tryPromise({
            try: async () => {
              const choice = await chooseSandbox(settings, detect)
              if (choice.state !== "on") return undefined
              return prepareSandboxedRun(settings, choice, {
                root: paths.root,
                cwd: await realpath(cwd),
                tempDir: options.tempDir,
                truncationDir: options.truncationDir ?? truncationDir(paths.data),
                env
              })
            },
            catch: (error) => failure(file, error)
          })
          const result = yield* Effect.tryPromise({
            try: () =>
              spawnProgram({
                file,
                args,
                cwd,
                env: prepared ? { ...env, ...prepared.env } : env,
                timeoutMs: runOptions.timeoutMs ?? DEFAULT_RUN_TIMEOUT_MS,
                input: runOptions.input,
                wrap: prepared?.wrap,
                extraInputs: prepared?.extraInputs
              }),
            catch: (error) => failure(file, error)
          })
          // The sandbox's check of the protected paths: what it put back is told on stderr.
          const notes = prepared ? yield* Effect.promise(() => prepared.after()) : []
          return notes.length === 0 ? result : { ...result, stderr: `${result.stderr}${notes.join("\n")}\n` }
        })
      })
    })
  )
