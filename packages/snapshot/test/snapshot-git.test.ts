import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync
} from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Config, Paths, Snapshot, type SnapshotError } from "@lathe/core"
import { Effect, Layer } from "effect"
import { SnapshotGit } from "../src/snapshot-git.js"
import { gitFingerprint, sh, snap, snapshotLayer, tempProject, treeOf } from "./helpers.js"

const NAME = "new name ünï ✓.txt"

/** A project with one of everything the matrix changes; in a git repo it is committed and a stash exists. */
const setup = (kind: "git" | "plain") => {
  const project = tempProject(kind)
  const { root, base } = project
  const write = (path: string, content: string | Buffer) => {
    mkdirSync(join(root, path, ".."), { recursive: true })
    writeFileSync(join(root, path), content)
  }
  write("keep.txt", "keep\n")
  write("mod.txt", "v1\nsame\n")
  write("del.txt", "delete me\n")
  write("old name.txt", "rename me\n")
  write(".gitignore", "*.log\n")
  write("ignored.log", "noise\n")
  symlinkSync("keep.txt", join(root, "link-in"))
  mkdirSync(join(base, "outside"))
  writeFileSync(join(base, "outside", "secret.txt"), "outside the project\n")
  if (kind === "git") {
    sh(root, "add", "-A")
    sh(root, "commit", "-q", "-m", "first")
    writeFileSync(join(root, "keep.txt"), "stashed change\n")
    sh(root, "stash", "-q")
  }
  const change = () => {
    write("new.txt", "brand new\n")
    write("mod.txt", "v2\nsame\n")
    rmSync(join(root, "del.txt"))
    renameSync(join(root, "old name.txt"), join(root, NAME))
    write("bin.dat", Buffer.from([0, 1, 2, 255, 0, 7]))
    write("a/b/c/deep.txt", "deep\n")
    write("ignored.log", "more noise\n")
    mkdirSync(join(root, "empty"))
    rmSync(join(root, "link-in"))
    symlinkSync("mod.txt", join(root, "link-in"))
    symlinkSync(join(base, "outside"), join(root, "link-out"))
  }
  return { project, change }
}

const changed = [
  "a/b/c/deep.txt",
  "bin.dat",
  "del.txt",
  "link-in",
  "link-out",
  "mod.txt",
  NAME,
  "new.txt",
  "old name.txt"
]

