import { join } from "node:path"
import { DatabaseSync } from "node:sqlite"
import { assert, describe, it } from "@effect/vitest"
import { definePlugin, Tool } from "@lathe/plugin"
import type { PatchPart, StepFinishPart, StepStartPart } from "@lathe/plugin/schema"
import { Effect, Layer } from "effect"
import { z } from "zod"
import { Snapshot } from "../src/contracts/snapshot.js"
import { SqliteSessionStore } from "../src/store/session-store-sqlite.js"
import { chunks, testLoopLayer } from "../src/testing/index.js"
import { AskTool, allParts, runTurn, tempRoot } from "./loop-helpers.js"

const tools = definePlugin({ name: "test-tools", setup: () => ({ tools: [AskTool] }) })

/**
 * Each `track` returns a new tree; `patch` reports `changed` as the files changed since any hash (and, with `after`,
 * names the tree it measured them to, as the git-backed service does).
 */
const snapshots = (changed: Array<string>, after?: string) => {
  const calls: Array<string> = []
  let tree = 0
  const layer = Layer.succeed(
    Snapshot,
    Snapshot.of({
      track: Effect.sync(() => {
        calls.push("track")
        return `tree${++tree}`
      }),
      patch: (hash) =>
        Effect.sync(() => {
          calls.push(`patch ${hash}`)
          return { hash, files: changed, ...(after === undefined ? {} : { after }) }
        }),
      diff: () => Effect.succeed(""),
      diffFull: () => Effect.succeed([]),
      restore: () => Effect.void,
      revert: () => Effect.void
    })
  )
  return { calls, layer }
}

const script = [
  [chunks.toolCall("c1", "guarded", { path: "x.txt" }), chunks.finish({ input: 1, output: 1 }, "tool-calls")],
  [chunks.text("done"), chunks.finish({ input: 1, output: 1 })]
]

const partsOf = <T extends { readonly type: string }>(parts: ReadonlyArray<{ readonly type: string }>, type: string) =>
  parts.filter((p) => p.type === type) as unknown as Array<T>

describe("step-finish snapshot", () => {
  const changing = snapshots(["x.txt"])
  it.live(
    "is the tree after a step that changed files (tracked at the step's end, off its path), the patch's hash the one before",
    () =>
      Effect.gen(function* () {
        const parts = allParts(yield* runTurn("write x"))
        const [start] = partsOf<StepStartPart>(parts, "step-start").filter((p) => p.snapshot !== undefined)
        const [patch] = partsOf<PatchPart>(parts, "patch")
        const [finish, last] = partsOf<StepFinishPart>(parts, "step-finish")
        assert.strictEqual(start?.snapshot, "tree1")
        assert.strictEqual(patch?.hash, "tree1")
        assert.deepStrictEqual(patch?.files, ["x.txt"])
        assert.strictEqual(finish?.snapshot, "tree2")
        assert.isUndefined(last?.snapshot, "a step without a tool that may change files takes no snapshot")
        // The loop goes on after the step: the tree after it is taken first, then the patch between the two trees.
        assert.deepStrictEqual(changing.calls, ["track", "track", "patch tree1"])
      }).pipe(
        Effect.provide(
          testLoopLayer({ root: tempRoot(), plugins: [tools], snapshotLayer: changing.layer, steps: script })
        )
      )
  )

  const measured = snapshots(["x.txt"], "tree-after")
  it.live("is the tree the patch was measured to when the service names it, on a step the loop stops after", () =>
    Effect.gen(function* () {
      const parts = allParts(yield* runTurn("write x"))
      const [patch] = partsOf<PatchPart>(parts, "patch")
      const [finish] = partsOf<StepFinishPart>(parts, "step-finish")
      assert.strictEqual(patch?.hash, "tree1")
      assert.strictEqual(finish?.snapshot, "tree-after")
      assert.deepStrictEqual(measured.calls, ["track", "patch tree1"])
    }).pipe(
      Effect.provide(
        // The call is refused (the loop stops): the patch is taken inline, and names its tree (no second snapshot).
        testLoopLayer({
          root: tempRoot(),
          plugins: [tools],
          snapshotLayer: measured.layer,
          steps: script,
          permission: "deny"
        })
      )
    )
  )

  const unchanged = snapshots([])
  it.live("is the tree taken before the tools when a step the loop stops after changed nothing", () =>
    Effect.gen(function* () {
      const parts = allParts(yield* runTurn("write nothing"))
      assert.lengthOf(partsOf<PatchPart>(parts, "patch"), 0)
      const [finish] = partsOf<StepFinishPart>(parts, "step-finish")
      assert.strictEqual(finish?.snapshot, "tree1")
      assert.deepStrictEqual(unchanged.calls, ["track", "patch tree1"])
    }).pipe(
      Effect.provide(
        testLoopLayer({
          root: tempRoot(),
          plugins: [tools],
          snapshotLayer: unchanged.layer,
          steps: script,
          permission: "deny"
        })
      )
    )
  )
})

