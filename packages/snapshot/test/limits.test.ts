import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { snap, snapshotLayer, tempProject } from "./helpers.js"

describe("Snapshot disabled", () => {
  const off = (logs: ReadonlyArray<string>) => logs.filter((l) => l.includes("Snapshots are off"))

  it.live("snapshot: false in config: tracking records nothing, undo fails clearly, one log line", () => {
    const p = tempProject("git")
    writeFileSync(join(p.root, "a.txt"), "a\n")
    const { layer, logs } = snapshotLayer(p, { snapshot: false })
    return Effect.gen(function* () {
      const snapshot = yield* snap
      assert.isUndefined(yield* snapshot.track)
      assert.include((yield* Effect.flip(snapshot.restore("0".repeat(40)))).message, "Snapshots are disabled")
      assert.strictEqual(off(logs).length, 1)
      assert.include(off(logs)[0], "snapshot: false")
    }).pipe(Effect.provide(layer))
  })

  it.live("no git binary: disabled with one log line naming the fix", () => {
    const p = tempProject("plain")
    const { layer, logs } = snapshotLayer(p, {}, { binary: join(p.base, "no-such-git") })
    return Effect.gen(function* () {
      assert.isUndefined(yield* (yield* snap).track)
      assert.strictEqual(off(logs).length, 1)
      assert.include(off(logs)[0], "Install git")
    }).pipe(Effect.provide(layer))
  })

  it.live("a project root that is the home directory is not snapshotted", () => {
    const p = tempProject("plain")
    const { layer, logs } = snapshotLayer({ ...p, home: p.root })
    return Effect.gen(function* () {
      assert.isUndefined(yield* (yield* snap).track)
      assert.include(off(logs)[0], "home directory")
    }).pipe(Effect.provide(layer))
  })
})

describe("Snapshot size caps", () => {
  it.live("files over max_file_size are skipped, listed once, and never deleted by restore", () => {
    const p = tempProject("plain")
    writeFileSync(join(p.root, "small.txt"), "small\n")
    writeFileSync(join(p.root, "grows.txt"), "tiny\n")
    const { layer, logs } = snapshotLayer(p, { snapshot: { max_file_size: 1_000 } })
    return Effect.gen(function* () {
      const snapshot = yield* snap
      const first = (yield* snapshot.track)!
      writeFileSync(join(p.root, "big.bin"), Buffer.alloc(5_000, 1))
      writeFileSync(join(p.root, "grows.txt"), "x".repeat(2_000))
      writeFileSync(join(p.root, "small.txt"), "edited\n")
      const patch = yield* snapshot.patch(first)
      // a tracked file that outgrew the cap leaves the snapshot, so undoing the step brings the old one back
      assert.deepStrictEqual([...patch.files].sort(), ["grows.txt", "small.txt"])
      yield* snapshot.track
      const warnings = logs.filter((l) => l.includes("max_file_size"))
      assert.strictEqual(warnings.length, 1, "listed once, not at every step")
      assert.include(warnings[0], "big.bin")
      yield* snapshot.restore(first)
      assert.strictEqual(readFileSync(join(p.root, "small.txt"), "utf8"), "small\n")
      assert.strictEqual(readFileSync(join(p.root, "grows.txt"), "utf8"), "tiny\n")
      assert.strictEqual(readFileSync(join(p.root, "big.bin")).length, 5_000, "an unsnapshotted file is untouched")
    }).pipe(Effect.provide(layer))
  })

  it.live("a step whose new content is over max_snapshot_size is not recorded, with the biggest folders named", () => {
    const p = tempProject("plain")
    writeFileSync(join(p.root, "a.txt"), "a\n")
    const { layer, logs } = snapshotLayer(p, { snapshot: { max_snapshot_size: 10_000 } })
    return Effect.gen(function* () {
      const snapshot = yield* snap
      const first = (yield* snapshot.track)!
      mkdirSync(join(p.root, "build"))
      for (let i = 0; i < 20; i++) writeFileSync(join(p.root, "build", `out-${i}.js`), "y".repeat(1_000))
      assert.isUndefined(yield* snapshot.track)
      assert.isTrue(logs.some((l) => l.includes("max_snapshot_size") && l.includes("build/")))
      assert.include((yield* Effect.flip(snapshot.patch(first))).message, "max_snapshot_size")
    }).pipe(Effect.provide(layer))
  })
})
