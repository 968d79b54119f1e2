import { lstatSync, statSync } from "node:fs"
import { lstat } from "node:fs/promises"
import { join } from "node:path"
import { Effect } from "effect"
import { git, splitNul } from "./git.js"
import type { ObjectReader } from "./object-reader.js"
import type { Shadow } from "./shadow-repo.js"
import { type KnownTree, knownTree, modifiedAfter, writeKnown } from "./tree-writer.js"
import type { WatchView, WorkTreeWatch } from "./watch.js"

/** Size caps, in bytes. */
export interface Limits {
  /** A file larger than this is left out of snapshots (and listed). */
  readonly maxFileSize: number
  /** A snapshot that would store more new bytes than this is not taken (a list of the biggest top folders is given). */
  readonly maxSnapshotSize: number
}

/** Defaults when config says nothing: 10 MiB per file, 1 GiB of new content per snapshot. */
export const defaultLimits: Limits = { maxFileSize: 10 * 1024 * 1024, maxSnapshotSize: 1024 * 1024 * 1024 }

/** What one snapshot attempt produced. */
export type TrackResult =
  | { readonly _tag: "Tracked"; readonly hash: string; readonly skipped: ReadonlyArray<string> }
  | { readonly _tag: "TooLarge"; readonly bytes: number; readonly largest: ReadonlyArray<string> }

interface Candidate {
  readonly path: string
  /** Already in the shadow index (changed or deleted) rather than new. */
  readonly tracked: boolean
  /** Undefined when the file is gone. */
  readonly size: number | undefined
  /** When it was last modified (ms since the epoch); undefined when the file is gone. */
  readonly mtimeMs: number | undefined
}

/**
 * The last tree written, and the shadow index as it was then (inode, times, size): while the index is that same file
 * and the scan finds nothing changed, the work tree is still that tree, and `write-tree` (a git process) is skipped.
 * Git replaces the index by renaming a new file over it, so any write (ours, another Lathe's, a repair) shows here.
 */
export interface TreeMemo {
  last: { readonly hash: string; readonly index: string; readonly skipped: ReadonlyArray<string> } | undefined
  /**
   * The last tree, its folders read as snapshots need them: a snapshot of paths the watch named is written from it
   * without git when it can be (see `tree-writer.ts`).
   */
  known: KnownTree | undefined
  /**
   * Paths written from `known` since the shadow index last recorded them: the index still has what they were, so a
   * scan that names paths to git names these too (a full scan finds them by their size and times).
   */
  readonly unindexed: Set<string>
  /**
   * Paths left out of the last tree because they changed after the snapshot was asked for (see `writeTree`'s
   * `asOf`): the index still has what they were before, and the next snapshot names them to git.
   */
  readonly deferred: Set<string>
  /** Reads the tree's folders that are not loose objects (packed, or in the user's repository). */
  readonly reader: ObjectReader | undefined
}

/** A new, empty {@link TreeMemo} (one per shadow repository and process). */
export const treeMemo = (reader?: ObjectReader): TreeMemo => ({
  last: undefined,
  known: undefined,
  unindexed: new Set(),
  deferred: new Set(),
  reader
})

const indexStamp = (shadow: Shadow): string | undefined => {
  try {
    const info = statSync(join(shadow.gitDir, "index"), { bigint: true })
    return `${info.ino}:${info.size}:${info.mtimeNs}:${info.ctimeNs}`
  } catch {
    return undefined
  }
}

/** At most this many bytes of paths are named to `ls-files` (the arguments of one process). */
const PATHS_BYTES = 64 * 1024

/** Past this many changed paths, one `git add -A` beats feeding paths to `update-index`. */
const BULK = 2_000

/** A step's few changed files are stat'ed at once; many go through the thread pool, 64 at a time. */
const SYNC_SIZES = 64

const sizes = (root: string, entries: ReadonlyArray<{ path: string; tracked: boolean }>) =>
  entries.length <= SYNC_SIZES
    ? Effect.sync(() =>
        entries.map((entry): Candidate => {
          const info = lstatSync(join(root, entry.path), { throwIfNoEntry: false })
          const file = info && !info.isDirectory() ? info : undefined
          return { ...entry, size: file?.size, mtimeMs: file?.mtimeMs }
        })
      )
    : sizesInPool(root, entries)