/**
 * A snapshot service whose `track` takes `trackMs` and `patch` `patchMs` (as git calls do), logging into `log` when
 * each starts and ends, beside the requests a plugin logs.
 */
const slowSnapshots = (log: Array<string>, trackMs: number, patchMs: number) => {
  let tree = 0
  return Layer.succeed(
    Snapshot,
    Snapshot.of({
      track: Effect.gen(function* () {
        log.push("track")
        yield* Effect.sleep(trackMs)
        log.push(`tree${++tree}`)
        return `tree${tree}`
      }),
      patch: (hash, to) =>
        Effect.gen(function* () {
          log.push(`patch ${hash}..${to}`)
          yield* Effect.sleep(patchMs)
          log.push(`patched ${hash}..${to}`)
          return { hash, files: ["x.txt"], ...(to === undefined ? {} : { after: to }) }
        }),
      diff: () => Effect.succeed(""),
      diffFull: () => Effect.succeed([]),
      restore: () => Effect.void,
      revert: () => Effect.void
    })
  )
}

const requests = (log: Array<string>) =>
  definePlugin({
    name: "requests",
    setup: () => ({
      tools: [AskTool],
      "chat.params": () => {
        log.push("request")
      }
    })
  })

describe("a step's patch, off the step's path", () => {
  const log: Array<string> = []
  it.live("is recorded once the next request is out, and stored (before the step-finish) when the turn ends", () =>
    Effect.gen(function* () {
      const parts = allParts(yield* runTurn("write x"))
      assert.deepStrictEqual(log, [
        "request",
        "track",
        "tree1",
        // The next request first, then the tree after the step and its patch between the two trees.
        "request",
        "track",
        "tree2",
        "patch tree1..tree2",
        "patched tree1..tree2"
      ])
      const [patch] = partsOf<PatchPart>(parts, "patch")
      const [finish] = partsOf<StepFinishPart>(parts, "step-finish")
      assert.strictEqual(patch?.hash, "tree1")
      assert.strictEqual(finish?.snapshot, "tree2", "the step-finish names the tree the patch measured to")
      assert.isBelow(parts.indexOf(patch as PatchPart), parts.indexOf(finish as StepFinishPart))
    }).pipe(
      Effect.provide(
        testLoopLayer({
          root: tempRoot(),
          plugins: [requests(log)],
          snapshotLayer: slowSnapshots(log, 100, 100),
          steps: script
        })
      )
    )
  )

  const twice = [
    [chunks.toolCall("c1", "guarded", { path: "x.txt" }), chunks.finish({ input: 1, output: 1 }, "tool-calls")],
    [chunks.toolCall("c2", "guarded", { path: "x.txt" }), chunks.finish({ input: 1, output: 1 }, "tool-calls")],
    [chunks.text("done"), chunks.finish({ input: 1, output: 1 })]
  ]
  const order: Array<string> = []
  it.live("the next step's first mutating call waits for the tree after the previous step, not for its lines", () =>
    Effect.gen(function* () {
      const parts = allParts(yield* runTurn("write x twice"))
      const at = (entry: string, nth = 1) => {
        let seen = 0
        const index = order.findIndex((e) => e === entry && ++seen === nth)
        assert.isAtLeast(index, 0, `${entry} (${nth}) in ${order.join(", ")}`)
        return index
      }
      // Step 2's snapshot (the third track) starts once tree2 (after step 1) is recorded, and ends (tree3) while
      // step 1's lines are still being counted.
      assert.isBelow(at("request", 2), at("tree2"))
      assert.isBelow(at("tree2"), at("track", 3))
      assert.isBelow(at("tree3"), at("patched tree1..tree2"))
      // Nor does step 2's end: the third request goes out while step 1's lines are still being counted, and step 2's
      // patch is measured once step 1's is stored.
      assert.isBelow(at("request", 3), at("patched tree1..tree2"))
      assert.isBelow(at("patched tree1..tree2"), at("patch tree3..tree4"))
      assert.include(order, "patched tree3..tree4")
      assert.deepStrictEqual(
        partsOf<PatchPart>(parts, "patch").map((p) => p.hash),
        ["tree1", "tree3"]
      )
      assert.deepStrictEqual(
        partsOf<StepFinishPart>(parts, "step-finish").map((p) => p.snapshot),
        ["tree2", "tree4", undefined]
      )
    }).pipe(
      Effect.provide(
        testLoopLayer({
          root: tempRoot(),
          plugins: [requests(order)],
          snapshotLayer: slowSnapshots(order, 50, 400),
          steps: twice
        })
      )
    )
  )
})

