import { existsSync } from "node:fs"
import { copyFile, mkdir, readdir, readFile, rename, rm, stat, utimes, writeFile } from "node:fs/promises"
import { isAbsolute, join, relative, resolve, sep } from "node:path"
import { prepareSafeGit, SnapshotError, sha1Hex } from "@lathe/core"
import { Effect } from "effect"
import { type GitTarget, git, hardenedTarget, runGit } from "./git.js"

/** The user's own repository, read (never written) to seed the first snapshot. */
export interface UserRepo {
  /** The work tree's git dir (holds the index); may differ from `commonDir` in a linked worktree. */
  readonly gitDir: string
  /** The git dir that holds `objects/`. */
  readonly commonDir: string
}

/** Everything one project's shadow repository needs. */
export interface Shadow {
  /** The project root: the work tree of every snapshot. */
  readonly root: string
  /** The work tree's own bare repository that only Lathe writes (see {@link shadowLocation}). */
  readonly gitDir: string
  /** Object stores read besides the user's: the shadow this project used before shadows were kept per tree. */
  readonly borrowed: ReadonlyArray<string>
  /** Git with `--git-dir`/`--work-tree` and the settings every call needs. */
  readonly target: GitTarget
  /** The user's repository when the root is the top of one. */
  readonly user: UserRepo | undefined
  /** Root-relative paths never snapshotted (Lathe's own data dir when it lives inside the project). */
  readonly excluded: ReadonlyArray<string>
}

/** Settings for every call: no line-ending conversion, real symlinks, raw UTF-8 paths, no fsmonitor hook, no auto gc. */
const settings = [
  "core.autocrlf=false",
  "core.safecrlf=false",
  "core.symlinks=true",
  "core.filemode=true",
  "core.quotepath=false",
  "core.fsmonitor=false",
  "core.hooksPath=/dev/null",
  "gc.auto=0"
]

const fail = (operation: string, message: string) => new SnapshotError({ operation, message })

const tryIO = <A>(operation: string, what: string, io: () => Promise<A>) =>
  Effect.tryPromise({
    try: io,
    catch: (error) => fail(operation, `${what}: ${error instanceof Error ? error.message : String(error)}`)
  })

// Checked before every snapshot: synchronous (see lock.ts's `tryCreate`).
const exists = (path: string) => Effect.sync(() => existsSync(path))

/**
 * Finds the user's repository when `root` is the top of its work tree, with read-only `rev-parse` (no index
 * refresh, no lock). A folder outside git, or inside a repository whose top is elsewhere, gives `undefined`.
 */
export const findUserRepo = Effect.fn("SnapshotGit.findUserRepo")(function* (binary: string, root: string) {
  const target = hardenedTarget(binary, root)
  const result = yield* runGit(target, "track", {
    args: ["rev-parse", "--absolute-git-dir", "--git-common-dir", "--show-toplevel"],
    timeout: "10 seconds"
  })
  if (result.code !== 0) return undefined
  const [gitDir, common, top] = result.stdout.toString("utf8").split("\n")
  if (!gitDir || !common || !top || resolve(top) !== resolve(root)) return undefined
  return { gitDir, commonDir: isAbsolute(common) ? common : resolve(root, common) } satisfies UserRepo
})

/**
 * Where the shadow repository of the work tree `root` lives: one per work tree, `<data>/snapshot/<projectID>.<key>`
 * (clones and worktrees of one repository share the project id, and one shadow index serving two trees would mix
 * their files). The shadow a project had before shadows were kept per tree, `<data>/snapshot/<projectID>`, stays
 * the shadow of the tree it recorded (`lathe-root`), so that tree's stored snapshots keep working; another tree gets
 * its own shadow, which reads the old one's objects too, so its sessions stored before keep their snapshots.
 */
export const shadowLocation = Effect.fn("SnapshotGit.shadowLocation")(function* (
  data: string,
  projectID: string,
  root: string
) {
  const legacy = join(data, "snapshot", projectID)
  const recorded = yield* Effect.promise(() => readFile(join(legacy, "lathe-root"), "utf8").catch(() => undefined))
  if (recorded === root) return { gitDir: legacy, borrowed: [] as ReadonlyArray<string> }
  const gitDir = join(data, "snapshot", `${projectID}.${sha1Hex(root).slice(0, 16)}`)
  const objects = join(legacy, "objects")
  return { gitDir, borrowed: (yield* exists(objects)) ? [objects] : [] }
})

/** Describes the shadow repository of a work tree (nothing is created yet). */
export const describeShadow = (options: {
  readonly binary: string
  readonly root: string
  readonly data: string
  /** Where it lives and what it reads besides ({@link shadowLocation}). */
  readonly location: { readonly gitDir: string; readonly borrowed: ReadonlyArray<string> }
  readonly user: UserRepo | undefined
}): Shadow => {
  const gitDir = options.location.gitDir
  const inside = relative(options.root, options.data)
  const excluded = inside !== "" && !inside.startsWith(`..${sep}`) && inside !== ".." && !isAbsolute(inside)
  return {
    root: options.root,
    gitDir,
    borrowed: options.location.borrowed,
    user: options.user,
    excluded: excluded ? [inside.split(sep).join("/")] : [],
    target: hardenedTarget(options.binary, options.root, [
      ...settings.flatMap((s) => ["-c", s]),
      "--git-dir",
      gitDir,
      "--work-tree",
      options.root
    ])
  }
}