for (const kind of ["git", "plain"] as const) {
  describe(`Snapshot on a ${kind === "git" ? "git repository" : "folder outside git"}`, () => {
    it.live("track, patch, diff, diffFull, restore and revert cover the change matrix", () => {
      const { project, change } = setup(kind)
      const { root, base } = project
      const { layer, logs } = snapshotLayer(project)
      const fingerprint = kind === "git" ? gitFingerprint(root) : ""
      const untouched = <A>(effect: Effect.Effect<A, SnapshotError>) =>
        Effect.tap(effect, () =>
          Effect.sync(() => {
            if (kind === "git") assert.strictEqual(gitFingerprint(root), fingerprint, "the user's .git changed")
          })
        )
      return Effect.gen(function* () {
        const snapshot = yield* snap
        const before = treeOf(root)
        const h0 = yield* untouched(snapshot.track)
        assert.match(h0 ?? "", /^[0-9a-f]{40}$/)
        assert.strictEqual(yield* untouched(snapshot.track), h0, "an unchanged tree gives the same hash")
        assert.deepStrictEqual((yield* untouched(snapshot.patch(h0!))).files, [])

        change()
        const after = treeOf(root)
        const patch = yield* untouched(snapshot.patch(h0!))
        assert.strictEqual(patch.hash, h0)
        assert.deepStrictEqual([...patch.files].sort(), [...changed].sort())
        // The step summary's line counts come with the patch, from the same git call (binary files count zero).
        const lines = new Map((patch.lines ?? []).map((l) => [l.file, [l.additions, l.deletions]]))
        assert.deepStrictEqual([...lines.keys()], [...patch.files])
        assert.deepStrictEqual(lines.get("mod.txt"), [1, 1])
        assert.deepStrictEqual(lines.get("new.txt"), [1, 0])
        assert.deepStrictEqual(lines.get("del.txt"), [0, 1])
        assert.deepStrictEqual(lines.get("bin.dat"), [0, 0])

        const text = yield* untouched(snapshot.diff(h0!))
        assert.include(text, "-v1")
        assert.include(text, "+v2")
        assert.include(text, `b/${NAME}`)
        assert.include(text, "Binary files")
        assert.notInclude(text, "ignored.log")

        const h1 = (yield* untouched(snapshot.track))!
        // Between two snapshots (a step's before and after): the same text, whatever the work tree does next.
        assert.strictEqual(yield* untouched(snapshot.diff(h0!, h1)), text)
        assert.strictEqual(yield* untouched(snapshot.diff(h1, h1)), "")
        const full = yield* untouched(snapshot.diffFull(h0!, h1))
        const byFile = Object.fromEntries(full.map((f) => [f.file, f]))
        assert.deepInclude(byFile["mod.txt"], {
          status: "modified",
          before: "v1\nsame\n",
          after: "v2\nsame\n",
          additions: 1,
          deletions: 1
        })
        assert.deepInclude(byFile["new.txt"], { status: "added", before: "", after: "brand new\n", additions: 1 })
        assert.deepInclude(byFile["del.txt"], { status: "deleted", after: "", deletions: 1 })
        assert.deepInclude(byFile["bin.dat"], { status: "added", before: "", after: "", additions: 0 })
        assert.strictEqual(full.length, changed.length)

        // restore: exactly as at h0; ignored files and empty folders are not part of a snapshot and stay
        yield* untouched(snapshot.restore(h0!))
        const ignoredNow = treeOf(root)["ignored.log"]
        assert.deepStrictEqual(treeOf(root), { ...before, "ignored.log": ignoredNow!, "empty/": "" })
        assert.strictEqual(readFileSync(join(root, "ignored.log"), "utf8"), "more noise\n")
        assert.strictEqual(treeOf(root)["link-in"], "-> keep.txt", "a symlink comes back as a link")
        assert.strictEqual(readFileSync(join(base, "outside", "secret.txt"), "utf8"), "outside the project\n")

        // restore forward again (redo), then revert the patch: files it does not name stay as they are
        yield* untouched(snapshot.restore(h1))
        assert.deepStrictEqual(treeOf(root), after)
        writeFileSync(join(root, "later.txt"), "not in the patch\n")
        yield* untouched(snapshot.revert([patch]))
        assert.deepStrictEqual(treeOf(root), {
          ...before,
          "ignored.log": ignoredNow!,
          "empty/": "",
          "later.txt": treeOf(root)["later.txt"]!
        })
        assert.strictEqual(readFileSync(join(base, "outside", "secret.txt"), "utf8"), "outside the project\n")
        assert.strictEqual(
          logs.filter((l) => l.includes("Snapshots are off")).length,
          0,
          `unexpected warnings: ${logs.join("\n")}`
        )
      }).pipe(Effect.provide(layer))
    })
  })
}

