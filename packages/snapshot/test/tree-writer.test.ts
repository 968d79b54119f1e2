/**
 * Snapshots of files the last tree has, written without git (`tree-writer.ts`): after each kind of change the tree is
 * the one a full scan records (a throwaway index, `git add -A`, `write-tree`), git runs only where it must, the
 * objects written are objects git reads (restore goes back to such a tree), and a repository with attributes that
 * rewrite a file's bytes is left to git.
 */
import { execFileSync } from "node:child_process"
import { chmodSync, lstatSync, readFileSync, rmSync, symlinkSync, unlinkSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Snapshot } from "@lathe/core"
import { Duration, Effect } from "effect"
import { hardenedTarget } from "../src/git.js"
import { makeObjectReader } from "../src/object-reader.js"
import type { Shadow } from "../src/shadow-repo.js"
import { knownTree, writeKnown } from "../src/tree-writer.js"
import { whyNoWatch } from "../src/watch.js"
import { loggedGit, sh, shadowDir, snapshotLayer, tempProject, write } from "./helpers.js"

const onLinux = process.platform === "linux" && whyNoWatch(process.cwd(), {}) === undefined

/** A committed project with `files`, a logging git for its snapshots, and what a full scan records. */
const project = (files: Record<string, string>, config: Parameters<typeof snapshotLayer>[1] = {}) => {
  const p = tempProject("git")
  for (const [path, text] of Object.entries(files)) write(p.root, path, text)
  sh(p.root, "add", "-A")
  sh(p.root, "commit", "-q", "-m", "first")
  const { calls, wrapper } = loggedGit(p.base)
  const { layer } = snapshotLayer(p, config, { binary: wrapper })
  /** What a full scan records: every file git does not ignore (but files over `maxFileSize`), in a throwaway index. */
  const fullScan = (maxFileSize = Number.POSITIVE_INFINITY) => {
    const env = { ...process.env, GIT_INDEX_FILE: join(p.base, "reference-index") }
    rmSync(join(p.base, "reference-index"), { force: true })
    execFileSync("git", ["add", "-A"], { cwd: p.root, env })
    const listed = execFileSync("git", ["ls-files", "-z"], { cwd: p.root, env, encoding: "utf8" }).split("\0")
    const large = listed.filter((path) => path !== "" && lstatSync(join(p.root, path)).size > maxFileSize)
    if (large.length > 0) execFileSync("git", ["rm", "-q", "--cached", "--", ...large], { cwd: p.root, env })
    return execFileSync("git", ["write-tree"], { cwd: p.root, env, encoding: "utf8" }).trim()
  }
  const count = () => readFileSync(calls, "utf8").split("\n").filter(Boolean).length
  /** The git processes started since call `from`, but the long-lived object reader (started once). */
  const callsSince = (from: number) =>
    readFileSync(calls, "utf8")
      .split("\n")
      .filter(Boolean)
      .slice(from)
      .filter((line) => !line.endsWith("cat-file --batch"))
  /** Git on the project's shadow repository (where snapshots are stored). */
  const shadowGit = (...args: Array<string>) =>
    execFileSync("git", ["--git-dir", shadowDir(p), ...args], { encoding: "utf8" })
  return { root: p.root, layer, fullScan, count, callsSince, shadowGit }
}

/** Snapshots until one with nothing changed runs no git: the folders are watched and the tree is known. */
const settled = (count: () => number) =>
  Effect.gen(function* () {
    const snapshot = yield* Snapshot
    for (let i = 0; i < 100; i++) {
      const before = count()
      yield* snapshot.track
      if (count() === before) return
      yield* Effect.sleep("20 millis")
    }
    assert.fail("a snapshot with nothing changed ran git")
  })

