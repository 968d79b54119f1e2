import { execFileSync } from "node:child_process"
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync
} from "node:fs"
import { hostname } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Snapshot } from "@lathe/core"
import { Duration, Effect } from "effect"
import { hardenedTarget } from "../src/git.js"
import {
  folderBudget,
  MAX_FOLDERS,
  MAX_PATHS,
  makeWatch,
  type WatchView,
  type WorkTreeWatch,
  whyNoWatch
} from "../src/watch.js"
import { loggedGit, sh, snapshotLayer, tempProject, write } from "./helpers.js"

const onLinux = process.platform === "linux" && whyNoWatch(process.cwd(), {}) === undefined

/** A change made by another process, as an editor or a build would make it. */
const appendFromShell = (root: string, path: string) =>
  execFileSync("sh", ["-c", 'printf "more\\n" >> "$1"', "sh", path], { cwd: root })

const paths = (view: WatchView) => (view._tag === "Paths" ? [...view.paths].sort() : view._tag)

/** A committed project, its watch (cookies beside the project) and a git target on the project's own repository. */
const watched = (files: Record<string, string>, tracked: ReadonlyArray<string> = []) => {
  const project = tempProject("git")
  for (const [path, text] of Object.entries(files)) write(project.root, path, text)
  sh(project.root, "add", "-A")
  if (tracked.length > 0) sh(project.root, "add", "-f", ...tracked)
  sh(project.root, "commit", "-q", "-m", "first")
  const watch = makeWatch(project.root, join(project.base, "cookies"))
  return { root: project.root, watch, target: hardenedTarget("git", project.root) }
}

/**
 * Watches again, then spends the window that follows: unknown when a folder was added to the watch (a change made in
 * it before could not be seen), else what it saw.
 */
const rewatch = (watch: WorkTreeWatch, target: ReturnType<typeof hardenedTarget>) =>
  Effect.gen(function* () {
    yield* watch.walk(target)
    return (yield* watch.settle)._tag
  })

/** A git project with `a.txt` and `src/b.ts` committed. */
const committedProject = () => {
  const project = tempProject("git")
  write(project.root, "a.txt", "a\n")
  write(project.root, "src/b.ts", "b\n")
  sh(project.root, "add", "-A")
  sh(project.root, "commit", "-q", "-m", "first")
  return project
}

/** The tree `git add -A` (and `add -f` of `forced`) + `write-tree` records for `root`, through a throwaway index. */
const referenceTree = (root: string, base: string, forced: ReadonlyArray<string> = []) => {
  const env = { ...process.env, GIT_INDEX_FILE: join(base, "reference-index") }
  rmSync(join(base, "reference-index"), { force: true })
  execFileSync("git", ["add", "-A"], { cwd: root, env })
  if (forced.length > 0) execFileSync("git", ["add", "-f", ...forced], { cwd: root, env })
  return execFileSync("git", ["write-tree"], { cwd: root, env, encoding: "utf8" }).trim()
}

/**
 * Snapshots until one runs no git (`count`: the git calls so far): the folders are watched in the background after
 * the first snapshot, then a snapshot of nothing runs none.
 */
const untilQuiet = (snapshot: Snapshot["Service"], count: () => number) =>
  Effect.gen(function* () {
    let quiet = false
    for (let i = 0; i < 100 && !quiet; i++) {
      const before = count()
      yield* snapshot.track
      quiet = count() === before
      if (!quiet) yield* Effect.sleep("20 millis")
    }
    assert.isTrue(quiet, "a snapshot with nothing changed ran git")
  })

