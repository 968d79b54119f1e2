import { stat } from "node:fs/promises"
import { join, parse } from "node:path"
import { Config, Paths, Snapshot, SnapshotError, type SnapshotPatch } from "@lathe/core"
import { Effect, Layer, Ref, Result, Scope, Semaphore } from "effect"
import { applyFiles, checkPaths } from "./apply.js"
import { changes, checkHash, fullDiff, lineCounts, unified } from "./diff.js"
import { gcDue, prune } from "./gc.js"
import { git, hardenedTarget, isTimeout, withHelper } from "./git.js"
import { type LockOptions, withLock } from "./lock.js"
import { makeObjectReader } from "./object-reader.js"
import {
  describeShadow,
  dropIndex,
  ensureShadow,
  findUserRepo,
  hardenShadow,
  refreshExcludes,
  seedIndex,
  shadowLocation
} from "./shadow-repo.js"
import { defaultLimits, type Limits, treeMemo, treeWithoutGit, writeTree } from "./track.js"
import { makeWatch, type WatchView, whyNoWatch } from "./watch.js"

/** How the git-backed layer runs; every field has a production default. */
export interface SnapshotGitOptions {
  /** The git binary. Default `"git"` from PATH. */
  readonly binary?: string
  /** Waiting for another session's snapshot. */
  readonly lock?: LockOptions
  /**
   * Watch the work tree's folders so that snapshots name only what changed (see `watch.ts`; Linux, local file
   * systems). Default: on, unless `LATHE_SNAPSHOT_WATCH=0` is in the environment.
   */
  readonly watch?: boolean
}

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`

const list = (paths: ReadonlyArray<string>, max = 10) =>
  paths.slice(0, max).join(", ") + (paths.length > max ? ` and ${paths.length - max} more` : "")

/** Why snapshots cannot run for this project, or `undefined` when they can. */
const whyOff = Effect.fnUntraced(function* (binary: string, root: string, home: string, setting: unknown) {
  if (setting === false) return "`snapshot: false` in config"
  const version = yield* Effect.result(git(hardenedTarget(binary, root), "track", { args: ["--version"] }))
  if (Result.isFailure(version)) return version.failure.message
  const info = yield* Effect.promise(() => stat(root).catch(() => undefined))
  if (!info?.isDirectory()) return `the project root ${root} is not a directory`
  if (root === parse(root).root || root === home)
    return `the project root ${root} is the filesystem root or your home directory; start Lathe in a project folder`
  return undefined
})

const make = (options: SnapshotGitOptions) =>
  Effect.gen(function* () {
    const paths = yield* Paths
    const config = yield* Config
    const disabled = yield* Effect.provide(
      Effect.gen(function* () {
        return yield* Snapshot
      }),
      Snapshot.disabled
    )
    const off = (why: string) =>
      Effect.as(Effect.logWarning(`Snapshots are off: ${why}. Undo and redo are unavailable.`), disabled)
    const binary = options.binary ?? "git"
    const setting = config.info.snapshot
    const reason = yield* whyOff(binary, paths.root, paths.home, setting)
    if (reason !== undefined) return yield* off(reason)
    const limits: Limits = {
      maxFileSize: (setting || undefined)?.max_file_size ?? defaultLimits.maxFileSize,
      maxSnapshotSize: (setting || undefined)?.max_snapshot_size ?? defaultLimits.maxSnapshotSize
    }
    const user = yield* Effect.orElseSucceed(findUserRepo(binary, paths.root), () => undefined)
    const location = yield* shadowLocation(paths.data, paths.projectID, paths.root)
    const described = describeShadow({ binary, root: paths.root, data: paths.data, location, user })
    const semaphore = yield* Semaphore.make(1)
    const locked = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      semaphore.withPermit(withLock(described.gitDir, effect, options.lock))
    const ready = yield* Effect.result(
      locked(
        Effect.andThen(ensureShadow(described), Effect.andThen(refreshExcludes(described), hardenShadow(described)))
      )
    )
    if (Result.isFailure(ready)) return yield* off(ready.failure.message)
    const shadow = { ...ready.success, target: yield* withHelper(ready.success.target) }
    // Reads that need no lock (a diff of two recorded trees) go through a second shell, so they can run while the
    // next snapshot holds the first (a step's line counts beside the next step's snapshot).
    const reader = { ...shadow, target: yield* withHelper(ready.success.target) }

    const scope = yield* Effect.scope
    const lastSkipped = yield* Ref.make("")
    const watch =
      (options.watch ?? true) && whyNoWatch(shadow.root, process.env) === undefined
        ? makeWatch(shadow.root, join(shadow.gitDir, "watch-cookies"))
        : undefined
    if (watch) yield* Effect.addFinalizer(() => Effect.sync(watch.close))
    // With the watch, snapshots of files the last tree has are written without git; the tree's folders that are not
    // loose objects are read through one long-lived `git cat-file --batch`, started when first needed.
    const objects = watch ? makeObjectReader(shadow.target) : undefined
    if (objects) yield* Effect.addFinalizer(() => Effect.sync(objects.close))
    const memo = treeMemo(objects)
    /**
     * Watches the folders (again) once a scan has recorded the tree, off the snapshot's path; then, when folders were
     * added (the window after them is a scan), takes that scan at once, so that the next step's snapshot can use the
     * watch instead of scanning on its way (~90 ms at 50,000 files).
     */
    const walkIfWanted: Effect.Effect<void> = Effect.suspend(() =>
      watch?.wantsWalk()
        ? Effect.asVoid(
            Effect.forkIn(
              Effect.flatMap(watch.walk(reader.target), (scan) =>
                scan ? Effect.ignore(locked(attempt(0))) : Effect.void
              ),
              scope
            )
          )
        : Effect.void
    )

    /** One snapshot; a failed attempt drops the index, then re-creates the repository, before giving up. */
    const attempt = (
      round: number,
      settled?: WatchView,
      asOf?: number
    ): Effect.Effect<string | undefined, SnapshotError> =>
      Effect.gen(function* () {
        if (round === 1) yield* dropIndex(shadow)
        yield* ensureShadow(shadow, round === 2)
        if (round === 0) yield* seedIndex(shadow)
        const result = yield* writeTree(
          shadow,
          limits,
          memo,
          round === 0 ? watch : undefined,
          round === 0 ? settled : undefined,
          asOf
        )
        yield* walkIfWanted
        if (result._tag === "TooLarge") {
          yield* Effect.logWarning(
            `Snapshot skipped: the changes hold ${mib(result.bytes)}, over snapshot.max_snapshot_size ` +
              `(${mib(limits.maxSnapshotSize)}); biggest: ${list(result.largest)}. Add them to .gitignore or raise the cap. ` +
              "This step cannot be undone."
          )
          return undefined
        }
        const skipped = list(result.skipped)
        if ((yield* Ref.getAndSet(lastSkipped, skipped)) !== skipped && result.skipped.length > 0)
          yield* Effect.logWarning(
            `Snapshots leave out ${result.skipped.length} file(s) over snapshot.max_file_size ` +
              `(${mib(limits.maxFileSize)}): ${skipped}. Undo will not restore them.`
          )
        return result.hash
      }).pipe(
        Effect.catch((error: SnapshotError) =>
          round >= 2 || isTimeout(error)
            ? Effect.fail(error)
            : Effect.andThen(
                Effect.logWarning(`Snapshot repository needed repair (${error.message}); retrying.`),
                attempt(round + 1)
              )
        )
      )

    const housekeeping = Effect.gen(function* () {
      if (!(yield* gcDue(shadow))) return
      yield* Effect.forkIn(
        locked(prune(shadow)).pipe(
          Effect.catch((error) => Effect.logWarning(`Snapshot housekeeping failed: ${error.message}`))
        ),
        scope
      )
    })

    /** The current tree, or a failure naming why it could not be taken (for operations that need one). */
    const current = (operation: string) =>
      Effect.flatMap(attempt(0), (hash) =>
        hash === undefined
          ? Effect.fail(
              new SnapshotError({
                operation,
                message: "The work tree is over snapshot.max_snapshot_size, so it cannot be compared; see the warning."
              })
            )
          : Effect.succeed(hash)
      )

    /** On the hot path the hash is checked only when git fails, to replace git's message with a clear one. */
    const explained = <A>(operation: string, hash: string, effect: Effect.Effect<A, SnapshotError>) =>
      Effect.catch(effect, (error) => Effect.andThen(checkHash(shadow, operation, hash), Effect.fail(error)))

    /**
     * With the watch, the window is settled first, holding this process's permit only: when nothing changed, or only
     * files the last tree has, the tree is written without git and without the lock file (`treeWithoutGit`: an edit
     * step's two snapshots, each a lock file made and removed, four file checks and three removals before). Else the
     * lock is taken and git writes it with that window's paths. `asOf`: see `writeTree`.
     */
    const trackAsOf = (asOf: number | undefined) =>
      Effect.gen(function* () {
        const hash = yield* semaphore.withPermit(
          Effect.gen(function* () {
            if (!watch) return yield* withLock(described.gitDir, attempt(0, undefined, asOf), options.lock)
            const view = yield* watch.settle
            // The window is spent: if this snapshot fails or is interrupted from here on (the lock held too long by
            // another Lathe, say), what it saw must not be lost, so the next one scans everything.
            return yield* Effect.onError(
              Effect.gen(function* () {
                const quick = yield* treeWithoutGit(shadow, limits, memo, view, asOf)
                if (quick !== undefined) {
                  yield* walkIfWanted
                  return quick.hash
                }
                return yield* withLock(described.gitDir, attempt(0, view, asOf), options.lock)
              }),
              () =>
                Effect.sync(() => {
                  memo.last = undefined
                })
            )
          })
        )
        yield* housekeeping
        return hash
      })
    const track = Effect.fn("Snapshot.track")(function* () {
      return yield* trackAsOf(undefined)
    })
    // Files' times are the kernel's clock only on a local file system (a network one stamps them with its server's,
    // which may run ahead): elsewhere the tree after a step is recorded as `track` records it.
    let localTimes: boolean | undefined
    const trackEnded = Effect.fn("Snapshot.trackEnded")(function* (endedAt: number) {
      localTimes ??= whyNoWatch(shadow.root, process.env) === undefined
      return yield* trackAsOf(localTimes ? endedAt : undefined)
    })

    const patch = Effect.fn("Snapshot.patch")(function* (hash: string, to?: string) {
      const now = to ?? (yield* locked(current("patch")))
      if (now === hash) return { hash, files: [], after: now, lines: [] } satisfies SnapshotPatch
      // Both trees are recorded (and young, so housekeeping keeps them): their diff needs no lock.
      const lines = yield* explained("patch", hash, lineCounts(reader, hash, now))
      return { hash, files: lines.map((c) => c.file), after: now, lines } satisfies SnapshotPatch
    })

    const diff = Effect.fn("Snapshot.diff")(function* (hash: string, to?: string) {
      if (to !== undefined)
        // Two recorded snapshots, as diffFull reads them: both hashes checked first, under the lock (housekeeping).
        return yield* locked(
          Effect.gen(function* () {
            yield* checkHash(shadow, "diff", hash)
            yield* checkHash(shadow, "diff", to)
            return yield* unified(shadow, hash, to)
          })
        )
      return yield* locked(
        Effect.gen(function* () {
          return yield* explained("diff", hash, unified(shadow, hash, yield* current("diff")))
        })
      )
    })

    const diffFull = Effect.fn("Snapshot.diffFull")(function* (from: string, to: string) {
      return yield* locked(
        Effect.gen(function* () {
          yield* checkHash(shadow, "diff", from)
          yield* checkHash(shadow, "diff", to)
          return yield* fullDiff(shadow, from, to)
        })
      )
    })

    const restore = Effect.fn("Snapshot.restore")(function* (hash: string) {
      yield* locked(
        Effect.gen(function* () {
          yield* checkHash(shadow, "restore", hash)
          const now = yield* current("restore")
          const changed = yield* changes(shadow, now, hash)
          yield* applyFiles(
            shadow,
            "restore",
            hash,
            changed.map((c) => c.path)
          )
        })
      )
    })

    const revert = Effect.fn("Snapshot.revert")(function* (patches: ReadonlyArray<SnapshotPatch>) {
      yield* checkPaths(
        "revert",
        patches.flatMap((p) => p.files)
      )
      yield* locked(
        Effect.gen(function* () {
          for (const hash of new Set(patches.map((p) => p.hash))) yield* checkHash(shadow, "revert", hash)
          const done = new Set<string>()
          for (const p of patches) {
            const files = p.files.filter((file) => !done.has(file))
            for (const file of files) done.add(file)
            yield* applyFiles(shadow, "revert", p.hash, files)
          }
        })
      )
    })

    return Snapshot.of({ track: track(), trackEnded, patch, diff, diffFull, restore, revert })
  })

/** Builds the real service on the first call of any method, in the layer's scope, and delegates to it. */
const lazy = (options: SnapshotGitOptions) =>
  Effect.gen(function* () {
    const context = yield* Effect.context<Paths | Config>()
    const scope = yield* Effect.scope
    const real = yield* Effect.cached(make(options).pipe(Effect.provideContext(context), Scope.provide(scope)))
    return Snapshot.of({
      track: Effect.flatMap(real, (service) => service.track),
      trackEnded: (endedAt) => Effect.flatMap(real, (service) => service.trackEnded?.(endedAt) ?? service.track),
      patch: (hash, to) => Effect.flatMap(real, (service) => service.patch(hash, to)),
      diff: (hash, to) => Effect.flatMap(real, (service) => service.diff(hash, to)),
      diffFull: (from, to) => Effect.flatMap(real, (service) => service.diffFull(from, to)),
      restore: (hash) => Effect.flatMap(real, (service) => service.restore(hash)),
      revert: (patches) => Effect.flatMap(real, (service) => service.revert(patches))
    })
  })

/**
 * The real `Snapshot` layer: a bare git repository per work tree at `<data>/snapshot/<projectID>.<key>` (see
 * `shadowLocation`) whose work tree is the project root. It never writes, locks or refreshes the user's `.git`. When snapshots cannot run
 * (`snapshot: false`, no git binary, a root that is `/` or the home directory, a data dir git cannot write)
 * it logs one warning and behaves as `Snapshot.disabled`.
 */
export const SnapshotGit = {
  /** Production layer with default options; needs `Paths` and `Config`. */
  layer: Layer.effect(Snapshot, make({})),
  /** The layer with explicit options (another git binary, lock waits), e.g. for tests. */
  layerWith: (options: SnapshotGitOptions) => Layer.effect(Snapshot, make(options)),
  /**
   * Like `layerWith`, but the shadow repository is checked and prepared on first use, not when the layer is built:
   * a run whose steps only read never spawns git for snapshots (the CLI's start-up path).
   */
  layerLazy: (options: SnapshotGitOptions = {}) => Layer.effect(Snapshot, lazy(options))
}
