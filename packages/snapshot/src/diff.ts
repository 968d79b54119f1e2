import { type FileDiff, SnapshotError } from "@lathe/core"
import { Effect } from "effect"
import { git, pairs, runGit, splitNul } from "./git.js"
import type { Shadow } from "./shadow-repo.js"

/** One path's change between two trees. */
export interface Change {
  readonly path: string
  readonly status: FileDiff["status"]
}

const HASH = /^[0-9a-f]{40}([0-9a-f]{24})?$/

/**
 * Fails with a message for the person when `hash` is not a snapshot this repository holds: malformed, never
 * taken here, or pruned by housekeeping (unreferenced snapshots older than 7 days).
 */
export const checkHash = Effect.fn("SnapshotGit.checkHash")(function* (
  shadow: Shadow,
  operation: string,
  hash: string
) {
  if (!HASH.test(hash))
    return yield* new SnapshotError({
      operation,
      message: `"${hash}" is not a snapshot hash (expected 40 or 64 lowercase hex digits, as returned by track).`
    })
  const result = yield* runGit(shadow.target, operation, { args: ["cat-file", "-t", hash] })
  if (result.code !== 0 || result.stdout.toString("utf8").trim() !== "tree")
    return yield* new SnapshotError({
      operation,
      message:
        `Snapshot ${hash} does not exist in ${shadow.gitDir}: it was taken in another project, the data dir was ` +
        "removed, or it was older than 7 days and pruned."
    })
})

const statusOf = (letter: string): FileDiff["status"] =>
  letter === "A" ? "added" : letter === "D" ? "deleted" : "modified"

/** The files that differ between two trees (renames are a deletion plus an addition). */
export const changes = Effect.fn("SnapshotGit.changes")(function* (shadow: Shadow, from: string, to: string) {
  const fields = splitNul(
    yield* git(shadow.target, "diff", {
      args: ["diff-tree", "-r", "-z", "--no-renames", "--name-status", from, to]
    })
  )
  return pairs(fields).map(([status, path]): Change => ({ status: statusOf(status), path }))
})

/**
 * The files that differ between two trees with their added and removed lines, from one `--numstat` (as cheap as
 * `--name-status` for the small trees a step changes; binary files count zero lines).
 */
export const lineCounts = Effect.fn("SnapshotGit.lineCounts")(function* (shadow: Shadow, from: string, to: string) {
  const fields = splitNul(
    yield* git(shadow.target, "diff", { args: ["diff-tree", "-r", "-z", "--no-renames", "--numstat", from, to] })
  )
  return numstatEntries(fields)
})

/** Parses `-z --numstat` fields: `added\tdeleted\tpath` (or `added\tdeleted\t` then the path, for renames). */
const numstatEntries = (fields: ReadonlyArray<string>) => {
  const entries: Array<{ file: string; additions: number; deletions: number }> = []
  for (let i = 0; i < fields.length; i++) {
    const [added, deleted, path] = (fields[i] ?? "").split("\t")
    const file = path === "" || path === undefined ? fields[++i] : path
    if (file !== undefined) entries.push({ file, additions: Number(added) || 0, deletions: Number(deleted) || 0 })
  }
  return entries
}

/** Unified diff text between two trees, with `a/` and `b/` prefixes whatever the user's config says. */
export const unified = (shadow: Shadow, from: string, to: string) =>
  Effect.map(
    git(shadow.target, "diff", {
      args: [
        "diff-tree",
        "-r",
        "-p",
        "--no-renames",
        "--no-color",
        "--no-ext-diff",
        "--src-prefix=a/",
        "--dst-prefix=b/",
        from,
        to
      ]
    }),
    (out) => out.toString("utf8")
  )

const EMPTY = /^0+$/

/** Reads blobs by id with one `cat-file --batch`; binary blobs come back as `undefined`. */
const readBlobs = Effect.fnUntraced(function* (shadow: Shadow, ids: ReadonlyArray<string>) {
  const blobs = new Map<string, string | undefined>()
  if (ids.length === 0) return blobs
  const out = yield* git(shadow.target, "diff", { args: ["cat-file", "--batch"], input: `${ids.join("\n")}\n` })
  let at = 0
  while (at < out.length) {
    const eol = out.indexOf(10, at)
    if (eol < 0) break
    const [id, type, size] = out.subarray(at, eol).toString("utf8").split(" ")
    if (type === "missing" || size === undefined || id === undefined) {
      at = eol + 1
      continue
    }
    const body = out.subarray(eol + 1, eol + 1 + Number(size))
    blobs.set(id, body.includes(0) ? undefined : body.toString("utf8"))
    at = eol + 1 + Number(size) + 1
  }
  return blobs
})

/** Per-file before/after text and line counts between two trees (binary files: empty text, zero counts). */
export const fullDiff = Effect.fn("SnapshotGit.fullDiff")(function* (shadow: Shadow, from: string, to: string) {
  const raw = splitNul(
    yield* git(shadow.target, "diff", { args: ["diff-tree", "-r", "-z", "--no-renames", "--raw", from, to] })
  )
  const numstat = splitNul(
    yield* git(shadow.target, "diff", { args: ["diff-tree", "-r", "-z", "--no-renames", "--numstat", from, to] })
  )
  const counts = new Map(numstatEntries(numstat).map((entry) => [entry.file, entry]))
  const entries = pairs(raw).map(([meta, path]) => {
    const [, , before, after, letter] = meta.split(" ")
    return { path, status: statusOf(letter ?? "M"), before: before ?? "", after: after ?? "" }
  })
  const ids = [...new Set(entries.flatMap((e) => [e.before, e.after]).filter((id) => id && !EMPTY.test(id)))]
  const blobs = yield* readBlobs(shadow, ids)
  const text = (id: string) => (EMPTY.test(id) ? "" : (blobs.get(id) ?? ""))
  return entries.map(
    (e): FileDiff => ({
      file: e.path,
      status: e.status,
      before: text(e.before),
      after: text(e.after),
      additions: counts.get(e.path)?.additions ?? 0,
      deletions: counts.get(e.path)?.deletions ?? 0
    })
  )
})
