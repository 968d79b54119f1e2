import { existsSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { sh, shadowDir, snap, snapshotLayer, tempProject, treeOf } from "./helpers.js"

/** A repository (`a`), a clone of it (`b`) and a worktree of it (`c`), sharing one data dir and one project id. */
const threeTrees = () => {
  const a = { ...tempProject("git"), projectID: "prj" }
  writeFileSync(join(a.root, "f.txt"), "v1\n")
  sh(a.root, "add", "-A")
  sh(a.root, "commit", "-q", "-m", "first")
  const b = { ...a, root: join(a.base, "clone") }
  sh(a.base, "clone", "-q", a.root, b.root)
  const c = { ...a, root: join(a.base, "worktree") }
  sh(a.root, "worktree", "add", "-q", c.root)
  return { a, b, c }
}

describe("Snapshots of several work trees of one repository", () => {
  it.live("each work tree has its own shadow; an undo in one leaves the others byte for byte", () => {
    const { a, b, c } = threeTrees()
    return Effect.gen(function* () {
      const patchOf = (tree: typeof a, content: string) =>
        Effect.gen(function* () {
          const snapshot = yield* snap
          const before = (yield* snapshot.track)!
          writeFileSync(join(tree.root, "f.txt"), content)
          return { snapshot, patch: yield* snapshot.patch(before) }
        }).pipe(Effect.provide(snapshotLayer(tree).layer))
      const inA = yield* patchOf(a, "a's change\n")
      yield* patchOf(b, "b's change\n")
      const inC = yield* patchOf(c, "c's change\n")
      const dirs = [a, b, c].map(shadowDir)
      assert.strictEqual(new Set(dirs).size, 3)
      for (const [i, dir] of dirs.entries()) {
        assert.isTrue(existsSync(dir), `the shadow of tree ${i}`)
        assert.strictEqual(readFileSync(join(dir, "lathe-root"), "utf8"), [a, b, c][i]?.root)
      }
      const bBefore = treeOf(b.root)
      const aBefore = treeOf(a.root)
      yield* inC.snapshot.revert([inC.patch]).pipe(Effect.provide(snapshotLayer(c).layer))
      assert.strictEqual(readFileSync(join(c.root, "f.txt"), "utf8"), "v1\n")
      assert.deepStrictEqual(treeOf(b.root), bBefore, "the clone is untouched")
      assert.deepStrictEqual(treeOf(a.root), aBefore, "the main tree is untouched")
      yield* inA.snapshot.revert([inA.patch]).pipe(Effect.provide(snapshotLayer(a).layer))
      assert.strictEqual(readFileSync(join(a.root, "f.txt"), "utf8"), "v1\n")
      assert.strictEqual(readFileSync(join(b.root, "f.txt"), "utf8"), "b's change\n")
    })
  })

  it.live("a shadow from before shadows were per tree stays its tree's; another tree still reads its snapshots", () => {
    const { a, b } = threeTrees()
    return Effect.gen(function* () {
      // What an older Lathe left: the shadow at <data>/snapshot/<projectID>, recording the tree that made it.
      const old = yield* Effect.gen(function* () {
        const snapshot = yield* snap
        const before = (yield* snapshot.track)!
        writeFileSync(join(a.root, "f.txt"), "fixed\n")
        return { before, patch: yield* snapshot.patch(before) }
      }).pipe(Effect.provide(snapshotLayer(a).layer))
      const legacy = join(a.data, "snapshot", "prj")
      renameSync(shadowDir(a), legacy)

      yield* Effect.gen(function* () {
        yield* (yield* snap).revert([old.patch])
      }).pipe(Effect.provide(snapshotLayer(a).layer))
      assert.strictEqual(readFileSync(join(a.root, "f.txt"), "utf8"), "v1\n", "the old session's undo still works")
      assert.isFalse(existsSync(shadowDir(a)), "the tree the old shadow recorded keeps using it")

      const seen = yield* Effect.gen(function* () {
        return yield* (yield* snap).diffFull(old.before, old.before)
      }).pipe(Effect.provide(snapshotLayer(b).layer))
      assert.deepStrictEqual(seen, [])
      assert.isTrue(existsSync(shadowDir(b)), "another tree gets its own shadow")
      assert.include(readFileSync(join(shadowDir(b), "objects", "info", "alternates"), "utf8"), join(legacy, "objects"))
      assert.sameMembers(
        readdirSync(join(a.data, "snapshot")).filter((name) => !name.endsWith(".lock")),
        ["prj", `prj.${shadowDir(b).split(".").at(-1)}`]
      )
    })
  })
})