describe("Snapshot undo and redo", () => {
  it.live("undo across three steps restores each step's files in order; redo re-applies", () => {
    const { project } = setup("git")
    const { root } = project
    const { layer } = snapshotLayer(project)
    const steps: Array<() => void> = [
      () => writeFileSync(join(root, "mod.txt"), "step 1\n"),
      () => {
        writeFileSync(join(root, "mod.txt"), "step 2\n")
        mkdirSync(join(root, "src"))
        writeFileSync(join(root, "src", "added.ts"), "export {}\n")
      },
      () => {
        rmSync(join(root, "keep.txt"))
        writeFileSync(join(root, "src", "added.ts"), "export const x = 3\n")
      }
    ]
    return Effect.gen(function* () {
      const snapshot = yield* snap
      const states = [treeOf(root)]
      const patches = []
      for (const step of steps) {
        const hash = (yield* snapshot.track)!
        step()
        patches.push(yield* snapshot.patch(hash))
        states.push(treeOf(root))
      }
      // one step at a time, newest first; remember where each undo started for redo
      const redo: Array<string> = []
      for (let k = 3; k >= 1; k--) {
        redo.push((yield* snapshot.track)!)
        yield* snapshot.revert([patches[k - 1]!])
        assert.deepStrictEqual(treeOf(root), states[k - 1], `after undoing step ${k}`)
      }
      for (let k = 1; k <= 3; k++) {
        yield* snapshot.restore(redo.pop()!)
        assert.deepStrictEqual(treeOf(root), states[k], `after redoing step ${k}`)
      }
      // all three at once, oldest first: the first patch naming a file decides its content
      yield* snapshot.revert(patches)
      assert.deepStrictEqual(treeOf(root), states[0])
    }).pipe(Effect.provide(layer))
  })

  it.live("bad input gets a clear error", () => {
    const { project } = setup("plain")
    const { layer } = snapshotLayer(project)
    return Effect.gen(function* () {
      const snapshot = yield* snap
      const hash = (yield* snapshot.track)!
      const malformed = yield* Effect.flip(snapshot.patch("HEAD"))
      assert.include(malformed.message, "is not a snapshot hash")
      const unknown = yield* Effect.flip(snapshot.restore("0".repeat(40)))
      assert.include(unknown.message, "does not exist")
      const outside = yield* Effect.flip(snapshot.revert([{ hash, files: ["../outside/secret.txt"] }]))
      assert.include(outside.message, "stay inside it")
      const dotGit = yield* Effect.flip(snapshot.revert([{ hash, files: [".git/HEAD"] }]))
      assert.include(dotGit.message, "Refusing to revert")
    }).pipe(Effect.provide(layer))
  })
})

describe("SnapshotGit.layerLazy", () => {
  it.live("spawns nothing until first used, then tracks like the eager layer", () => {
    const project = mkdtempSync(join(tmpdir(), "lathe-lazy-"))
    const data = mkdtempSync(join(tmpdir(), "lathe-lazy-data-"))
    writeFileSync(join(project, "a.txt"), "one\n")
    return Effect.gen(function* () {
      const snapshot = yield* Snapshot
      assert.isFalse(existsSync(join(data, "snapshot")), "no shadow repository before the first call")
      const hash = yield* snapshot.track
      assert.isString(hash)
      writeFileSync(join(project, "a.txt"), "two\n")
      const patch = yield* snapshot.patch(hash ?? "")
      assert.deepStrictEqual(patch.files, ["a.txt"])
      assert.isTrue(existsSync(join(data, "snapshot")))
      // Every other method goes through to the real service once it is built.
      const after = patch.after ?? ""
      assert.deepStrictEqual((yield* snapshot.patch(hash ?? "", after)).files, ["a.txt"])
      assert.include(yield* snapshot.diff(hash ?? "", after), "+two")
      assert.deepStrictEqual(
        (yield* snapshot.diffFull(hash ?? "", after)).map((d) => [d.file, d.before, d.after]),
        [["a.txt", "one\n", "two\n"]]
      )
      yield* snapshot.revert([patch])
      assert.strictEqual(readFileSync(join(project, "a.txt"), "utf8"), "one\n")
      yield* snapshot.restore(after)
      assert.strictEqual(readFileSync(join(project, "a.txt"), "utf8"), "two\n")
    }).pipe(
      Effect.provide(
        SnapshotGit.layerLazy().pipe(
          Layer.provide(Layer.mergeAll(Paths.layerTest(project, { data, home: data }), Config.layerTest({})))
        )
      )
    )
  })
})

