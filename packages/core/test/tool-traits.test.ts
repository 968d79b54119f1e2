import { assert, describe, it } from "@effect/vitest"
import { defineAgent, definePlugin, type Ruleset, rejected, Tool } from "@lathe/plugin"
import type { ToolTraits } from "@lathe/plugin/host"
import { Effect, Layer } from "effect"
import { z } from "zod"
import { PermissionNext } from "../src/contracts/permission-next.js"
import { Compaction } from "../src/loop/compaction.js"
import { repeatingTools } from "../src/loop/doom-loop.js"
import { offeredTools, subagentRules, toolPermission } from "../src/loop/offered-tools.js"
import { chunks, SessionStore, testLoopLayer } from "../src/testing/index.js"
import { runTurn, tempRoot, toolParts } from "./loop-helpers.js"

/** A tool named `id` with the given traits, doing nothing. */
const traitTool = (id: string, traits: ToolTraits = {}) =>
  Tool.define(id, {
    description: `${id} for tests`,
    parameters: z.object({ text: z.string().optional() }),
    ...traits,
    execute: async () => ({ title: id, output: `${id} ran` })
  })

const build = defineAgent({ name: "build" })
const deny = (permission: string): Ruleset => [{ permission, pattern: "*", action: "deny" }]

describe("Tool.define traits", () => {
  it("fill in the defaults of a tool Lathe knows nothing about", () => {
    const tool = traitTool("plain")
    assert.deepStrictEqual(
      { mutates: tool.mutates, edits: tool.edits, prunable: tool.prunable, repeats: tool.repeats },
      { mutates: true, edits: false, prunable: true, repeats: false }
    )
    assert.isTrue(tool.subagents)
  })

  it("keep what the definition sets", () => {
    const tool = traitTool("todo-like", {
      mutates: false,
      edits: true,
      prunable: false,
      repeats: true,
      subagents: false
    })
    assert.deepStrictEqual(
      [tool.mutates, tool.edits, tool.prunable, tool.repeats, tool.subagents],
      [false, true, false, true, false]
    )
  })
})

describe("the loop reads traits, not names", () => {
  it("a tool with `edits` is offered or withheld by the edit permission, whatever its name", () => {
    const scribble = traitTool("scribble", { edits: true })
    const note = traitTool("note")
    assert.strictEqual(toolPermission(scribble), "edit")
    assert.strictEqual(toolPermission(note), "note")
    assert.deepStrictEqual(Object.keys(offeredTools([scribble, note], build, deny("edit"))), ["note"])
    assert.deepStrictEqual(Object.keys(offeredTools([scribble, note], build, deny("scribble"))), ["scribble", "note"])
    // A tool named like a built-in editor but without the trait is its own permission.
    assert.deepStrictEqual(Object.keys(offeredTools([traitTool("write")], build, deny("edit"))), ["write"])
  })

  it("a subagent's turn denies exactly the tools without the `subagents` trait", () => {
    const rules = subagentRules([
      traitTool("delegate", { subagents: false }),
      traitTool("plan", { subagents: false, edits: true }),
      traitTool("read-ish")
    ])
    assert.deepStrictEqual(
      rules.map((rule) => [rule.permission, rule.pattern, rule.action]),
      [
        ["delegate", "*", "deny"],
        ["edit", "*", "deny"]
      ]
    )
  })

  it("the doom-loop guard ignores the tools with the `repeats` trait by default", () => {
    assert.deepStrictEqual(repeatingTools([traitTool("tick", { repeats: true }), traitTool("echo")]), ["tick"])
  })

  it.live("identical calls of a `repeats` tool never ask doom_loop; config's ignored_tools replaces the list", () => {
    const asked: Array<unknown> = []
    const doomAsks = Layer.succeed(
      PermissionNext,
      PermissionNext.of({
        ask: (request) => {
          if (request.permission !== "doom_loop") return Effect.void
          asked.push(request.patterns)
          return Effect.fail(rejected("doom_loop", request.patterns))
        },
        reply: () => Effect.void,
        pending: Effect.succeed([])
      })
    )
    const plugin = definePlugin({ name: "ticks", setup: () => ({ tools: [traitTool("tick", { repeats: true })] }) })
    const usage = { input: 10, output: 2 }
    const tick = (id: string) => [chunks.toolCall(id, "tick", { text: "same" }), chunks.finish(usage, "tool-calls")]
    const steps = [tick("a"), tick("b"), tick("c"), tick("d"), [chunks.text("done"), chunks.finish(usage)]]
    const layer = (config: Record<string, unknown>) =>
      testLoopLayer({ root: tempRoot(), plugins: [plugin], config, permissionLayer: doomAsks, steps })
    return Effect.gen(function* () {
      const turn = yield* runTurn("tick").pipe(Effect.provide(layer({})))
      assert.deepStrictEqual(asked, [])
      assert.strictEqual(toolParts(turn).filter((part) => part.state.status === "completed").length, 4)
      // Naming other tools in config counts this one again: the third identical call asks.
      const error = yield* runTurn("tick").pipe(
        Effect.provide(layer({ doom_loop: { ignored_tools: ["other"] } })),
        Effect.flip
      )
      assert.strictEqual(error._tag, "DoomLoopDetected")
      assert.deepStrictEqual(asked, [["tick"]])
    })
  })

  it.live("pruning keeps the output of a tool without the `prunable` trait, whatever its name", () => {
    // 100,000 characters of output (about 25,000 tokens), kept whole: two such outputs exceed what pruning protects.
    const big = (id: string, traits: ToolTraits) =>
      Tool.define(id, {
        description: `${id} for tests`,
        parameters: z.object({}),
        mutates: false,
        ...traits,
        execute: async () => ({ title: id, output: "x".repeat(100_000), metadata: { truncated: false } })
      })
    const plugin = definePlugin({
      name: "outputs",
      setup: () => ({ tools: [big("notes", { prunable: false }), big("dump", {})] })
    })
    const usage = { input: 10, output: 2 }
    const call = (id: string, tool: string) => [chunks.toolCall(id, tool, {}), chunks.finish(usage, "tool-calls")]
    const steps = [call("a", "notes"), call("b", "dump"), call("c", "notes"), call("d", "dump"), [chunks.finish(usage)]]
    return Effect.gen(function* () {
      const turn = yield* runTurn("outputs")
      const freed = yield* (yield* Compaction).prune(turn.messages, undefined)
      const stored = yield* (yield* SessionStore).messages(turn.sessionID)
      const compacted = stored.flatMap((m) =>
        m.parts.flatMap((p) =>
          p.type === "tool" && p.state.status === "completed" ? [[p.callID, p.state.time.compacted !== undefined]] : []
        )
      )
      // Newest first: d is protected, b goes; a and c (notes) are never pruned.
      assert.deepStrictEqual(compacted, [
        ["a", false],
        ["b", true],
        ["c", false],
        ["d", false]
      ])
      assert.strictEqual(freed, 25_000)
    }).pipe(Effect.provide(testLoopLayer({ root: tempRoot(), plugins: [plugin], steps })))
  })
})
