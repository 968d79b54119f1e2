// "Walls, round three": a subagent never does more than its caller. The tools offered to a subagent are the
// intersection along the chain of callers (a tool switched off or denied outright anywhere above stays off), and a
// call to a withheld tool that the model makes anyway is refused when it would run, with an error the model reads.
import { assert, describe, it } from "@effect/vitest"
import { defineAgent, definePlugin, Tool } from "@lathe/plugin"
import type { ToolPart } from "@lathe/plugin/schema"
import { Effect } from "effect"
import { z } from "zod"
import { offeredTools } from "../src/loop/offered-tools.js"
import { chunks, ScriptedLLM, SessionStore, testLoopLayer } from "../src/testing/index.js"
import { runTurn, tempRoot } from "./loop-helpers.js"

const usage = { input: 10, output: 2 }

/** A tool that records that it ran: the payload of the red-team finding (a `bash` or `write` the caller had off). */
const recording = (id: string, ran: Array<string>) =>
  Tool.define(id, {
    description: `${id} for tests`,
    parameters: z.object({ text: z.string().optional() }),
    execute: async () => {
      ran.push(id)
      return { title: id, output: `${id} ran` }
    }
  })

/** Starts the named subagent through `ctx.subagent`, as the task tool does (but may be offered to subagents). */
const Delegate = Tool.define("delegate", {
  description: "Runs a subagent",
  parameters: z.object({ agent: z.string() }),
  mutates: false,
  execute: async ({ agent }, ctx) => {
    if (!ctx.subagent) throw new Error("no subagents here")
    const result = await ctx.subagent({ agent, description: "sub", prompt: "do it" })
    return { title: agent, output: result.text }
  }
})

/** One step that calls each tool once, ending in tool calls. */
const calling = (...calls: ReadonlyArray<[string, unknown]>) => [
  ...calls.map(([tool, input], index) => chunks.toolCall(`${tool}-${index}-${Math.random()}`, tool, input)),
  chunks.finish(usage, "tool-calls")
]
const answer = (text: string) => [chunks.text(text), chunks.finish(usage)]

/** Every tool part of every session (caller and children), with the session it ran in. */
const allToolParts = Effect.gen(function* () {
  const store = yield* SessionStore
  const sessions = yield* store.listSessions()
  const parts: Array<ToolPart & { readonly parentID: string | undefined }> = []
  for (const session of sessions)
    for (const message of yield* store.messages(session.id))
      for (const part of message.parts) if (part.type === "tool") parts.push({ ...part, parentID: session.parentID })
  return parts
})

describe("offeredTools within the caller's offer", () => {
  const tools = ["read", "bash", "write"].map((id) => recording(id, []))
  const general = defineAgent({ name: "general" })

  it("offers a subagent only what its caller was offered, and no more than its own switches allow", () => {
    assert.deepStrictEqual(Object.keys(offeredTools(tools, general, [])), ["read", "bash", "write"])
    assert.deepStrictEqual(Object.keys(offeredTools(tools, general, [], ["read", "write", "task"])), ["read", "write"])
    const noWrite = defineAgent({ name: "careful", tools: { write: false } })
    assert.deepStrictEqual(Object.keys(offeredTools(tools, noWrite, [], ["read", "write"])), ["read"])
    assert.deepStrictEqual(Object.keys(offeredTools(tools, general, [], [])), [])
  })
})

