import { prepareSafeGit } from "./git-safe.js"
import { type ProcessResult, runProcess } from "./run-process.js"

/** How {@link runSafeGit} runs one git command. */
export interface SafeGitRunOptions {
  /** The git binary. Default "git". */
  readonly binary?: string
  /** Options before the hardened ones (`--git-dir`, `--work-tree`…); the config is read the way they make git read it. */
  readonly global?: ReadonlyArray<string>
  /** The whole call, reading the config included, is stopped (its process group killed) after this long. Default 60 s. */
  readonly timeoutMs?: number
  /** Stops the call when aborted. */
  readonly signal?: AbortSignal
  /** Written to git's stdin, which is then closed. */
  readonly input?: string | Uint8Array
  /** Variables set for this call only, after the hardened environment (`LC_ALL: "C"`…). */
  readonly env?: Readonly<Record<string, string>>
  /** Bytes of output kept per stream (default: `runProcess`'s 4 MiB). */
  readonly maxOutputBytes?: number
}

/**
 * Runs `git <hardened options> <args>` in `cwd` through {@link runProcess}, with the hardened environment (`gitEnv`:
 * no `GIT_DIR`, `GIT_CONFIG_PARAMETERS`… from this process's environment) and every program the repository's config
 * names switched off (`prepareSafeGit`). A non-zero exit is a result; rejects when git cannot be started or the
 * config cannot be made safe (`GitConfigRefused`).
 */
export const runSafeGit = async (
  cwd: string,
  args: ReadonlyArray<string>,
  options: SafeGitRunOptions = {}
): Promise<ProcessResult> => {
  const started = Date.now()
  const timeoutMs = options.timeoutMs ?? 60_000
  const binary = options.binary ?? "git"
  const global = options.global ?? []
  const safe = await prepareSafeGit(cwd, { binary, global, timeoutMs })
  return runProcess({
    file: binary,
    args: [...global, ...safe.options, ...args],
    cwd,
    env: { ...safe.env, ...options.env },
    timeoutMs: Math.max(1, timeoutMs - (Date.now() - started)),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
    ...(options.input === undefined ? {} : { input: options.input }),
    ...(options.maxOutputBytes === undefined ? {} : { maxOutputBytes: options.maxOutputBytes })
  })
}
