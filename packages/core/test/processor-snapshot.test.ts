import { assert, describe, it } from "@effect/vitest"
import { definePlugin } from "@lathe/plugin"
import type { PatchPart, StepFinishPart, StepStartPart } from "@lathe/plugin/schema"
import { Effect, Layer } from "effect"
import { Snapshot } from "../src/contracts/snapshot.js"
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
    "is the tree after a step that changed files (tracked at the step's end), the patch's hash the one before",
    () =>
      Effect.gen(function* () {
        const parts = allParts(yield* runTurn("write x"))
        const [start] = partsOf<StepStartPart>(parts, "step-start").filter((p) => p.snapshot !== undefined)
        const [patch] = partsOf<PatchPart>(parts, "patch")
        const [finish] = partsOf<StepFinishPart>(parts, "step-finish")
        assert.strictEqual(start?.snapshot, "tree1")
        assert.strictEqual(patch?.hash, "tree1")
        assert.deepStrictEqual(patch?.files, ["x.txt"])
        assert.strictEqual(finish?.snapshot, "tree2")
        assert.deepStrictEqual(changing.calls, ["track", "patch tree1", "track"])
      }).pipe(
        Effect.provide(
          testLoopLayer({ root: tempRoot(), plugins: [tools], snapshotLayer: changing.layer, steps: script })
        )
      )
  )

  const measured = snapshots(["x.txt"], "tree-after")
  it.live("is the tree the patch was measured to when the service names it (no second snapshot)", () =>
    Effect.gen(function* () {
      const parts = allParts(yield* runTurn("write x"))
      const [patch] = partsOf<PatchPart>(parts, "patch")
      const [finish] = partsOf<StepFinishPart>(parts, "step-finish")
      assert.strictEqual(patch?.hash, "tree1")
      assert.strictEqual(finish?.snapshot, "tree-after")
      assert.deepStrictEqual(measured.calls, ["track", "patch tree1"])
    }).pipe(
      Effect.provide(
        testLoopLayer({ root: tempRoot(), plugins: [tools], snapshotLayer: measured.layer, steps: script })
      )
    )
  )

  const unchanged = snapshots([])
  it.live("is the tree taken before the tools when the step changed nothing (no second snapshot)", () =>
    Effect.gen(function* () {
      const parts = allParts(yield* runTurn("write nothing"))
      assert.lengthOf(partsOf<PatchPart>(parts, "patch"), 0)
      const [finish, last] = partsOf<StepFinishPart>(parts, "step-finish")
      assert.strictEqual(finish?.snapshot, "tree1")
      assert.isUndefined(last?.snapshot, "a step without a tool that may change files takes no snapshot")
      assert.deepStrictEqual(unchanged.calls, ["track", "patch tree1"])
    }).pipe(
      Effect.provide(
        testLoopLayer({ root: tempRoot(), plugins: [tools], snapshotLayer: unchanged.layer, steps: script })
      )
    )
  )
})

/**
 * A snapshot service whose `patch` takes `patchMs` (as four git calls do), logging when each call starts and ends into
 * `log`, beside the requests a plugin logs.
 */
const slowPatches = (log: Array<string>, patchMs: number) => {
  let tree = 0
  return Layer.succeed(
    Snapshot,
    Snapshot.of({
      track: Effect.sync(() => {
        log.push(`track tree${tree + 1}`)
        return `tree${++tree}`
      }),
      patch: (hash) =>
        Effect.gen(function* () {
          log.push(`patch ${hash}`)
          yield* Effect.sleep(patchMs)
          const after = `tree${++tree}`
          log.push(`patched ${hash} to ${after}`)
          return { hash, files: ["x.txt"], after }
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
  it.live("is recorded while the next request is out, and stored (before the step-finish) when the turn ends", () =>
    Effect.gen(function* () {
      const parts = allParts(yield* runTurn("write x"))
      assert.deepStrictEqual(log, ["request", "track tree1", "patch tree1", "request", "patched tree1 to tree2"])
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
          snapshotLayer: slowPatches(log, 300),
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
  it.live("is recorded before the next step's first mutating call snapshots the tree", () =>
    Effect.gen(function* () {
      const parts = allParts(yield* runTurn("write x twice"))
      assert.deepStrictEqual(order, [
        "request",
        "track tree1",
        "patch tree1",
        "request",
        "patched tree1 to tree2",
        "track tree3",
        "patch tree3",
        "request",
        "patched tree3 to tree4"
      ])
      assert.deepStrictEqual(
        partsOf<PatchPart>(parts, "patch").map((p) => p.hash),
        ["tree1", "tree3"]
      )
    }).pipe(
      Effect.provide(
        testLoopLayer({
          root: tempRoot(),
          plugins: [requests(order)],
          snapshotLayer: slowPatches(order, 200),
          steps: twice
        })
      )
    )
  )
})
