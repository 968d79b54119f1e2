import { execFileSync } from "node:child_process"
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs"
import { hostname } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Clock, Effect } from "effect"
import { sh, shadowDir, snap, snapshotLayer, tempProject } from "./helpers.js"

const project = (kind: "git" | "plain" = "plain") => {
  const p = tempProject(kind)
  for (let i = 0; i < 20; i++) writeFileSync(join(p.root, `file-${i}.txt`), `content ${i}\n`)
  return p
}

describe("Snapshot concurrency and recovery", () => {
  it.live("two sessions tracking one project at once both succeed, with the same hash", () => {
    const p = project()
    const a = snapshotLayer(p).layer
    const b = snapshotLayer(p).layer
    return Effect.gen(function* () {
      for (let round = 0; round < 3; round++) {
        writeFileSync(join(p.root, `round-${round}.txt`), `round ${round}\n`)
        const [x, y, z] = yield* Effect.all(
          [Effect.provide(snap, a), Effect.provide(snap, b), Effect.provide(snap, a)].map((s) =>
            Effect.flatMap(s, (snapshot) => snapshot.track)
          ),
          { concurrency: "unbounded" }
        )
        assert.match(x ?? "", /^[0-9a-f]{40}$/)
        assert.strictEqual(x, y)
        assert.strictEqual(y, z)
      }
      assert.isFalse(existsSync(`${shadowDir(p)}.lock`), "the lock is released")
    })
  })

  it.live("a stale index.lock left by a killed git never wedges later steps", () => {
    const p = project()
    const { layer } = snapshotLayer(p)
    return Effect.gen(function* () {
      const snapshot = yield* snap
      const first = (yield* snapshot.track)!
      writeFileSync(join(shadowDir(p), "index.lock"), "")
      writeFileSync(join(p.root, "file-1.txt"), "changed\n")
      const patch = yield* snapshot.patch(first)
      assert.deepStrictEqual(patch.files, ["file-1.txt"])
      assert.isFalse(existsSync(join(shadowDir(p), "index.lock")))
    }).pipe(Effect.provide(layer))
  })

  it.live(
    "a lock left by a process that died is taken over; a live holder makes callers wait, then fail clearly",
    () => {
      const p = project()
      const { layer } = snapshotLayer(p, {}, { lock: { wait: "300 millis" } })
      const dead = Number(execFileSync("sh", ["-c", "echo $$"], { encoding: "utf8" }).trim())
      return Effect.gen(function* () {
        const snapshot = yield* snap
        yield* snapshot.track
        writeFileSync(`${shadowDir(p)}.lock`, `${dead} ${hostname()} gone`)
        assert.match((yield* snapshot.track) ?? "", /^[0-9a-f]{40}$/)

        writeFileSync(`${shadowDir(p)}.lock`, `${process.pid} ${hostname()} someone-else`)
        const start = yield* Clock.currentTimeMillis
        const error = yield* Effect.flip(snapshot.track)
        assert.include(error.message, "has held the snapshot lock")
        assert.isAtLeast((yield* Clock.currentTimeMillis) - start, 300)
        rmSync(`${shadowDir(p)}.lock`)
      }).pipe(Effect.provide(layer))
    }
  )

  it.live("a corrupt index is rebuilt, and a deleted shadow repository is re-created", () => {
    const p = project()
    const { layer, logs } = snapshotLayer(p)
    return Effect.gen(function* () {
      const snapshot = yield* snap
      const first = (yield* snapshot.track)!
      writeFileSync(join(shadowDir(p), "index"), "not an index at all")
      assert.strictEqual(yield* snapshot.track, first)
      assert.isTrue(logs.some((l) => l.includes("needed repair")))

      rmSync(shadowDir(p), { recursive: true })
      assert.strictEqual(yield* snapshot.track, first, "the same tree gives the same hash in a new repository")
      writeFileSync(join(p.root, "file-2.txt"), "after re-creation\n")
      assert.deepStrictEqual((yield* snapshot.patch(first)).files, ["file-2.txt"])
    }).pipe(Effect.provide(layer))
  })

  it.live("nested repositories, with or without commits, do not break tracking and are left out", () => {
    const p = project("git")
    mkdirSync(join(p.root, "empty-repo"))
    sh(join(p.root, "empty-repo"), "init", "-q")
    writeFileSync(join(p.root, "empty-repo", "x.txt"), "x\n")
    mkdirSync(join(p.root, "full-repo"))
    sh(join(p.root, "full-repo"), "init", "-q")
    writeFileSync(join(p.root, "full-repo", "y.txt"), "y\n")
    sh(join(p.root, "full-repo"), "add", "-A")
    sh(join(p.root, "full-repo"), "commit", "-q", "-m", "inner")
    const { layer } = snapshotLayer(p)
    return Effect.gen(function* () {
      const snapshot = yield* snap
      const first = (yield* snapshot.track)!
      writeFileSync(join(p.root, "file-3.txt"), "changed\n")
      writeFileSync(join(p.root, "full-repo", "y.txt"), "inner change\n")
      assert.deepStrictEqual((yield* snapshot.patch(first)).files, ["file-3.txt"])
    }).pipe(Effect.provide(layer))
  })
})