describe("the tree after a step, taken while the next request is out", () => {
  const calls: Array<string> = []
  const ended: Array<number> = []
  let tree = 0
  const service = Snapshot.of({
    track: Effect.sync(() => {
      calls.push("track")
      return `tree${++tree}`
    }),
    trackEnded: (endedAt) =>
      Effect.sync(() => {
        calls.push("trackEnded")
        ended.push(endedAt)
        return `tree${++tree}`
      }),
    patch: (hash, to) => Effect.succeed({ hash, files: ["x.txt"], ...(to === undefined ? {} : { after: to }) }),
    diff: () => Effect.succeed(""),
    diffFull: () => Effect.succeed([]),
    restore: () => Effect.void,
    revert: () => Effect.void
  })
  it.live("is taken with trackEnded when the service has it (a person's save meanwhile is not the step's)", () =>
    Effect.gen(function* () {
      const began = Date.now()
      const parts = allParts(yield* runTurn("write x"))
      assert.deepStrictEqual(calls, ["track", "trackEnded"])
      // As of the step's end (this machine's clock, as file times are), not of when the tree was taken.
      assert.lengthOf(ended, 1)
      assert.isAtLeast(ended[0] ?? 0, began)
      assert.isAtMost(ended[0] ?? 0, Date.now())
      assert.deepStrictEqual(
        partsOf<StepFinishPart>(parts, "step-finish").map((p) => p.snapshot),
        ["tree2", undefined]
      )
    }).pipe(
      Effect.provide(
        testLoopLayer({
          root: tempRoot(),
          plugins: [tools],
          snapshotLayer: Layer.succeed(Snapshot, service),
          steps: script
        })
      )
    )
  )
})

describe("a step's patch, off the step's path, in the store", () => {
  // A read-only call that takes long enough for the previous step's patch to be recorded meanwhile (its start waits
  // at most 20 ms for the next request to be written out).
  const Wait = Tool.define("wait", {
    description: "Waits a little",
    parameters: z.object({}),
    mutates: false,
    execute: async () => {
      await new Promise((resolve) => setTimeout(resolve, 150))
      return { title: "waited", output: "done" }
    }
  })
  const file = join(tempRoot(), "lathe.db")
  /** What is on disk now, read through a connection of its own: the types of the parts, tool calls with their status. */
  const onDisk = (): Array<string> => {
    const db = new DatabaseSync(file)
    try {
      return db
        .prepare("SELECT data FROM part ORDER BY id")
        .all()
        .map((row) => {
          const part = JSON.parse(String(row.data)) as { type: string; tool?: string; state?: { status: string } }
          return part.type === "tool" ? `${part.tool} ${part.state?.status}` : part.type
        })
    } finally {
      db.close()
    }
  }
  const seen: Array<Array<string>> = []
  const watch = definePlugin({
    name: "on-disk",
    setup: () => ({
      tools: [AskTool, Wait],
      "chat.params": () => {
        seen.push(onDisk())
      }
    })
  })
  const steps = [
    [chunks.toolCall("c1", "guarded", { path: "x.txt" }), chunks.finish({ input: 1, output: 1 }, "tool-calls")],
    [chunks.toolCall("c2", "wait", {}), chunks.finish({ input: 1, output: 1 }, "tool-calls")],
    [chunks.text("done"), chunks.finish({ input: 1, output: 1 })]
  ]
  it.live(
    "goes to disk with the store's batch, not in a write of its own; a call that changed files is on disk at once",
    () =>
      Effect.gen(function* () {
        const parts = allParts(yield* runTurn("write x, then wait"))
        assert.lengthOf(partsOf<PatchPart>(parts, "patch"), 1)
        // The second request: the call that changed a file was written before anyone heard it completed.
        assert.include(seen[1] ?? [], "guarded completed")
        // The third: step 1's patch was recorded during step 2's call, and waits in the batch (no flush in the gap).
        assert.notInclude(seen[2] ?? ["patch"], "patch")
        // The turn's end writes it.
        assert.include(onDisk(), "patch")
      }).pipe(
        Effect.provide(
          testLoopLayer({
            root: tempRoot(),
            plugins: [watch],
            snapshotLayer: snapshots(["x.txt"], "tree-after").layer,
            storeLayer: SqliteSessionStore.layerFile(file, { flushDelay: "1 hour" }),
            steps
          })
        )
      )
  )
})