describe.runIf(onLinux)("snapshots written without git", () => {
  it.live("record what a full scan records, run git only where they must, and restore", () => {
    const { root, layer, fullScan, count, callsSince, shadowGit } = project(
      {
        "a.txt": "a\n",
        "src.txt": "beside the folder src/\n",
        "run.sh": "echo hi\n",
        "src/deep/one.ts": "one\n",
        "src/deep/two.ts": "two\n",
        "src/keep.ts": "keep\n",
        "big.bin": "small for now\n",
        "é/ünïcode ✓.md": "u\n",
        ".gitignore": "*.log\n"
      },
      { snapshot: { max_file_size: 1_000 } }
    )
    symlinkSync("a.txt", join(root, "link"))
    return Effect.gen(function* () {
      const snapshot = yield* Snapshot
      const first = yield* snapshot.track
      assert.strictEqual(first, fullScan(1_000), "the first snapshot")
      yield* settled(count)
      const changes: ReadonlyArray<readonly [string, () => void, "memory" | "git"]> = [
        ["a file rewritten", () => write(root, "a.txt", "a2\n"), "memory"],
        [
          "two files in one folder and one above",
          () => {
            write(root, "src/deep/one.ts", "one2\n")
            write(root, "src/deep/two.ts", "two2\n")
            write(root, "src/keep.ts", "keep2\n")
          },
          "memory"
        ],
        ["a file made executable", () => chmodSync(join(root, "run.sh"), 0o755), "memory"],
        // Git looks at the owner's execute bit only.
        ["a file executable by its group alone", () => chmodSync(join(root, "a.txt"), 0o654), "memory"],
        [
          "a symlink pointed elsewhere",
          () => {
            unlinkSync(join(root, "link"))
            symlinkSync("run.sh", join(root, "link"))
          },
          "memory"
        ],
        [
          "a file named like a folder beside it, and a file in that folder",
          () => {
            write(root, "src.txt", "s2\n")
            write(root, "src/keep.ts", "keep3\n")
          },
          "memory"
        ],
        ["a file with a name in UTF-8", () => write(root, "é/ünïcode ✓.md", "u2\n"), "memory"],
        ["a new file (the ignore rules are git's)", () => write(root, "src/new.ts", "new\n"), "git"],
        ["a file written earlier, and again", () => write(root, "a.txt", "a3\n"), "memory"],
        ["a file grown past max_file_size", () => write(root, "big.bin", "x".repeat(2_000)), "git"],
        [
          "the two files of a folder removed (the folder goes)",
          () => {
            rmSync(join(root, "src/deep/one.ts"))
            rmSync(join(root, "src/deep/two.ts"))
          },
          "memory"
        ],
        ["a file changed back to what it was", () => write(root, "src/keep.ts", "keep\n"), "memory"],
        [
          "a file replaced by a folder",
          () => {
            rmSync(join(root, "run.sh"))
            write(root, "run.sh/inner.txt", "inner\n")
          },
          "git"
        ],
        [
          "a file made and removed in between, and a file changed",
          () => {
            write(root, "a.log", "ignored\n")
            rmSync(join(root, "a.log"))
            write(root, "a.txt", "a4\n")
          },
          "memory"
        ]
      ]
      const trees: Array<readonly [string, string]> = []
      for (const [what, change, by] of changes) {
        change()
        // A model's answer between steps: the watch has reported the change, and any walk is done.
        yield* Effect.sleep(Duration.millis(60))
        const from = count()
        const hash = yield* snapshot.track
        assert.strictEqual(hash, fullScan(1_000), what)
        if (by === "memory") assert.deepStrictEqual(callsSince(from), [], `${what}: no git`)
        else assert.isAbove(callsSince(from).length, 0, `${what}: through git`)
        trees.push([what, hash as string])
        yield* settled(count)
      }
      // The objects written are git's: git checks them all, restore goes back to a tree written without git, and
      // patch lists its files.
      shadowGit("fsck", "--strict", "--no-dangling", ...trees.map(([, hash]) => hash))
      const [, rewritten] = trees[1] as readonly [string, string]
      const patch = yield* snapshot.patch(first as string, rewritten)
      assert.deepStrictEqual([...patch.files].sort(), ["a.txt", "src/deep/one.ts", "src/deep/two.ts", "src/keep.ts"])
      rmSync(join(root, "run.sh"), { recursive: true })
      yield* snapshot.restore(rewritten)
      assert.strictEqual(readFileSync(join(root, "src/deep/one.ts"), "utf8"), "one2\n")
      assert.strictEqual(readFileSync(join(root, "a.txt"), "utf8"), "a2\n")
      assert.strictEqual(readFileSync(join(root, "run.sh"), "utf8"), "echo hi\n")
    }).pipe(Effect.provide(layer))
  })

  it.live("leave a repository with an attributes file to git (its text attributes rewrite line ends)", () => {
    const { root, layer, fullScan, count, callsSince } = project({
      ".gitattributes": "*.txt text eol=lf\n",
      "notes/a.txt": "a\n"
    })
    return Effect.gen(function* () {
      const snapshot = yield* Snapshot
      yield* snapshot.track
      yield* settled(count)
      write(root, "notes/a.txt", "one\r\ntwo\r\n")
      yield* Effect.sleep(Duration.millis(60))
      const from = count()
      const hash = yield* snapshot.track
      assert.strictEqual(hash, fullScan())
      assert.isAbove(callsSince(from).length, 0, "git wrote it")
    }).pipe(Effect.provide(layer))
  })

  it.live("never reads a file through a folder that became a symlink: that is left to git", () => {
    const p = tempProject("git")
    write(p.root, "a.txt", "a\n")
    write(p.root, "src/x.ts", "x\n")
    sh(p.root, "add", "-A")
    sh(p.root, "commit", "-q", "-m", "first")
    const { layer } = snapshotLayer(p)
    return Effect.gen(function* () {
      const first = (yield* (yield* Snapshot).track) as string
      // Between the watch's window and the write, `src` becomes a link to a folder outside the project.
      const outside = join(p.base, "outside")
      write(outside, "x.ts", "someone else's file\n")
      rmSync(join(p.root, "src"), { recursive: true })
      symlinkSync(outside, join(p.root, "src"))
      write(p.root, "a.txt", "a2\n")
      const shadow = { root: p.root, gitDir: shadowDir(p) } as Shadow
      const reader = makeObjectReader(hardenedTarget("git", p.root, ["--git-dir", shadowDir(p)]))
      yield* Effect.addFinalizer(() => Effect.sync(reader.close))
      const limits = { maxFileSize: 1_000_000, maxSnapshotSize: 1_000_000 }
      const through = yield* Effect.promise(() => writeKnown(shadow, knownTree(first), reader, ["src/x.ts"], limits))
      assert.isUndefined(through, "a path through a symlink goes to git")
      const known = knownTree(first)
      const hash = yield* Effect.promise(() => writeKnown(shadow, known, reader, ["a.txt"], limits))
      assert.isString(hash, "a file beside it is written")
      assert.strictEqual(
        execFileSync("git", ["--git-dir", shadowDir(p), "show", `${hash}:a.txt`], { encoding: "utf8" }),
        "a2\n"
      )
    }).pipe(Effect.provide(layer), Effect.scoped)
  })
})
