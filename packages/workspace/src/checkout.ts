import { createHash, randomBytes } from "node:crypto"
import { copyFile, rename, rm, stat, utimes } from "node:fs/promises"
import { join } from "node:path"
import type { SafeGit } from "@lathe/core"
import { Effect } from "effect"
import { WorkspaceCloneError, WorkspaceGitError, WorkspaceRefNotFound } from "./errors.js"
import { git, prepareGit, redact, redactText, runGit } from "./git.js"

/** The hex SHA-256 of a patch; the hash of the empty patch stands for "no change since the base". */
export const hashPatch = (patch: Uint8Array): string => createHash("sha256").update(patch).digest("hex")

/** The hash of the empty patch (a tree equal to its base). */
export const emptyHash = hashPatch(new Uint8Array())

const fsStep = <A>(operation: string, run: () => Promise<A>): Effect.Effect<A, WorkspaceGitError> =>
  Effect.tryPromise({
    try: run,
    catch: (error) =>
      new WorkspaceGitError({
        operation,
        message: `Could not ${operation}: ${error instanceof Error ? error.message : String(error)}`
      })
  })

const exists = (path: string): Effect.Effect<boolean> =>
  Effect.promise(() =>
    stat(path).then(
      () => true,
      () => false
    )
  )

/** Removes a directory tree (no error when it is already gone). */
export const removeTree = (path: string): Effect.Effect<void, WorkspaceGitError> =>
  fsStep("remove a checkout", () => rm(path, { recursive: true, force: true }))

/** The checkpoint index: a private copy of the real index, so checkpoints never touch the user's index or HEAD. */
const checkpointIndex = (dir: string) => join(dir, ".git", "lathe-checkpoint-index")

/**
 * The cumulative change of the work tree against `base`: tracked edits, deletions, and untracked files that are
 * not ignored, as `git diff --binary` bytes. Stages into the private index (seeded from the real one the first
 * time, then kept, so unchanged files are not hashed again).
 */
export const currentPatch = (dir: string, base: string): Effect.Effect<Uint8Array, WorkspaceGitError> =>
  Effect.gen(function* () {
    const index = checkpointIndex(dir)
    const real = join(dir, ".git", "index")
    if (!(yield* exists(index)) && (yield* exists(real)))
      yield* fsStep("seed the checkpoint index", async () => {
        const before = await stat(real)
        await copyFile(real, `${index}.seed`)
        // The copy keeps the original's mtime. With a newer one, git would trust the stat data of entries written in
        // the same second as the index (its racy-entry check compares file and index times), and a same-size edit
        // made in that second would go unseen by the checkpoint.
        await utimes(`${index}.seed`, before.atime, before.mtime)
        await rename(`${index}.seed`, index)
      })
    const env = { GIT_INDEX_FILE: index }
    const safe = yield* prepareGit(dir, "stage the work tree for a checkpoint")
    yield* git(dir, "stage the work tree for a checkpoint", ["add", "-A", "--", "."], { env, safe })
    return yield* git(
      dir,
      "diff the work tree against its base",
      ["diff", "--cached", "--binary", "--no-color", "--no-ext-diff", "--no-textconv", "--no-renames", base, "--"],
      { env, safe }
    )
  })

/** Applies a patch (from `currentPatch`) to a work tree at its base. */
export const applyPatch = (dir: string, patch: Uint8Array, safe?: SafeGit): Effect.Effect<void, WorkspaceGitError> =>
  patch.length === 0
    ? Effect.void
    : Effect.asVoid(
        git(dir, "apply the newest checkpoint", ["apply", "--binary", "--whitespace=nowarn", "-"], {
          input: patch,
          ...(safe ? { safe } : {})
        })
      )

/**
 * Puts an existing checkout back at `base` plus `patch`: tracked files reset, untracked (not ignored) files
 * removed, the patch applied. Ignored files (dependencies, build output) stay.
 */
export const restore = (dir: string, base: string, patch: Uint8Array): Effect.Effect<void, WorkspaceGitError> =>
  Effect.gen(function* () {
    const safe = yield* prepareGit(dir, "reset the checkout to its base")
    yield* git(dir, "reset the checkout to its base", ["reset", "-q", "--hard", base, "--"], { safe })
    yield* git(dir, "remove files the checkpoint does not have", ["clean", "-q", "-f", "-d"], { safe })
    yield* fsStep("reset the checkpoint index", () => rm(checkpointIndex(dir), { force: true }))
    yield* applyPatch(dir, patch, safe)
  })

