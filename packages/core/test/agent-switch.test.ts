import { assert, describe, it } from "@effect/vitest"
import { definePlugin, Tool } from "@lathe/plugin"
import { Effect } from "effect"
import { z } from "zod"
import { chunks, ScriptedLLM, testLoopLayer } from "../src/testing/index.js"
import { EchoTool, runTurn, tempRoot, toolParts } from "./loop-helpers.js"

// A tool hands the session to another agent (what plan_exit does once the person said yes): the same turn goes on,
// and the next request is the new agent's. The switch lives in the loop every front drives, so this is the proof.
const Handover = Tool.define("handover", {
  description: "Hands the session to another agent",
  parameters: z.object({ to: z.string() }),
  mutates: false,
  subagents: false,
  execute: async ({ to }, ctx) => {
    if (!ctx.switchAgent) throw new Error("no switching here")
    await ctx.switchAgent(to)
    return { title: `to ${to}`, output: `now ${to}` }
  }
})

const plugin = definePlugin({
  name: "switch-test",
  setup: () => ({
    tools: [Handover, EchoTool],
    agents: [
      { name: "alpha", mode: "primary" as const, prompt: "You are ALPHA.", tools: { echo: false } },
      { name: "beta", mode: "primary" as const, prompt: "You are BETA.", tools: { handover: false } },
      { name: "helper", mode: "subagent" as const, prompt: "You help." }
    ]
  })
})

const usage = { input: 10, output: 2 }
const call = (to: string) => [chunks.toolCall("c1", "handover", { to }), chunks.finish(usage, "tool-calls")]
const done = [chunks.text("done"), chunks.finish(usage)]

describe("a tool hands the session to another agent (ctx.switchAgent)", () => {
  it.live("the next request of the same turn is the new agent's: its prompt, its tools; the session keeps it", () =>
    Effect.gen(function* () {
      const turn = yield* runTurn("go", { agent: "alpha" })
      const requests = yield* (yield* ScriptedLLM).requests
      assert.strictEqual(requests.length, 2)
      assert.include(requests[0]?.system.join("\n"), "You are ALPHA.")
      assert.deepStrictEqual(Object.keys(requests[0]?.tools ?? {}).sort(), ["handover"])
      assert.include(requests[1]?.system.join("\n"), "You are BETA.")
      assert.notInclude(requests[1]?.system.join("\n"), "You are ALPHA.")
      assert.deepStrictEqual(Object.keys(requests[1]?.tools ?? {}).sort(), ["echo"])
      // One user message, two assistant messages: alpha's step, then beta's.
      const agents = turn.messages.map((m) => `${m.info.role}:${m.info.role === "assistant" ? m.info.agent : ""}`)
      assert.deepStrictEqual(agents, ["user:", "assistant:alpha", "assistant:beta"])
      // Every front hears of it: the session's agent changes (session.updated), and the next turn starts with it.
      const updated = turn.events.flatMap((e) => (e.type === "session.updated" ? [e.session.agent] : []))
      assert.strictEqual(updated.at(-1), "beta")
      assert.strictEqual(toolParts(turn)[0]?.state.status, "completed")
    }).pipe(Effect.provide(testLoopLayer({ root: tempRoot(), plugins: [plugin], steps: [call("beta"), done] })))
  )

  it.live("a subagent or an unknown agent is refused: the call fails, the agent stays", () =>
    Effect.gen(function* () {
      const turn = yield* runTurn("go", { agent: "alpha" })
      const requests = yield* (yield* ScriptedLLM).requests
      assert.include(requests[1]?.system.join("\n"), "You are ALPHA.")
      const part = toolParts(turn)[0]
      assert.strictEqual(part?.state.status, "error")
      if (part?.state.status === "error") assert.include(part.state.error, 'No primary agent "helper"')
      assert.deepStrictEqual(
        turn.messages.flatMap((m) => (m.info.role === "assistant" ? [m.info.agent] : [])),
        ["alpha", "alpha"]
      )
    }).pipe(Effect.provide(testLoopLayer({ root: tempRoot(), plugins: [plugin], steps: [call("helper"), done] })))
  )
})
