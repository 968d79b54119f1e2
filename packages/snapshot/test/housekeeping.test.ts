import { execFileSync } from "node:child_process"
import { readdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { gitFingerprint, sh, shadowDir, snap, snapshotLayer, tempProject } from "./helpers.js"

/** Loose objects in a shadow repository, as `xxyyyy…` ids. */
const looseObjects = (gitDir: string) =>
  readdirSync(join(gitDir, "objects"))
    .filter((d) => /^[0-9a-f]{2}$/.test(d))
    // A prune running meanwhile removes a directory it emptied between the two reads: that one holds nothing.
    .flatMap((d) => readdirOrNothing(join(gitDir, "objects", d)).map((f) => d + f))

const readdirOrNothing = (dir: string): ReadonlyArray<string> => {
  try {
    return readdirSync(dir)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return []
    throw error
  }
}

const age = (gitDir: string, days: number) => {
  const then = new Date(Date.now() - days * 24 * 60 * 60 * 1000)
  for (const id of looseObjects(gitDir)) utimesSync(join(gitDir, "objects", id.slice(0, 2), id.slice(2)), then, then)
}

/** Writes an unreferenced blob into the shadow repository and returns its id. */
const garbageBlob = (gitDir: string, content: string) =>
  execFileSync("git", ["--git-dir", gitDir, "hash-object", "-w", "--stdin"], {
    input: content,
    encoding: "utf8"
  }).trim()

describe("Snapshot seeding from the user's repository", () => {
  it.live("the first track reuses the user's objects and index instead of re-hashing every file", () => {
    const p = tempProject("git")
    for (let d = 0; d < 10; d++)
      for (let f = 0; f < 30; f++) writeFileSync(join(p.root, `f-${d}-${f}.txt`), `file ${d} ${f}\n`)
    sh(p.root, "add", "-A")
    sh(p.root, "commit", "-q", "-m", "many files")
    const fingerprint = gitFingerprint(p.root)
    const { layer } = snapshotLayer(p)
    return Effect.gen(function* () {
      const snapshot = yield* snap
      const first = (yield* snapshot.track)!
      assert.strictEqual(first, sh(p.root, "rev-parse", "HEAD^{tree}"), "a clean tree is the commit's tree")
      const alternates = readFileSync(join(shadowDir(p), "objects", "info", "alternates"), "utf8").trim()
      assert.strictEqual(alternates, join(p.root, ".git", "objects"))
      assert.isAtMost(looseObjects(shadowDir(p)).length, 2, "no file of the user's history was stored again")
      writeFileSync(join(p.root, "f-3-3.txt"), "changed\n")
      writeFileSync(join(p.root, "untracked.txt"), "new\n")
      assert.deepStrictEqual([...(yield* snapshot.patch(first)).files].sort(), ["f-3-3.txt", "untracked.txt"])
      yield* snapshot.restore(first)
      assert.strictEqual(readFileSync(join(p.root, "f-3-3.txt"), "utf8"), "file 3 3\n")
      assert.strictEqual(gitFingerprint(p.root), fingerprint, "the user's .git is byte-identical")
    }).pipe(Effect.provide(layer))
  })
})

describe("Snapshot housekeeping", () => {
  it.live("prunes unreachable objects older than 7 days at most daily, keeping what recent snapshots use", () => {
    const p = tempProject("plain")
    writeFileSync(join(p.root, "stays.txt"), "unchanged for weeks\n")
    writeFileSync(join(p.root, "edited.txt"), "old version\n")
    const { layer } = snapshotLayer(p)
    const gitDir = () => shadowDir(p)
    const stamp = () => join(gitDir(), "lathe-gc")
    const exists = (id: string) => looseObjects(gitDir()).includes(id)
    const waitUntil = (check: () => boolean) =>
      Effect.gen(function* () {
        for (let i = 0; i < 100 && !check(); i++) yield* Effect.sleep("50 millis")
        return check()
      })
    return Effect.gen(function* () {
      const snapshot = yield* snap
      const old = (yield* snapshot.track)!
      const garbage = garbageBlob(gitDir(), "garbage one\n")
      age(gitDir(), 10)
      writeFileSync(join(p.root, "edited.txt"), "new version\n")
      writeFileSync(stamp(), String(Date.now() - 2 * 24 * 60 * 60 * 1000))
      const recent = (yield* snapshot.track)!
      assert.isTrue(yield* waitUntil(() => !exists(garbage)), "old garbage is pruned")
      assert.isTrue(yield* waitUntil(() => Number(readFileSync(stamp(), "utf8")) > Date.now() - 60_000))
      // the recent snapshot still restores, including the blob it shares with the old one
      writeFileSync(join(p.root, "stays.txt"), "clobbered\n")
      yield* snapshot.restore(recent)
      assert.strictEqual(readFileSync(join(p.root, "stays.txt"), "utf8"), "unchanged for weeks\n")
      assert.include((yield* Effect.flip(snapshot.patch(old))).message, "does not exist")

      // ran today: the next garbage waits for tomorrow
      const second = garbageBlob(gitDir(), "garbage two\n")
      age(gitDir(), 10)
      yield* snapshot.track
      yield* Effect.sleep("300 millis")
      assert.isTrue(exists(second))
    }).pipe(Effect.provide(layer))
  })
})
