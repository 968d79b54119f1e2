import { join } from "node:path"
import { GIT_SAFE_TRANSPORT, gitEnv, prepareSafeGit, runProcess, type SafeGit } from "@lathe/core"
import { Effect } from "effect"
import { WorkspaceGitError, WorkspaceInvalid } from "./errors.js"

/** What a finished git process gave back; a non-zero `code` is git's verdict, not a failure of the call. */
export interface GitOutput {
  readonly code: number
  readonly stdout: Buffer
  readonly stderr: string
}

/**
 * Options before every git command. Transports that run arbitrary commands (`ext::`, `fd::`) are off; output
 * formats that user config could change (prefixes, colour, external diff drivers, CRLF conversion) are pinned, so
 * a patch made on one runner applies byte for byte on another.
 */
export const safeOptions: ReadonlyArray<string> = [
  "-c",
  "protocol.ext.allow=never",
  "-c",
  "protocol.fd.allow=never",
  "-c",
  "core.autocrlf=false",
  "-c",
  "core.quotePath=true",
  "-c",
  "diff.noprefix=false",
  "-c",
  "diff.mnemonicPrefix=false",
  "-c",
  "advice.detachedHead=false",
  "-c",
  "gc.auto=0"
]

/**
 * The environment of every git call: core's hardened `gitEnv` (ours without the `GIT_*` variables that redirect git,
 * programs git takes from variables switched off), stable messages, and never a prompt.
 */
const environment = (extra: Readonly<Record<string, string>>): Record<string, string> => {
  const env = gitEnv()
  return {
    ...env,
    LC_ALL: "C",
    LANGUAGE: "C",
    // A private repository must fail at once with a message, never wait for a password nobody will type.
    GIT_SSH_COMMAND: env.GIT_SSH_COMMAND ?? "ssh -o BatchMode=yes",
    ...extra
  }
}

/** Commands that reach the remote: they run git's own upload-pack whatever `remote.<name>.uploadpack` says. */
const REMOTE_COMMANDS = new Set(["clone", "fetch", "ls-remote"])

/**
 * Runs `git <core's hardened options> <safeOptions> <args>` in `cwd`: the checkout's config is read first (key names
 * only), so no program it names runs (core's `prepareSafeGit`; an agent can write a checkout's `.git/config`). Fails
 * only when git cannot be started, dies from a signal, or the config cannot be made safe; an interrupted call kills
 * the process.
 */
export const runGit = (
  cwd: string,
  args: ReadonlyArray<string>,
  options: GitCallOptions = {}
): Effect.Effect<GitOutput, WorkspaceGitError> =>
  Effect.flatMap(options.safe ? Effect.succeed(options.safe) : prepareGit(cwd, args[0] ?? "git"), (safe) =>
    spawnGit(
      cwd,
      args[0] ?? "git",
      [...pinned(cwd, args), ...safe.options, ...safeOptions, ...withTransport(args)],
      { ...safe.env, ...options.env },
      options.input
    )
  )

/** Options of one git call. */
export interface GitCallOptions {
  readonly env?: Readonly<Record<string, string>>
  readonly input?: Uint8Array
  /**
   * Hardened options already read for `cwd` ({@link prepareGit}): a sequence of Lathe's own calls (stage then diff,
   * reset then clean then apply) reads the checkout's config once, since nothing between them changes it.
   */
  readonly safe?: SafeGit
}

/** Reads the checkout's config (key names only) once: the hardened options for the git calls that follow in `cwd`. */
export const prepareGit = (cwd: string, operation = "git"): Effect.Effect<SafeGit, WorkspaceGitError> =>
  Effect.tryPromise({
    try: () => prepareSafeGit(cwd, { env: environment({}) }),
    catch: (error) =>
      new WorkspaceGitError({ operation, message: error instanceof Error ? error.message : String(error) })
  })

/**
 * Every call but a clone runs in a checkout's top: its `.git` and that folder are named, so a `core.worktree` or
 * `core.bare` written into the checkout's config (an agent can write it) never points a reset or a clean elsewhere.
 */
const pinned = (cwd: string, args: ReadonlyArray<string>): ReadonlyArray<string> =>
  args[0] === "clone" ? [] : ["--git-dir", join(cwd, ".git"), "--work-tree", cwd]

/** `args` with {@link GIT_SAFE_TRANSPORT} after the subcommand when it reaches a remote. */
const withTransport = (args: ReadonlyArray<string>): ReadonlyArray<string> =>
  REMOTE_COMMANDS.has(args[0] ?? "") ? [args[0] ?? "", ...GIT_SAFE_TRANSPORT, ...args.slice(1)] : args