describe("the tree after a step (trackEnded)", () => {
  /** A git project with `files` committed. */
  const committedProject = (files: Record<string, string>) => {
    const project = tempProject("git")
    for (const [name, text] of Object.entries(files)) writeFileSync(join(project.root, name), text)
    sh(project.root, "add", "-A")
    sh(project.root, "commit", "-q", "-m", "first")
    return project
  }
  /** The service, its `trackEnded` (the git-backed one has it) and the tree before the step. */
  const trackedBefore = Effect.gen(function* () {
    const snapshot = yield* snap
    const { trackEnded } = snapshot
    if (trackEnded === undefined) return assert.fail("the git-backed snapshot service has trackEnded")
    return { snapshot, trackEnded, before: (yield* snapshot.track) as string }
  })

  it.live.each<readonly [string, boolean]>([
    ["through git (no watch)", false],
    ["with the watch on (its first windows: git reads the work tree)", true]
  ])("leaves out a file modified after the step ended, and records it in the next snapshot: %s", ([, watch]) => {
    const project = committedProject({ "agent.txt": "a0\n", "person.txt": "p0\n" })
    const { root } = project
    // A git whose scan (ls-files) takes half a second.
    const slowGit = join(project.base, "git")
    writeFileSync(slowGit, '#!/bin/sh\ncase "$*" in *ls-files*) sleep 0.5;; esac\nexec git "$@"\n', { mode: 0o755 })
    const { layer } = snapshotLayer(project, {}, { watch, binary: slowGit })
    return Effect.gen(function* () {
      const { snapshot, trackEnded, before } = yield* trackedBefore
      // The step writes agent.txt, and future.txt dated a year ahead (an archive from a machine whose clock ran
      // ahead). A person saves person.txt while git reads the tree after the step (its scan takes half a second
      // here): the save's time is 300 ms after the step's end.
      writeFileSync(join(root, "agent.txt"), "a1\n")
      writeFileSync(join(root, "future.txt"), "f\n")
      const nextYear = new Date(Date.now() + 365 * 24 * 3600 * 1000)
      utimesSync(join(root, "future.txt"), nextYear, nextYear)
      const ended = Date.now()
      writeFileSync(join(root, "person.txt"), "p1 (the person's)\n")
      const soon = new Date(Date.now() + 300)
      utimesSync(join(root, "person.txt"), soon, soon)
      const after = (yield* trackEnded(ended)) as string
      assert.deepStrictEqual(yield* snapshot.patch(before, after), {
        hash: before,
        files: ["agent.txt", "future.txt"],
        after,
        lines: [
          { file: "agent.txt", additions: 1, deletions: 1 },
          { file: "future.txt", additions: 1, deletions: 0 }
        ]
      })
      // The next snapshot (before the next step's tools) has the person's file: no step's patch carries it.
      const next = (yield* snapshot.track) as string
      assert.deepStrictEqual((yield* snapshot.patch(after, next)).files, ["person.txt"])
      assert.strictEqual((yield* snapshot.diffFull(after, next))[0]?.after, "p1 (the person's)\n")
      // Nothing new: the same tree again, and a step that changes nothing has an empty patch.
      assert.strictEqual(yield* snapshot.track, next)
      assert.strictEqual(yield* trackEnded(Date.now()), next)
    }).pipe(Effect.provide(layer))
  })

  it.live.each<readonly [string, boolean]>([
    ["through git (no watch)", false],
    ["with the watch on", true]
  ])(
    "keeps a file written in the millisecond the step ended (a file time keeps the fraction Date.now() drops): %s",
    ([, watch]) => {
      const project = committedProject({ "agent.txt": "a0\n" })
      const { root } = project
      const { layer } = snapshotLayer(project, {}, { watch })
      return Effect.gen(function* () {
        const { snapshot, trackEnded, before } = yield* trackedBefore
        writeFileSync(join(root, "agent.txt"), "a1\n")
        // The step ends in the millisecond of its last write: `Date.now()` there is that millisecond, whole.
        const ended = Date.now() - 50
        const written = (ended + 0.7) / 1000
        utimesSync(join(root, "agent.txt"), written, written)
        const after = (yield* trackEnded(ended)) as string
        assert.deepStrictEqual((yield* snapshot.patch(before, after)).files, ["agent.txt"])
      }).pipe(Effect.provide(layer))
    }
  )
})