const sizesInPool = (root: string, entries: ReadonlyArray<{ path: string; tracked: boolean }>) =>
  Effect.promise(async () => {
    const out: Array<Candidate> = new Array(entries.length)
    let next = 0
    const worker = async () => {
      for (let i = next++; i < entries.length; i = next++) {
        const entry = entries[i] as { path: string; tracked: boolean }
        const info = await lstat(join(root, entry.path)).catch(() => undefined)
        const file = info && !info.isDirectory() ? info : undefined
        out[i] = { ...entry, size: file?.size, mtimeMs: file?.mtimeMs }
      }
    }
    await Promise.all(Array.from({ length: Math.min(64, entries.length) }, worker))
    return out
  })

const literalExclude = (path: string) => `:(exclude,literal,top)${path}`

/**
 * The tree after the watch's window, when it needs no git and no lock file: the watch vouches that nothing changed
 * since the tree in `memo` (that tree), or names only files that tree has (written in memory, see `tree-writer.ts`),
 * and the shadow index is as this process left it. Nothing here touches the index or runs git: loose objects are
 * written as git writes them (a temp file renamed), which needs no lock, and a tree just written is young, so no
 * housekeeping prunes it. Callers hold their process's own permit (`memo` and the window are this process's).
 * `undefined`: git must write the tree (`writeTree`, under the lock). `asOf`: see `writeTree`; a named file modified
 * after it is left to git, which leaves it out and names it to the next snapshot.
 */
export const treeWithoutGit = Effect.fnUntraced(function* (
  shadow: Shadow,
  limits: Limits,
  memo: TreeMemo,
  view: WatchView | undefined,
  asOf?: number
) {
  const last = memo.last
  if (last === undefined || view === undefined || last.index !== indexStamp(shadow) || memo.deferred.size > 0)
    return undefined
  if (view._tag === "Unchanged")
    return { _tag: "Tracked", hash: last.hash, skipped: last.skipped } satisfies TrackResult
  if (view._tag !== "Paths" || memo.known?.root !== last.hash || memo.reader === undefined) return undefined
  const [tree, reader] = [memo.known, memo.reader]
  const hash = yield* Effect.promise(() =>
    writeKnown(shadow, tree, reader, view.paths, limits, asOf).catch(() => undefined)
  )
  if (hash === undefined) return undefined
  for (const path of view.paths) memo.unindexed.add(path)
  memo.last = { ...last, hash }
  return { _tag: "Tracked", hash, skipped: last.skipped } satisfies TrackResult
})

/**
 * Writes the work tree into the shadow repository and returns its tree hash. One scan (`ls-files -o -m`, which
 * honours `.gitignore`, the user's global excludes and `info/exclude`) finds what changed; those paths alone
 * are hashed. Files over `maxFileSize` are left out (and dropped from the index if they were in it); nested
 * repositories are left out. When nothing changed since the tree in `memo` and the index is as it left it, that tree
 * is returned without running git again ({@link treeWithoutGit}). Needs the snapshot lock. `settled`: the watch's
 * view, when the caller settled it and already tried {@link treeWithoutGit} with it.
 *
 * `asOf` (ms since the epoch, the time the snapshot was asked for): a file the scan finds modified later than that is
 * left as the last tree has it, and named to the next snapshot (`memo.deferred`). The tree after a step is asked for
 * when the step ends; a person's save landing while git reads the work tree is then not counted as the step's (undo
 * would take it back). File times come from a clock that lags by at most a timer tick, and are compared by the
 * millisecond (`modifiedAfter`: `Date.now()` drops the fraction a file time keeps), so what the step wrote before it
 * ended is never left out; a time past the scan's (a file dated in the future) is not a save made meanwhile, and stays.
 * A file deleted after `asOf` has no time to tell: it is recorded as deleted.
 */