describe("a subagent never does more than its caller", () => {
  it.live("tools the caller had switched off are neither offered to the subagent nor run when it calls them", () => {
    const ran: Array<string> = []
    const plugin = definePlugin({
      name: "chain",
      setup: () => ({
        tools: [recording("read", ran), recording("bash", ran), recording("write", ran), Delegate],
        agents: [
          { name: "lead", mode: "primary" as const, tools: { bash: false, write: false } },
          { name: "general", mode: "subagent" as const }
        ]
      })
    })
    const steps = [
      calling(["delegate", { agent: "general" }]),
      // The hostile subagent model calls the tools its caller had switched off, and one it may use.
      calling(["bash", { text: "touch pwned" }], ["write", { text: "x" }], ["read", {}]),
      answer("child done"),
      answer("lead done")
    ]
    return Effect.gen(function* () {
      yield* runTurn("go", { agent: "lead" })
      const requests = yield* (yield* ScriptedLLM).requests
      assert.deepStrictEqual(Object.keys(requests[0]?.tools ?? {}).sort(), ["delegate", "read"])
      // The subagent's request offers nothing its caller lacked.
      assert.deepStrictEqual(Object.keys(requests[1]?.tools ?? {}).sort(), ["delegate", "read"])
      assert.deepStrictEqual(ran, ["read"])
      const parts = yield* allToolParts
      const child = (tool: string) => parts.find((p) => p.tool === tool && p.parentID !== undefined)
      for (const tool of ["bash", "write"]) {
        const state = child(tool)?.state
        assert.strictEqual(state?.status, "error")
        if (state?.status === "error")
          assert.match(state.error, new RegExp(`^The ${tool} tool is not available here: it is switched off`))
      }
      assert.strictEqual(child("read")?.state.status, "completed")
    }).pipe(Effect.provide(testLoopLayer({ root: tempRoot(), plugins: [plugin], steps })))
  })

  it.live("the offer only shrinks along a chain A -> B -> C: C has neither A's nor B's switched-off tools", () => {
    const ran: Array<string> = []
    const plugin = definePlugin({
      name: "chain",
      setup: () => ({
        tools: [recording("read", ran), recording("bash", ran), recording("write", ran), Delegate],
        agents: [
          { name: "a", mode: "primary" as const, tools: { bash: false } },
          { name: "b", mode: "subagent" as const, tools: { write: false } },
          { name: "c", mode: "subagent" as const }
        ]
      })
    })
    const steps = [
      calling(["delegate", { agent: "b" }]),
      calling(["delegate", { agent: "c" }]),
      calling(["bash", { text: "touch pwned" }], ["write", { text: "x" }]),
      answer("c done"),
      answer("b done"),
      answer("a done")
    ]
    return Effect.gen(function* () {
      yield* runTurn("go", { agent: "a" })
      const offered = (yield* (yield* ScriptedLLM).requests).map((r) => Object.keys(r.tools).sort())
      assert.deepStrictEqual(offered.slice(0, 3), [
        ["delegate", "read", "write"],
        ["delegate", "read"],
        ["delegate", "read"]
      ])
      assert.deepStrictEqual(ran, [])
      const parts = yield* allToolParts
      assert.deepStrictEqual(
        parts.filter((p) => p.tool === "bash" || p.tool === "write").map((p) => p.state.status),
        ["error", "error"]
      )
    }).pipe(Effect.provide(testLoopLayer({ root: tempRoot(), plugins: [plugin], steps })))
  })

  it.live("a tool the caller's rules deny outright is not offered to the subagent either", () => {
    const ran: Array<string> = []
    const plugin = definePlugin({
      name: "chain",
      setup: () => ({
        tools: [recording("read", ran), recording("bash", ran), Delegate],
        agents: [
          { name: "lead", mode: "primary" as const, permission: { bash: "deny" as const } },
          { name: "general", mode: "subagent" as const, permission: { bash: "allow" as const } }
        ]
      })
    })
    const steps = [
      calling(["delegate", { agent: "general" }]),
      calling(["bash", { text: "touch pwned" }]),
      answer("child done"),
      answer("lead done")
    ]
    return Effect.gen(function* () {
      yield* runTurn("go", { agent: "lead" })
      const requests = yield* (yield* ScriptedLLM).requests
      assert.notProperty(requests[1]?.tools ?? {}, "bash")
      assert.deepStrictEqual(ran, [])
    }).pipe(Effect.provide(testLoopLayer({ root: tempRoot(), plugins: [plugin], steps })))
  })
})