/** One git process through core's `runProcess`, no time limit (a clone takes what it takes); interrupting kills it. */
const spawnGit = (
  cwd: string,
  operation: string,
  args: ReadonlyArray<string>,
  env: Record<string, string>,
  input: Uint8Array | undefined
): Effect.Effect<GitOutput, WorkspaceGitError> =>
  Effect.tryPromise({
    try: (signal) =>
      runProcess({
        file: "git",
        args,
        cwd,
        env,
        input: input ?? "",
        signal,
        killGraceMs: 0,
        timeoutMs: Number.POSITIVE_INFINITY,
        maxOutputBytes: Number.POSITIVE_INFINITY
      }),
    catch: (error) =>
      new WorkspaceGitError({
        operation,
        message:
          (error as NodeJS.ErrnoException).code === "ENOENT"
            ? "git was not found on PATH. Install it (Debian: apt-get install git) to use workspaces."
            : `git could not be started: ${error instanceof Error ? error.message : String(error)}`
      })
  }).pipe(
    Effect.flatMap((result) =>
      result.exitCode === null
        ? Effect.fail(
            new WorkspaceGitError({ operation, message: `git was killed by ${result.signal ?? "a signal"}.` })
          )
        : Effect.succeed({ code: result.exitCode, stdout: result.stdout, stderr: result.stderr.toString("utf8") })
    )
  )

/** Runs git and fails with its (redacted) message when it exits non-zero; returns stdout. */
export const git = (
  cwd: string,
  operation: string,
  args: ReadonlyArray<string>,
  options: GitCallOptions = {}
): Effect.Effect<Buffer, WorkspaceGitError> =>
  Effect.flatMap(runGit(cwd, args, options), (result) =>
    result.code === 0
      ? Effect.succeed(result.stdout)
      : Effect.fail(
          new WorkspaceGitError({
            operation,
            message: `Could not ${operation}: git ${args[0] ?? ""} exited with ${result.code}: ${redactText(result.stderr.trim())}`
          })
        )
  )

/** A URL with its user info replaced by `***` (`https://***@host/x`); other strings unchanged. */
export const redact = (repo: string): string => repo.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@]*@/i, "$1***@")

/** Every URL's user info in a text (git's stderr) replaced by `***`. */
export const redactText = (text: string): string => text.replace(/([a-z][a-z0-9+.-]*:\/\/)[^/@\s]*@/gi, "$1***@")

/** Whether a text holds ASCII control characters (never part of a URL, a path or a ref). */
const hasControl = (text: string): boolean => [...text].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f)

/**
 * Refuses what could make git run something other than a clone of a repository: a value read as an option,
 * command transports, control characters. Returns the repo unchanged when it is acceptable.
 */
export const checkRepo = (repo: string): Effect.Effect<string, WorkspaceInvalid> => {
  if (repo.trim() === "")
    return Effect.fail(
      new WorkspaceInvalid({ message: "The workspace repo is empty: give a git URL or a local path." })
    )
  if (repo.startsWith("-"))
    return Effect.fail(
      new WorkspaceInvalid({
        message: `The workspace repo "${redact(repo)}" starts with "-": give a git URL or a path.`
      })
    )
  if (/^(ext|fd)::/i.test(repo) || /^[a-z0-9+.-]+::/i.test(repo))
    return Effect.fail(
      new WorkspaceInvalid({
        message: `The workspace repo "${redact(repo)}" uses a remote-helper transport ("<helper>::"), which is refused: use https, ssh, git, file or a path.`
      })
    )
  if (hasControl(repo))
    return Effect.fail(new WorkspaceInvalid({ message: "The workspace repo contains control characters." }))
  return Effect.succeed(repo)
}

/** Refuses refs git could read as an option or that no branch, tag or commit could be named. */
export const checkRef = (ref: string | undefined): Effect.Effect<string | undefined, WorkspaceInvalid> => {
  if (ref === undefined) return Effect.succeed(undefined)
  if (ref.startsWith("-"))
    return Effect.fail(
      new WorkspaceInvalid({ message: `The ref "${ref}" starts with "-": name a branch, tag or commit.` })
    )
  if (ref === "" || hasControl(ref) || /[\s~^:?*[\\]/.test(ref) || ref.includes(".."))
    return Effect.fail(new WorkspaceInvalid({ message: `The ref "${ref}" is not a valid branch, tag or commit name.` }))
  return Effect.succeed(ref)
}