export const writeTree = Effect.fn("SnapshotGit.writeTree")(function* (
  shadow: Shadow,
  limits: Limits,
  memo: TreeMemo = treeMemo(),
  watch?: WorkTreeWatch,
  settled?: WatchView,
  asOf?: number
) {
  const view = settled ?? (watch === undefined ? undefined : yield* watch.settle)
  if (settled === undefined) {
    const quick = yield* treeWithoutGit(shadow, limits, memo, view, asOf)
    if (quick !== undefined) return quick
  }
  const last = memo.last
  const known = last !== undefined && last.index === indexStamp(shadow)
  // Whatever happens below, the next snapshot scans everything unless this one records its tree.
  memo.last = undefined
  // With the watch's paths, git looks at those alone: they are all that changed since the tree in `memo`. (Named on
  // the command line: long names past a few dozen KiB could pass the system's limit, and get the full scan.)
  // (A window with nothing in it, when paths were left out of the last tree, names those.)
  const vouched = view?._tag === "Paths" ? view.paths : view?._tag === "Unchanged" ? [] : undefined
  const asked = vouched ? [...new Set([...vouched, ...memo.unindexed, ...memo.deferred])] : []
  const named = known && asked.length > 0 && asked.reduce((sum, path) => sum + path.length + 16, 0) <= PATHS_BYTES
  const only = named ? ["--", ...asked.map((path) => `:(top,literal)${path}`)] : []
  const listing = yield* git(shadow.target, "track", {
    args: ["ls-files", "-z", "-t", "--others", "--modified", "--exclude-standard", ...only],
    timeout: "5 minutes"
  })
  const seen = new Set<string>()
  const entries: Array<{ path: string; tracked: boolean }> = []
  const nested: Array<string> = []
  for (const line of splitNul(listing)) {
    const path = line.slice(2)
    // A directory here is a nested repository: its history is its own, not ours to snapshot.
    if (path.endsWith("/")) nested.push(path.slice(0, -1))
    if (path.endsWith("/") || seen.has(path)) continue
    seen.add(path)
    entries.push({ path, tracked: line[0] !== "?" })
  }
  const found = yield* sizes(shadow.root, entries)
  // Modified between `asOf` and now: a time past now is not a save happening now (a file dated in the future by
  // whoever wrote it, an archive from a machine whose clock ran ahead), and stays the step's.
  const now = Date.now()
  const late =
    asOf === undefined
      ? []
      : found.filter((c) => c.mtimeMs !== undefined && modifiedAfter(c.mtimeMs, asOf) && Math.floor(c.mtimeMs) <= now)
  const candidates = late.length === 0 ? found : found.filter((c) => !late.includes(c))
  const large = candidates.filter((c) => c.size !== undefined && c.size > limits.maxFileSize)
  const kept = candidates.filter((c) => c.size === undefined || c.size <= limits.maxFileSize)
  const bytes = kept.reduce((sum, c) => sum + (c.size ?? 0), 0)
  if (bytes > limits.maxSnapshotSize) {
    const byTop = new Map<string, number>()
    for (const c of kept) {
      const top = c.path.includes("/") ? `${c.path.slice(0, c.path.indexOf("/"))}/` : c.path
      byTop.set(top, (byTop.get(top) ?? 0) + (c.size ?? 0))
    }
    const largest = [...byTop].sort((a, b) => b[1] - a[1]).slice(0, 5)
    return { _tag: "TooLarge", bytes, largest: largest.map(([path]) => path) } satisfies TrackResult
  }
  const dropped = large.filter((c) => c.tracked)
  // Files left out for their size are listed again by every full scan; a scan of a few paths lists only its own.
  const looked = new Set(named ? asked : [])
  const skipped =
    only.length === 0
      ? large.map((c) => c.path)
      : [...(last?.skipped ?? []).filter((path) => !looked.has(path)), ...large.map((c) => c.path)]
  // Whatever the scan named (or all of the work tree) is as the index says once the calls below are done; the tree in
  // `memo` may not be (a path written from memory, then changed back to what the index has): `write-tree` decides.
  const unindexed = memo.unindexed.size > 0 || memo.deferred.size > 0
  memo.unindexed.clear()
  memo.deferred.clear()
  for (const c of late) memo.deferred.add(c.path)
  if (kept.length === 0 && dropped.length === 0 && known && !unindexed) {
    memo.last = { ...last, skipped }
    return { _tag: "Tracked", hash: last.hash, skipped } satisfies TrackResult
  }
  if (kept.length > BULK) {
    const excludes = [...large.map((c) => c.path), ...late.map((c) => c.path), ...nested].map(literalExclude)
    yield* git(shadow.target, "track", {
      args: ["add", "--all", "--pathspec-from-file=-", "--pathspec-file-nul"],
      input: [".", ...excludes].join("\0"),
      timeout: "10 minutes"
    })
  } else if (kept.length > 0) {
    yield* git(shadow.target, "track", {
      args: ["update-index", "--add", "--remove", "--replace", "-z", "--stdin"],
      input: kept.map((c) => `${c.path}\0`).join(""),
      timeout: "10 minutes"
    })
  }
  if (dropped.length > 0)
    yield* git(shadow.target, "track", {
      args: ["update-index", "--force-remove", "-z", "--stdin"],
      input: dropped.map((c) => `${c.path}\0`).join("")
    })
  const hash = (yield* git(shadow.target, "track", { args: ["write-tree"], timeout: "5 minutes" }))
    .toString("utf8")
    .trim()
  const index = indexStamp(shadow)
  if (index !== undefined) memo.last = { hash, index, skipped }
  if (memo.known?.root !== hash) memo.known = knownTree(hash)
  return { _tag: "Tracked", hash, skipped } satisfies TrackResult
})