describe.runIf(onLinux)("the work tree's watch", () => {
  it.live("names the files changed since the last settle, every change made before the call included", () => {
    const { root, watch, target } = watched({ "a.txt": "a\n", "src/b.ts": "b\n", "src/deep/c.ts": "c\n" })
    return Effect.gen(function* () {
      assert.strictEqual((yield* watch.settle)._tag, "Unknown", "before the folders are watched")
      assert.strictEqual(yield* rewatch(watch, target), "Unknown", "the first window once they are")
      assert.strictEqual(watch.folders(), 3)
      assert.strictEqual((yield* watch.settle)._tag, "Unchanged")
      // No wait between the change and the call: the cookie orders them.
      appendFromShell(root, "src/deep/c.ts")
      write(root, "a.txt", "a2\n")
      assert.deepStrictEqual(paths(yield* watch.settle), ["a.txt", "src/deep/c.ts"])
      assert.strictEqual((yield* watch.settle)._tag, "Unchanged")
      rmSync(join(root, "src/b.ts"))
      write(root, "src/new.ts", "n\n")
      assert.deepStrictEqual(paths(yield* watch.settle), ["src/b.ts", "src/new.ts"])
      watch.close()
      write(root, "a.txt", "a3\n")
      assert.strictEqual((yield* watch.settle)._tag, "Unknown", "once closed")
    })
  })

  it.live("a folder created, moved or removed, or a .gitignore changed, is unknown until it is watched again", () => {
    const { root, watch, target } = watched({ "a.txt": "a\n", "src/b.ts": "b\n" })
    return Effect.gen(function* () {
      yield* rewatch(watch, target)
      const steps: Array<[string, () => void]> = [
        ["a new folder", () => write(root, "fresh/deep/x.ts", "x\n")],
        ["a folder moved", () => renameSync(join(root, "fresh"), join(root, "moved"))],
        ["a folder removed", () => rmSync(join(root, "moved"), { recursive: true })],
        ["a .gitignore written", () => write(root, "src/.gitignore", "*.tmp\n")]
      ]
      for (const [what, change] of steps) {
        change()
        assert.strictEqual((yield* watch.settle)._tag, "Unknown", what)
        assert.isTrue(watch.wantsWalk(), what)
        // Until the folders are watched again, a change in the new one cannot have been seen.
        assert.strictEqual((yield* watch.settle)._tag, "Unknown", `${what}, before the walk`)
        const after = yield* rewatch(watch, target)
        if (what === "a new folder" || what === "a folder moved")
          assert.strictEqual(after, "Unknown", `${what}: folders were added`)
        assert.strictEqual((yield* watch.settle)._tag, "Unchanged", `${what}, watched again`)
      }
      write(root, "src/b.ts", "b2\n")
      assert.deepStrictEqual(paths(yield* watch.settle), ["src/b.ts"])
      watch.close()
    })
  })

  it.live("leaves out ignored folders unless they hold tracked files, and nested repositories", () => {
    const { root, watch, target } = watched(
      {
        ".gitignore": "build/\ndist/\n*.log\n",
        "a.txt": "a\n",
        "build/keep.txt": "tracked though ignored\n",
        "dist/out.js": "built\n",
        "logs/today.log": "only ignored files here\n",
        "vendor/x.ts": "x\n"
      },
      ["build/keep.txt"]
    )
    sh(join(root, "vendor"), "init", "-q", "nested")
    write(root, "vendor/nested/inner.ts", "inner\n")
    return Effect.gen(function* () {
      yield* rewatch(watch, target)
      // root, build (it holds a tracked file), logs (not ignored itself), vendor; not dist, not vendor/nested.
      assert.strictEqual(watch.folders(), 4)
      write(root, "dist/more.js", "built again\n")
      write(root, "vendor/nested/inner.ts", "changed in the nested repository\n")
      assert.strictEqual((yield* watch.settle)._tag, "Unchanged")
      appendFromShell(root, "build/keep.txt")
      write(root, "logs/notes.md", "a file git sees, in a folder of ignored ones\n")
      assert.deepStrictEqual(paths(yield* watch.settle), ["build/keep.txt", "logs/notes.md"])
      watch.close()
    })
  })

  it.live("starts again when its cookie folder is removed (the shadow repository re-created)", () => {
    const { root, watch, target } = watched({ "a.txt": "a\n" })
    const cookies = join(root, "..", "cookies")
    return Effect.gen(function* () {
      yield* rewatch(watch, target)
      rmSync(cookies, { recursive: true, force: true })
      write(root, "a.txt", "a2\n")
      assert.strictEqual((yield* watch.settle)._tag, "Unknown")
      assert.isTrue(watch.wantsWalk())
      yield* rewatch(watch, target)
      write(root, "a.txt", "a3\n")
      assert.deepStrictEqual(paths(yield* watch.settle), ["a.txt"])
      watch.close()
    })
  })

  it.live("shares the cookie folder with another Lathe on the project: neither breaks the other's", () => {
    const { root, watch, target } = watched({ "a.txt": "a\n", "src/b.ts": "b\n" })
    const cookies = join(root, "..", "cookies")
    // What a crashed Lathe of this host left, and a folder of a process that still runs (the test's parent).
    mkdirSync(join(cookies, `${hostname()}-999999999-gone`), { recursive: true })
    mkdirSync(join(cookies, `${hostname()}-${process.ppid}-alive`), { recursive: true })
    return Effect.gen(function* () {
      yield* rewatch(watch, target)
      assert.isFalse(existsSync(join(cookies, `${hostname()}-999999999-gone`)), "a dead process's folder is swept")
      assert.isTrue(existsSync(join(cookies, `${hostname()}-${process.ppid}-alive`)), "a live one's is kept")
      const other = makeWatch(root, cookies)
      yield* rewatch(other, target)
      write(root, "a.txt", "a2\n")
      assert.deepStrictEqual(paths(yield* watch.settle), ["a.txt"])
      assert.deepStrictEqual(paths(yield* other.settle), ["a.txt"])
      other.close()
      write(root, "src/b.ts", "b2\n")
      assert.deepStrictEqual(paths(yield* watch.settle), ["src/b.ts"], "after the other one closed")
      watch.close()
    })
  })

  it.live("watches nothing past its budget of folders (a share of the kernel's watches), and says unknown", () => {
    const { root, target } = watched({ "a.txt": "a\n", "src/b.ts": "b\n", "src/c/d.ts": "d\n", "e/f.ts": "f\n" })
    const watch = makeWatch(root, join(root, "..", "cookies"), 3)
    return Effect.gen(function* () {
      yield* watch.walk(target)
      assert.strictEqual(watch.folders(), 0)
      write(root, "a.txt", "a2\n")
      assert.strictEqual((yield* watch.settle)._tag, "Unknown")
      assert.isFalse(watch.wantsWalk(), "it does not try again")
      assert.isAtMost(folderBudget(), MAX_FOLDERS)
    })
  })

  it.live("gives up a window of more than MAX_PATHS changes, and the window after it", () => {
    const { root, watch, target } = watched({ "a.txt": "a\n", "src/b.ts": "b\n" })
    return Effect.gen(function* () {
      yield* rewatch(watch, target)
      for (let i = 0; i <= MAX_PATHS; i++) write(root, `src/f${i}.ts`, `${i}\n`)
      assert.strictEqual((yield* watch.settle)._tag, "Unknown")
      // The kernel may have dropped events of the next window when its queue was full.
      assert.strictEqual((yield* watch.settle)._tag, "Unknown")
      assert.strictEqual((yield* watch.settle)._tag, "Unchanged")
      watch.close()
    })
  })
})

