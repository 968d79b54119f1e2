import { assert, describe, it } from "@effect/vitest"
import { definePlugin, rejected } from "@lathe/plugin"
import { messageErrorFromFailure as messageError } from "@lathe/plugin/schema"
import { Effect, Layer } from "effect"
import { stripUntrusted } from "../src/config/config-untrusted.js"
import { PermissionNext } from "../src/contracts/permission-next.js"
import { canonicalJson } from "../src/loop/doom-loop.js"
import { DEFAULT_MAX_STEPS, stepCap } from "../src/loop/step-limit.js"
import { chunks, ScriptedLLM, testLoopLayer } from "../src/testing/index.js"
import { EchoTool, runTurn, tempRoot, toolParts } from "./loop-helpers.js"

const tools = definePlugin({ name: "test-tools", setup: () => ({ tools: [EchoTool] }) })
const usage = { input: 100, output: 20 }
/** A step that calls echo with a different input each time (varied calls: the doom-loop guard never fires). */
const varied = (n: number) => [chunks.toolCall(`c${n}`, "echo", { text: `t${n}` }), chunks.finish(usage, "tool-calls")]
const summary = [chunks.text("Summary: three files read, two to go."), chunks.finish(usage)]

describe("step cap (max_steps)", () => {
  it("defaults to 200; the agent's value overrides config; 0 means none", () => {
    assert.strictEqual(DEFAULT_MAX_STEPS, 200)
    assert.strictEqual(stepCap(undefined, undefined), 200)
    assert.strictEqual(stepCap(undefined, 7), 7)
    assert.strictEqual(stepCap(3, 7), 3)
    assert.strictEqual(stepCap(0, 7), undefined)
    assert.strictEqual(stepCap(undefined, 0), undefined)
    assert.strictEqual(stepCap(9, 0), 9)
  })

  it("an untrusted project's max_steps is dropped (a file cannot tell a lower cap from a higher one)", () => {
    for (const max of [0, 5, 10_000]) {
      const { value, dropped } = stripUntrusted({ max_steps: max, agent: { build: { max_steps: max } } })
      assert.deepStrictEqual(value, { agent: {} })
      assert.deepStrictEqual(dropped, ["max_steps", "agent.build.max_steps"])
    }
  })

  it.live("config max_steps 3: three model calls, the last without tools, then StepLimit with how to go on", () =>
    Effect.gen(function* () {
      const turn = yield* runTurn("read everything")
      const requests = yield* (yield* ScriptedLLM).requests
      assert.strictEqual(requests.length, 3)
      assert.deepStrictEqual(Object.keys(requests[1]?.tools ?? {}), ["echo"])
      assert.deepStrictEqual(Object.keys(requests[2]?.tools ?? {}), [])
      assert.include(requests[2]?.system.at(-1) ?? "", "last step")
      const info = turn.result.info
      assert.strictEqual(info.role, "assistant")
      if (info.role !== "assistant") return
      assert.strictEqual(info.error?.name, "StepLimit")
      if (info.error?.name !== "StepLimit") return
      assert.strictEqual(info.error.steps, 3)
      assert.include(info.error.message, "Stopped after 3 steps")
      assert.include(info.error.message, 'lathe run -c "continue"')
      // The model's wrap-up is kept, and every front end hears of the stop.
      assert.isTrue(turn.result.parts.some((p) => p.type === "text" && p.text.startsWith("Summary")))
      const errors = turn.events.filter((e) => e.type === "session.error")
      assert.strictEqual(errors.length, 1)
      assert.strictEqual(errors[0]?.type === "session.error" && errors[0].error.name, "StepLimit")
    }).pipe(
      Effect.provide(
        testLoopLayer({
          root: tempRoot(),
          plugins: [tools],
          config: { max_steps: 3 },
          steps: [varied(1), varied(2), summary, varied(4)]
        })
      )
    )
  )

  it.live("an agent's max_steps overrides config", () =>
    Effect.gen(function* () {
      const turn = yield* runTurn("go")
      assert.strictEqual((yield* (yield* ScriptedLLM).requests).length, 2)
      assert.strictEqual(turn.result.info.role === "assistant" && turn.result.info.error?.name, "StepLimit")
    }).pipe(
      Effect.provide(
        testLoopLayer({
          root: tempRoot(),
          plugins: [tools],
          config: { max_steps: 50, agent: { build: { max_steps: 2 } } },
          steps: [varied(1), summary]
        })
      )
    )
  )

  it.live("max_steps 0 lifts the cap: a five-step turn runs to its end without an error", () =>
    Effect.gen(function* () {
      const turn = yield* runTurn("go")
      assert.strictEqual((yield* (yield* ScriptedLLM).requests).length, 5)
      assert.strictEqual(toolParts(turn).length, 4)
      assert.strictEqual(turn.result.info.role === "assistant" && turn.result.info.error, undefined)
    }).pipe(
      Effect.provide(
        testLoopLayer({
          root: tempRoot(),
          plugins: [tools],
          config: { max_steps: 0, agent: { build: { max_steps: 0 } } },
          steps: [varied(1), varied(2), varied(3), varied(4), summary]
        })
      )
    )
  )
})

describe("DoomLoopDetected", () => {
  const rejectDoom = Layer.succeed(
    PermissionNext,
    PermissionNext.of({
      ask: (request) =>
        request.permission === "doom_loop" ? Effect.fail(rejected("doom_loop", request.patterns)) : Effect.void,
      reply: () => Effect.void,
      pending: Effect.succeed([])
    })
  )
  const same = (id: string) => [chunks.toolCall(id, "echo", { text: "same", n: 1 }), chunks.finish(usage, "tool-calls")]

  it.live("carries the threshold, the repeated calls and a suggestion, onto the stored message too", () =>
    Effect.gen(function* () {
      const error = yield* runTurn("loop").pipe(Effect.flip)
      assert.strictEqual(error._tag, "DoomLoopDetected")
      if (error._tag !== "DoomLoopDetected") return
      assert.strictEqual(error.threshold, 4)
      assert.strictEqual(error.count, 4)
      const input = canonicalJson({ n: 1, text: "same" })
      assert.deepStrictEqual(
        error.calls,
        Array.from({ length: 4 }, () => ({ tool: "echo", input }))
      )
      assert.include(error.suggestion, "doom_loop.threshold (now 4)")
      assert.include(error.suggestion, '"echo" to doom_loop.ignored_tools')
      // The message a person reads says all of it.
      assert.include(error.message, "called echo 4 times in a row")
      assert.include(error.message, "threshold is 4")
      assert.include(error.message, `echo ${input}`)
      assert.include(error.message, error.suggestion)
      const recorded = messageError(error)
      assert.strictEqual(recorded.name, "DoomLoopDetected")
      if (recorded.name !== "DoomLoopDetected") return
      assert.strictEqual(recorded.threshold, 4)
      assert.deepStrictEqual(recorded.calls, error.calls)
      assert.strictEqual(recorded.suggestion, error.suggestion)
    }).pipe(
      Effect.provide(
        testLoopLayer({
          root: tempRoot(),
          plugins: [tools],
          config: { doom_loop: { threshold: 4 } },
          permissionLayer: rejectDoom,
          steps: [same("a"), same("b"), same("c"), same("d"), [chunks.text("done"), chunks.finish(usage)]]
        })
      )
    )
  )
})
