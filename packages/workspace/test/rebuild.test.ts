import { chmodSync, existsSync, readFileSync, renameSync, rmSync, statSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { WorkspaceLog } from "../src/workspace-log.js"
import { MemoryWorkspaceLog } from "../src/workspace-log-memory.js"
import { SqlWorkspaceLog } from "../src/workspace-log-sql.js"
import { Workspaces } from "../src/workspaces.js"
import { binary, freshDatabase, put, sh, sourceRepo, tempDir, tree } from "./helpers.js"

const src = sourceRepo()

/** A `Workspaces` on its own root over the log in context: one runner. */
const runnerOn = (root = tempDir("lathe-ws-runner-")) => Effect.provide(Workspaces, Workspaces.layer({ root }))

/** Every kind of change a tool can make. */
const editEverything = (dir: string) => {
  put(dir, "src/a.ts", "export const a = 42\n// edited\n")
  put(dir, "src/new/deep.ts", "export const deep = true\n")
  rmSync(join(dir, "src/b.ts"))
  put(dir, "logo.bin", binary(13))
  put(dir, "assets/icon.bin", binary(29))
  renameSync(join(dir, "README.md"), join(dir, "docs.md"))
  put(dir, "latin1.txt", Uint8Array.from([0x63, 0x61, 0x66, 0xe9, 0x0a]))
  put(dir, "run.sh", "#!/bin/sh\necho hi\n")
  chmodSync(join(dir, "run.sh"), 0o755)
  put(dir, "debug.log", "ignored\n")
  put(dir, "build/out.js", "ignored too\n")
}

const suite = (name: string, log: () => Layer.Layer<WorkspaceLog, unknown>) =>
  describe(name, () => {
    it.effect("another runner rebuilds a byte-identical tree from the newest checkpoint; ignored files stay out", () =>
      Effect.gen(function* () {
        const first = yield* runnerOn()
        const dir = yield* first.open("ses_rebuild", { repo: src.path, ref: "main" })
        editEverything(dir)
        const done = yield* first.checkpoint("ses_rebuild")
        assert.deepStrictEqual(done, { checkpoint: 1, recorded: true })

        const second = yield* runnerOn()
        const other = yield* second.open("ses_rebuild")
        assert.notStrictEqual(other, dir)
        const expected = tree(dir)
        delete expected["debug.log"]
        delete expected["build/out.js"]
        assert.deepStrictEqual(tree(other), expected)
        assert.isFalse(existsSync(join(other, "debug.log")))
        assert.strictEqual(statSync(join(other, "run.sh")).mode & 0o111, 0o111, "the executable bit survives")
        assert.strictEqual(sh(other, "rev-parse", "HEAD"), src.main)

        const diff = yield* second.diff("ses_rebuild")
        assert.include(diff, "GIT binary patch")
        assert.include(diff, "src/new/deep.ts")
        assert.notInclude(diff, "debug.log")
      }).pipe(Effect.provide(log()))
    )

    it.effect("an unchanged tree writes no checkpoint; a later edit writes the next number", () =>
      Effect.gen(function* () {
        const ws = yield* runnerOn()
        const dir = yield* ws.open("ses_same", { repo: src.path })
        assert.deepStrictEqual(yield* ws.checkpoint("ses_same"), { checkpoint: undefined, recorded: false })
        put(dir, "x.txt", "1\n")
        assert.deepStrictEqual(yield* ws.checkpoint("ses_same"), { checkpoint: 1, recorded: true })
        assert.deepStrictEqual(yield* ws.checkpoint("ses_same"), { checkpoint: 1, recorded: false })
        put(dir, "debug.log", "only an ignored file changed\n")
        assert.deepStrictEqual(yield* ws.checkpoint("ses_same"), { checkpoint: 1, recorded: false })
        put(dir, "x.txt", "2\n")
        assert.deepStrictEqual(yield* ws.checkpoint("ses_same"), { checkpoint: 2, recorded: true })
        assert.deepStrictEqual(yield* (yield* WorkspaceLog).checkpoints("ses_same"), [1, 2])
      }).pipe(Effect.provide(log()))
    )

    it.effect("a crash between edit and checkpoint: reopening on the same root puts back the newest checkpoint", () =>
      Effect.gen(function* () {
        const root = tempDir("lathe-ws-runner-")
        const before = yield* runnerOn(root)
        const dir = yield* before.open("ses_crash", { repo: src.path })
        put(dir, "kept.txt", "recorded\n")
        yield* before.checkpoint("ses_crash")
        const recorded = tree(dir)
        put(dir, "kept.txt", "edited after the checkpoint\n")
        put(dir, "lost.txt", "never recorded\n")
        rmSync(join(dir, "src/a.ts"))
        put(dir, "build/cache.bin", "ignored files survive a reuse\n")
        const inode = statSync(join(dir, ".git")).ino

        const after = yield* runnerOn(root) // the restarted runner: same root, nothing in memory
        assert.strictEqual(yield* after.open("ses_crash"), dir)
        assert.strictEqual(statSync(join(dir, ".git")).ino, inode, "the checkout was reused, not cloned again")
        const now = tree(dir)
        assert.strictEqual(now["build/cache.bin"], Buffer.from("ignored files survive a reuse\n").toString("hex"))
        delete now["build/cache.bin"]
        assert.deepStrictEqual(now, recorded)
        assert.deepStrictEqual(yield* after.checkpoint("ses_crash"), { checkpoint: 1, recorded: false })
      }).pipe(Effect.provide(log()))
    )

    it.effect("checkpoints never touch the checkout's index or HEAD", () =>
      Effect.gen(function* () {
        const ws = yield* runnerOn()
        const dir = yield* ws.open("ses_index", { repo: src.path })
        put(dir, "src/a.ts", "staged\n")
        sh(dir, "add", "src/a.ts")
        put(dir, "untracked.txt", "u\n")
        const index = readFileSync(join(dir, ".git/index"))
        const status = sh(dir, "status", "--porcelain")
        yield* ws.checkpoint("ses_index")
        assert.deepStrictEqual(readFileSync(join(dir, ".git/index")), index)
        assert.strictEqual(sh(dir, "status", "--porcelain"), status)
        assert.strictEqual(sh(dir, "rev-parse", "HEAD"), src.main)
        assert.include(yield* ws.diff("ses_index"), "untracked.txt")
      }).pipe(Effect.provide(log()))
    )

    it.effect("rollback puts a taken-over tree back to the acknowledged checkpoint and records it as the newest", () =>
      Effect.gen(function* () {
        const first = yield* runnerOn()
        const dir = yield* first.open("ses_rollback", { repo: src.path })
        put(dir, "notes/one.txt", "one\n")
        assert.deepStrictEqual(yield* first.checkpoint("ses_rollback"), { checkpoint: 1, recorded: true })
        // A call appended, its checkpoint was recorded, and the process died before the call's result was stored.
        put(dir, "notes/one.txt", "one\nappended\n")
        assert.deepStrictEqual(yield* first.checkpoint("ses_rollback"), { checkpoint: 2, recorded: true })

        const second = yield* runnerOn()
        const other = yield* second.open("ses_rollback")
        assert.strictEqual(readFileSync(join(other, "notes/one.txt"), "utf8"), "one\nappended\n")
        assert.isFalse(yield* second.rollback("ses_rollback", 2), "nothing newer than 2: nothing to do")
        assert.isTrue(yield* second.rollback("ses_rollback", 1))
        assert.strictEqual(readFileSync(join(other, "notes/one.txt"), "utf8"), "one\n")
        assert.notInclude(yield* second.diff("ses_rollback"), "appended")
        assert.isFalse(
          yield* second.rollback("ses_rollback", 1),
          "a second rollback finds nothing newer unacknowledged"
        )
        // The next call's checkpoint follows the rolled-back one; a third runner rebuilds the rolled-back tree.
        put(dir, "ignored-on-the-dead-runner.txt", "x\n")
        put(other, "notes/two.txt", "two\n")
        assert.deepStrictEqual(yield* second.checkpoint("ses_rollback"), { checkpoint: 4, recorded: true })
        const third = yield* (yield* runnerOn()).open("ses_rollback")
        assert.strictEqual(readFileSync(join(third, "notes/one.txt"), "utf8"), "one\n")
        assert.isTrue(existsSync(join(third, "notes/two.txt")))

        // Back to the base when no call was acknowledged.
        const fourth = yield* runnerOn()
        yield* fourth.open("ses_rollback")
        assert.isTrue(yield* fourth.rollback("ses_rollback", undefined))
        assert.strictEqual(yield* fourth.diff("ses_rollback"), "")
      }).pipe(Effect.provide(log()))
    )

    it.effect("close removes the checkout but not the log; diff still works", () =>
      Effect.gen(function* () {
        const ws = yield* runnerOn()
        const dir = yield* ws.open("ses_close", { repo: src.path })
        put(dir, "n.txt", "n\n")
        yield* ws.checkpoint("ses_close")
        yield* ws.close("ses_close")
        assert.isFalse(existsSync(dir))
        assert.strictEqual(ws.directory("ses_close"), undefined)
        assert.include(yield* ws.diff("ses_close"), "n.txt")
        assert.strictEqual((yield* Effect.flip(ws.checkpoint("ses_close")))._tag, "WorkspaceNotFound")
        assert.strictEqual(yield* ws.diff("ses_unknown"), undefined)
      }).pipe(Effect.provide(log()))
    )
  })

suite("rebuilding on the memory log", () => MemoryWorkspaceLog.layer())

const db = Layer.unwrap(Effect.promise(() => freshDatabase("lathe_ws_rebuild")).pipe(Effect.map((d) => d.layer)))
suite("rebuilding on the Postgres log", () => SqlWorkspaceLog.layer().pipe(Layer.provide(db)))