describe.runIf(onLinux)("snapshots with the watch", () => {
  it.live("take the scan that follows new watches themselves, so the next snapshot names the changed path", () => {
    const project = committedProject()
    const { root, base } = project
    const { calls, wrapper } = loggedGit(base)
    const scans = () =>
      readFileSync(calls, "utf8")
        .split("\n")
        .filter((line) => line.includes(" ls-files -z -t")).length
    const { layer } = snapshotLayer(project, {}, { binary: wrapper })
    return Effect.gen(function* () {
      const snapshot = yield* Snapshot
      yield* snapshot.track
      assert.strictEqual(scans(), 1)
      // No snapshot asked for: the layer watches the folders, then scans once by itself.
      for (let i = 0; i < 200 && scans() < 2; i++) yield* Effect.sleep(Duration.millis(10))
      assert.strictEqual(scans(), 2, "the scan after the folders were watched")
      const from = readFileSync(calls, "utf8").length
      appendFromShell(root, "src/b.ts")
      yield* snapshot.track
      const made = readFileSync(calls, "utf8").slice(from).split("\n")
      // It names the path to git, or (a file the last tree has) writes the tree without git: never a full scan.
      const scansMade = made.filter((line) => line.includes(" ls-files -z -t"))
      assert.isTrue(
        scansMade.every((line) => line.includes(":(top,literal)src/b.ts")),
        `the step's snapshot named the path: ${scansMade.join("; ")}`
      )
    }).pipe(Effect.provide(layer))
  })

  it.live.each<readonly [string, number]>([
    ["with a pause after each change (a model's answer)", 50],
    ["back to back (a walk of the folders still running)", 0]
  ])("record the tree a full scan records after every kind of change, %s", ([, pause]) => {
    const project = tempProject("git")
    const { root, base } = project
    write(root, ".gitignore", "build/\n*.log\n")
    write(root, "a.txt", "a\n")
    write(root, "src/b.ts", "b\n")
    write(root, "build/keep.txt", "tracked though ignored\n")
    write(root, "logs/today.log", "ignored\n")
    // 245 paths of ~253 bytes: under the watch's 500 paths, over the 64 KiB of paths a scan names to git.
    const long = Array.from({ length: 245 }, (_, i) => `logs/${"n".repeat(240)}-${i}.txt`)
    for (const name of long) write(root, name, "long\n")
    sh(root, "add", "-A")
    sh(root, "add", "-f", "build/keep.txt")
    sh(root, "commit", "-q", "-m", "first")
    const { calls, wrapper } = loggedGit(base)
    const { layer } = snapshotLayer(project, {}, { binary: wrapper })
    /** What a full scan records: every file git does not ignore. */
    const fullScan = () => referenceTree(root, base, ["build/keep.txt"])
    const callsSince = (from: number) => readFileSync(calls, "utf8").trim().split("\n").filter(Boolean).slice(from)
    const count = () => callsSince(0).length
    return Effect.gen(function* () {
      const snapshot = yield* Snapshot
      yield* snapshot.track
      yield* untilQuiet(snapshot, count)
      const changes: Array<[string, () => void]> = [
        ["a tracked file written by another process", () => appendFromShell(root, "a.txt")],
        ["a new file", () => write(root, "src/c.ts", "c\n")],
        ["a new file among ignored ones", () => write(root, "logs/notes.md", "n\n")],
        ["a tracked file in an ignored folder", () => appendFromShell(root, "build/keep.txt")],
        ["an ignored file", () => write(root, "build/other.txt", "o\n")],
        [
          "245 long names changed: more bytes of paths than are named to git",
          () => {
            for (const name of long) appendFileSync(join(root, name), "more\n")
          }
        ],
        ["a file in new folders", () => write(root, "new/deep/x.ts", "x\n")],
        ["a file in the new folder changed", () => appendFromShell(root, "new/deep/x.ts")],
        ["a file removed", () => rmSync(join(root, "src/b.ts"))],
        ["a folder renamed", () => renameSync(join(root, "src"), join(root, "lib"))],
        ["a file in the renamed folder", () => write(root, "lib/d.ts", "d\n")],
        ["a pattern dropped from .gitignore", () => write(root, ".gitignore", "build/\n")],
        // A stranger's repository names its files: they reach git as literal pathspecs, never through a shell.
        ["a name that is shell syntax", () => write(root, "lib/$(touch pwned)'\"; x `touch pwned2`.ts", "s\n")],
        ["a name with a newline and a glob", () => write(root, "lib/we\nird*[a].txt", "w\n")],
        ["nothing", () => {}]
      ]
      let scopedScans = 0
      for (const [what, change] of changes) {
        change()
        const from = count()
        const hash = yield* snapshot.track
        assert.strictEqual(hash, fullScan(), what)
        // A scan of the changed paths only names them to git.
        if (callsSince(from).some((line) => line.includes(":(top,literal)"))) scopedScans++
        if (what === "nothing" && pause > 0) assert.deepStrictEqual(callsSince(from), [], what)
        if (what.startsWith("245 long names"))
          assert.isFalse(
            callsSince(from).some((line) => line.includes(":(top,literal)")),
            `${what}: a full scan`
          )
        if (pause > 0) yield* Effect.sleep(Duration.millis(pause))
      }
      if (pause > 0) assert.isAtLeast(scopedScans, 4, "snapshots that asked git about the changed paths only")
      assert.isFalse(existsSync(join(root, "pwned")) || existsSync(join(root, "pwned2")), "a file name ran a command")
    }).pipe(Effect.provide(layer))
  })

  it.live(
    "leave a file saved after the step ended to the next snapshot, when the tree is written without git too",
    () => {
      const project = committedProject()
      const { root, base } = project
      const { calls, wrapper } = loggedGit(base)
      const count = () => readFileSync(calls, "utf8").trim().split("\n").filter(Boolean).length
      const { layer } = snapshotLayer(project, {}, { binary: wrapper })
      return Effect.gen(function* () {
        const snapshot = yield* Snapshot
        const trackEnded = snapshot.trackEnded
        if (trackEnded === undefined) return assert.fail("the git-backed service takes the tree after a step")
        const before = (yield* snapshot.track) as string
        yield* untilQuiet(snapshot, count)
        // The step changes a.txt; after it ended, a person saves src/b.ts (both files the last tree has, so the watch
        // names them and the tree could be written in memory).
        appendFromShell(root, "a.txt")
        const ended = Date.now()
        // Later than a file time's lag behind the clock (a timer tick), earlier than the snapshot's scan.
        yield* Effect.sleep("30 millis")
        appendFromShell(root, "src/b.ts")
        const after = (yield* trackEnded(ended)) as string
        assert.deepStrictEqual((yield* snapshot.patch(before, after)).files, ["a.txt"])
        // The next snapshot has the person's save; the two together are the work tree.
        const next = (yield* snapshot.track) as string
        assert.deepStrictEqual((yield* snapshot.patch(after, next)).files, ["src/b.ts"])
        assert.strictEqual(next, referenceTree(root, base))
      }).pipe(Effect.provide(layer))
    }
  )

  it.live("need the lock file only when git writes the tree: another Lathe holding it holds up only those", () => {
    const project = committedProject()
    const { root, base } = project
    const { calls, wrapper } = loggedGit(base)
    const made = () => readFileSync(calls, "utf8").trim().split("\n").filter(Boolean)
    const count = () => made().length
    const { layer } = snapshotLayer(project, {}, { binary: wrapper, lock: { wait: "300 millis" } })
    const fullScan = () => referenceTree(root, base)
    return Effect.gen(function* () {
      const snapshot = yield* Snapshot
      yield* snapshot.track
      yield* untilQuiet(snapshot, count)
      // Another live Lathe process (this one's pid, another token) holds the lock.
      const shadows = readdirSync(join(project.data, "snapshot")).filter((name) => !name.endsWith(".lock"))
      assert.strictEqual(shadows.length, 1)
      const lock = join(project.data, "snapshot", `${shadows[0]}.lock`)
      writeFileSync(lock, `${process.pid} ${hostname()} another-session`)
      const before = count()
      appendFromShell(root, "src/b.ts")
      assert.strictEqual(yield* snapshot.track, fullScan(), "a file the last tree has: written without the lock")
      assert.strictEqual(yield* snapshot.track, fullScan(), "nothing changed")
      // Git read the folders' trees (one long-lived reader): it wrote nothing.
      assert.deepStrictEqual(
        made()
          .slice(before)
          .filter((line) => !line.endsWith("cat-file --batch")),
        [],
        "no git wrote"
      )
      assert.strictEqual(readFileSync(lock, "utf8"), `${process.pid} ${hostname()} another-session`)
      // A new file needs git (the ignore rules), which needs the lock: it waits, and says who holds it.
      write(root, "src/c.ts", "c\n")
      const error = yield* Effect.flip(snapshot.track)
      assert.include(error.message, "has held the snapshot lock")
      rmSync(lock)
      assert.strictEqual(yield* snapshot.track, fullScan(), "once the lock is free")
      assert.isFalse(existsSync(lock), "released")
    }).pipe(Effect.provide(layer))
  })
})