/** The commit HEAD of a checkout names, or `undefined` when `dir` is not a usable checkout. */
export const headOf = (dir: string): Effect.Effect<string | undefined> =>
  Effect.gen(function* () {
    if (!(yield* exists(join(dir, ".git")))) return undefined
    const result = yield* runGit(dir, ["rev-parse", "-q", "--verify", "HEAD^{commit}"])
    return result.code === 0 ? result.stdout.toString("utf8").trim() : undefined
  }).pipe(Effect.orElseSucceed(() => undefined))

const cloneFailure = (repo: string, stderr: string): WorkspaceCloneError => {
  const shown = redact(repo)
  const detail = redactText(stderr.trim().split("\n").filter(Boolean).at(-1) ?? "")
  const credentials =
    /terminal prompts disabled|could not read (username|password)|authentication failed|permission denied \(publickey/i
  return new WorkspaceCloneError({
    repo: shown,
    message: credentials.test(stderr)
      ? `Could not clone ${shown}: it needs credentials (private, or it does not exist) and Lathe never prompts. ` +
        "Give the runner access (a credential helper, a deploy key) or use a URL it can read."
      : `Could not clone ${shown}: ${detail || "git failed without a message"}. Check the URL or path.`
  })
}

/**
 * Clones `repo` without a checkout into a fresh hidden directory under `root` and returns it. A clone that fails
 * leaves nothing behind.
 */
export const cloneBare = (
  root: string,
  name: string,
  repo: string
): Effect.Effect<string, WorkspaceCloneError | WorkspaceGitError> =>
  Effect.gen(function* () {
    const tmp = join(root, `.${name}.clone-${randomBytes(4).toString("hex")}`)
    const result = yield* runGit(root, ["clone", "-q", "--no-checkout", "--", repo, tmp])
    if (result.code !== 0) {
      yield* removeTree(tmp)
      return yield* Effect.fail(cloneFailure(repo, result.stderr))
    }
    return tmp
  })

const commitOf = (dir: string, rev: string): Effect.Effect<string | undefined, WorkspaceGitError> =>
  runGit(dir, ["rev-parse", "-q", "--verify", "--end-of-options", `${rev}^{commit}`]).pipe(
    Effect.map((r) => (r.code === 0 ? r.stdout.toString("utf8").trim() : undefined))
  )

/**
 * The commit `ref` names in a fresh clone: the remote's HEAD when undefined, else a branch, a tag, a commit, or
 * (fetched on demand) any other ref the remote has. Fails naming the ref and the (redacted) repo.
 */
export const resolveRef = (
  dir: string,
  repo: string,
  ref: string | undefined
): Effect.Effect<string, WorkspaceRefNotFound | WorkspaceGitError> =>
  Effect.gen(function* () {
    const missing = (why: string) => new WorkspaceRefNotFound({ repo: redact(repo), ref: ref ?? "HEAD", message: why })
    if (ref === undefined) {
      const head = yield* commitOf(dir, "HEAD")
      if (head) return head
      return yield* Effect.fail(
        missing(`The repository ${redact(repo)} has no commits, so there is nothing to check out.`)
      )
    }
    for (const candidate of [`refs/remotes/origin/${ref}`, `refs/tags/${ref}`, ref]) {
      const commit = yield* commitOf(dir, candidate)
      if (commit) return commit
    }
    const fetched = yield* runGit(dir, ["fetch", "-q", "origin", "--", ref])
    const commit = fetched.code === 0 ? yield* commitOf(dir, "FETCH_HEAD") : undefined
    if (commit) return commit
    return yield* Effect.fail(
      missing(
        `The ref "${ref}" names no branch, tag or commit of ${redact(repo)}. Check the spelling, or push it first.`
      )
    )
  })

/** Checks out `base` (detached) in a clone made by `cloneBare`. */
export const checkoutBase = (dir: string, base: string): Effect.Effect<void, WorkspaceGitError> =>
  Effect.asVoid(git(dir, "check out the base commit", ["checkout", "-q", "--detach", base, "--"]))

/** Moves a finished clone into place, replacing whatever was at `target`. */
export const moveInto = (tmp: string, target: string): Effect.Effect<void, WorkspaceGitError> =>
  Effect.gen(function* () {
    yield* removeTree(target)
    yield* fsStep("move the clone into place", () => rename(tmp, target))
  })