/**
 * The shadow with every program driver the config it reads names switched off (`filter.<driver>.clean`, …: the
 * work tree's `.gitattributes` picks drivers by name, and a snapshot stores the bytes on disk, never a filter's
 * output). Reads the shadow's config the way its calls do (its own, then the person's global and system files;
 * never the project's `.git/config`). Call once the shadow exists.
 */
export const hardenShadow = Effect.fn("SnapshotGit.hardenShadow")(function* (shadow: Shadow) {
  const safe = yield* Effect.tryPromise({
    try: () => prepareSafeGit(shadow.root, { binary: shadow.target.binary, global: ["--git-dir", shadow.gitDir] }),
    catch: (error) => fail("track", error instanceof Error ? error.message : String(error))
  })
  // The driver overrides go after the fixed options and the shadow's own settings: the last `-c` of a key wins.
  return {
    ...shadow,
    target: { ...shadow.target, global: [...shadow.target.global, ...safe.options] }
  } satisfies Shadow
})

/** Escapes a literal path for a gitignore line anchored at the top. */
const ignoreLine = (path: string) => `/${path.replace(/[\\*?[\]!#]/g, (c) => `\\${c}`).replace(/ $/, "\\ ")}/`

/** The shadow's `info/exclude`: the user's own `info/exclude`, then Lathe's data dir when it is inside the work tree. */
const writeExcludes = Effect.fnUntraced(function* (shadow: Shadow) {
  const user = shadow.user
  const own = user
    ? yield* Effect.promise(() => readFile(join(user.commonDir, "info", "exclude"), "utf8").catch(() => ""))
    : ""
  const lines = [own.trimEnd(), "# Lathe's own data", ...shadow.excluded.map(ignoreLine)].filter(Boolean)
  yield* tryIO("track", "Cannot write the snapshot excludes", async () => {
    await mkdir(join(shadow.gitDir, "info"), { recursive: true })
    await writeFile(join(shadow.gitDir, "info", "exclude"), `${lines.join("\n")}\n`)
  })
})

/** Whether the shadow repository looks whole enough for git to open it. */
const looksWhole = (shadow: Shadow) =>
  Effect.map(
    Effect.all([
      exists(join(shadow.gitDir, "HEAD")),
      exists(join(shadow.gitDir, "config")),
      exists(join(shadow.gitDir, "objects"))
    ]),
    (found) => found.every(Boolean)
  )

/**
 * Makes sure the shadow repository exists and is whole, (re)creating it when it is missing or broken, and
 * points its object store at the user's (alternates) so files already in their history are not stored twice, and at
 * the project's shadow from before shadows were kept per tree (`borrowed`) so its snapshots stay readable.
 */
export const ensureShadow = Effect.fn("SnapshotGit.ensureShadow")(function* (shadow: Shadow, recreate = false) {
  if (!recreate && (yield* looksWhole(shadow))) return
  yield* tryIO("track", `Cannot create the snapshot repository at ${shadow.gitDir}`, async () => {
    await rm(shadow.gitDir, { recursive: true, force: true })
    await mkdir(shadow.gitDir, { recursive: true })
  })
  const bare = hardenedTarget(shadow.target.binary, shadow.gitDir)
  yield* git(bare, "track", { args: ["init", "--quiet", "--bare", shadow.gitDir] })
  for (const setting of settings) {
    const [key, value] = setting.split("=") as [string, string]
    yield* git(bare, "track", { args: ["--git-dir", shadow.gitDir, "config", key, value] })
  }
  const alternates = [...(shadow.user ? [join(shadow.user.commonDir, "objects")] : []), ...shadow.borrowed]
  if (alternates.length > 0) {
    yield* tryIO("track", "Cannot link the project's object store", () =>
      writeFile(join(shadow.gitDir, "objects", "info", "alternates"), `${alternates.join("\n")}\n`)
    )
  }
  yield* tryIO("track", "Cannot record the project root", () =>
    writeFile(join(shadow.gitDir, "lathe-root"), shadow.root)
  )
  yield* writeExcludes(shadow)
})

/** Refreshes `info/exclude` (the user's may have changed since the repository was created). */
export const refreshExcludes = writeExcludes

/**
 * Seeds an empty shadow index from the user's index (a copy, read without a lock; git replaces its index by
 * rename, so the copy is whole). Its stat data lets the first snapshot skip re-hashing every tracked file.
 * Skipped for a split index, whose entries live in other files. Returns whether it seeded.
 */
export const seedIndex = Effect.fn("SnapshotGit.seedIndex")(function* (shadow: Shadow) {
  const user = shadow.user
  const index = join(shadow.gitDir, "index")
  if (!user || (yield* exists(index))) return false
  const source = join(user.gitDir, "index")
  const split = yield* Effect.promise(() =>
    readdir(user.gitDir).then(
      (names) => names.some((name) => name.startsWith("sharedindex.")),
      () => true
    )
  )
  if (split) return false
  return yield* Effect.promise(async () => {
    try {
      const before = await stat(source)
      await copyFile(source, `${index}.seed`)
      // Same mtime as the original, so git's racy-entry check behaves as it does in the user's repository.
      await utimes(`${index}.seed`, before.atime, before.mtime)
      await rename(`${index}.seed`, index)
      return true
    } catch {
      await rm(`${index}.seed`, { force: true })
      return false
    }
  })
})

/** Drops the shadow index (and temp indexes): the next snapshot rebuilds it, from the user's index when it can. */
export const dropIndex = (shadow: Shadow) =>
  Effect.promise(() =>
    Promise.all(
      ["index", "index.lock", "lathe-checkout.index", "lathe-checkout.index.lock"].map((name) =>
        rm(join(shadow.gitDir, name), { force: true })
      )
    )
  )
