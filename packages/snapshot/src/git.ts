import {
  GIT_SAFE_OPTIONS,
  gitEnv,
  type ProcessHelper,
  runProcess,
  SnapshotError,
  startProcessHelper
} from "@lathe/core"
import { Duration, Effect, type Scope } from "effect"

/** What one git call returns once it has exited (a non-zero exit is a result, not a failure). */
export interface GitResult {
  readonly code: number
  readonly stdout: Buffer
  readonly stderr: string
}

/** One git call. */
export interface GitCall {
  /** The arguments after the global options. */
  readonly args: ReadonlyArray<string>
  /** Bytes written to git's stdin (then closed); stdin is empty when left out. */
  readonly input?: string | Buffer
  /** Extra environment variables for this call only. */
  readonly env?: Readonly<Record<string, string>>
  /** Wall-clock limit; past it the process is killed and the call fails. Default 60 s. */
  readonly timeout?: Duration.Input
}

/** How to reach git: the binary, the working directory, and options passed before every command. */
export interface GitTarget {
  /** The git binary (a name on PATH or an absolute path). */
  readonly binary: string
  /** The working directory of every call (the project root). */
  readonly cwd: string
  /** Global options such as `--git-dir`, `--work-tree`, `-c key=value` (see {@link hardenedTarget}). */
  readonly global: ReadonlyArray<string>
  /** Starts the calls instead of `runProcess` (see {@link withHelper}). */
  readonly helper?: ProcessHelper
}

/**
 * A target whose calls start with core's hardened options (`GIT_SAFE_OPTIONS`): no fsmonitor, hooks, pager,
 * editor… whatever a config says. Every call's environment is core's hardened `gitEnv` too (see {@link runGit}).
 */
export const hardenedTarget = (binary: string, cwd: string, global: ReadonlyArray<string> = []): GitTarget => ({
  binary,
  cwd,
  global: [...GIT_SAFE_OPTIONS, ...global]
})

/**
 * The environment of every call: core's hardened `gitEnv` (no `GIT_DIR`, `GIT_INDEX_FILE`… from ours), stable and
 * parseable messages, and no optional locks (no opportunistic index refresh).
 */
export const environment = (extra: Readonly<Record<string, string>> | undefined): Record<string, string> => ({
  ...gitEnv(),
  LC_ALL: "C",
  LANGUAGE: "C",
  GIT_OPTIONAL_LOCKS: "0",
  ...extra
})

/**
 * `target` with its calls started by a small long-lived shell (core's `startProcessHelper`) for as long as the scope:
 * a snapshot runs git several times per step, and each start from Lathe itself would be a fork of a process that
 * grows through a long session (its cost grows with it); the shell's fork stays cheap. The shell has the calls' fixed
 * environment; each call's own variables are set on top, so git sees what `runProcess` would give it.
 */
export const withHelper = (target: GitTarget): Effect.Effect<GitTarget, never, Scope.Scope> =>
  Effect.map(
    Effect.acquireRelease(
      Effect.sync(() => startProcessHelper({ env: environment(undefined) })),
      (helper) => Effect.sync(() => helper.close())
    ),
    (helper) => ({ ...target, helper })
  )

const failure = (operation: string, message: string) => new SnapshotError({ operation, message })

const timedOut = new WeakSet<SnapshotError>()

/** True for the error of a git call stopped at its time limit (retrying it would only wait that long again). */
export const isTimeout = (error: SnapshotError): boolean => timedOut.has(error)

/**
 * Runs git asynchronously (never blocking the event loop) through core's `runProcess`, or the target's helper shell
 * when it has one. Interrupting the effect, or passing the timeout, sends SIGTERM to git's process group (with the
 * helper: to git itself; git removes its lock files on it) and SIGKILL two seconds later if it is still running. Fails only when git cannot be started or is killed; inspect `code` for git's own
 * verdict.
 */
export const runGit = (
  target: GitTarget,
  operation: string,
  call: GitCall
): Effect.Effect<GitResult, SnapshotError> => {
  const timeout = Duration.fromInputUnsafe(call.timeout ?? "60 seconds")
  const run = Effect.tryPromise({
    try: (signal) => {
      const options = {
        file: target.binary,
        args: [...target.global, ...call.args],
        cwd: target.cwd,
        input: call.input ?? "",
        signal,
        killGraceMs: 2_000,
        maxOutputBytes: Number.POSITIVE_INFINITY,
        // The effect's own timeout below stops it first; this one only backs it up.
        timeoutMs: Duration.toMillis(timeout) + 5_000
      }
      return target.helper
        ? target.helper.run({ ...options, ...(call.env === undefined ? {} : { env: call.env }) })
        : runProcess({ ...options, env: environment(call.env) })
    },
    catch: (error) => {
      const code = (error as NodeJS.ErrnoException).code
      return failure(
        operation,
        code === "ENOENT"
          ? `Cannot run git: "${target.binary}" was not found. Install git (Debian: apt-get install git) to enable snapshots.`
          : `Cannot run git (${target.binary}): ${error instanceof Error ? error.message : String(error)}`
      )
    }
  }).pipe(
    Effect.flatMap((result) =>
      result.exitCode === null
        ? Effect.fail(failure(operation, `git ${call.args[0] ?? ""} was killed by ${result.signal ?? "a signal"}.`))
        : Effect.succeed({ code: result.exitCode, stdout: result.stdout, stderr: result.stderr.toString("utf8") })
    )
  )
  return run.pipe(
    Effect.timeoutOrElse({
      duration: timeout,
      orElse: () => {
        const error = failure(
          operation,
          `git ${call.args[0] ?? ""} did not finish within ${Duration.format(timeout)} and was stopped. ` +
            "The project may be too large to snapshot; add build outputs and dependencies to .gitignore."
        )
        timedOut.add(error)
        return Effect.fail(error)
      }
    })
  )
}

/** Runs git and fails with git's own message when it exits non-zero. */
export const git = (target: GitTarget, operation: string, call: GitCall): Effect.Effect<Buffer, SnapshotError> =>
  Effect.flatMap(runGit(target, operation, call), (result) =>
    result.code === 0
      ? Effect.succeed(result.stdout)
      : Effect.fail(
          failure(
            operation,
            `git ${call.args.join(" ").slice(0, 200)} failed (exit ${result.code}): ${result.stderr.trim()}`
          )
        )
  )

/** Groups `-z` output fields two by two (`status\0path\0`, `meta\0path\0`). */
export const pairs = (fields: ReadonlyArray<string>): Array<readonly [string, string]> => {
  const out: Array<readonly [string, string]> = []
  for (let i = 0; i + 1 < fields.length; i += 2) out.push([fields[i] ?? "", fields[i + 1] ?? ""])
  return out
}

/** Splits NUL-terminated git output into strings, dropping the empty tail. */
export const splitNul = (output: Buffer): Array<string> =>
  output
    .toString("utf8")
    .split("\0")
    .filter((s) => s !== "")
