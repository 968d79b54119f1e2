/**
 * A model's tool call whose input is over the cap (1 MiB of JSON): it does not run, the model gets an error it can act
 * on, and neither the stored part nor any later request carries the input (a 30 MB argument was replayed in every
 * request before).
 */
import { assert, describe, it } from "@effect/vitest"
import { definePlugin } from "@lathe/plugin"
import { Effect } from "effect"
import { MAX_TOOL_INPUT_BYTES } from "../src/loop/tool-runner.js"
import { chunks, ScriptedLLM, testLoopLayer } from "../src/testing/index.js"
import { EchoTool, runTurn, tempRoot, toolParts } from "./loop-helpers.js"

const tools = definePlugin({ name: "test-tools", setup: () => ({ tools: [EchoTool] }) })
const usage = { input: 10, output: 10, reasoning: 0, cacheRead: 0, cacheWrite: 0 }
const HUGE = "A".repeat(2 * 1024 * 1024)

describe("tool-call input cap", () => {
  it.live("a 2 MB input is refused with an error; the part and the next request hold a placeholder", () =>
    Effect.gen(function* () {
      const turn = yield* runTurn("go")
      const [huge, small] = toolParts(turn)
      assert.strictEqual(huge?.state.status, "error")
      if (huge?.state.status !== "error") return
      assert.match(huge.state.error, /^The echo tool was called with \d+ bytes of input, over the cap of 1048576 bytes/)
      assert.deepStrictEqual(Object.keys(huge.state.input), ["omitted"])
      assert.notInclude(JSON.stringify(huge), "AAAA")
      // A call under the cap in the same step still runs.
      assert.strictEqual(small?.state.status, "completed")
      const events = JSON.stringify(turn.events)
      assert.notInclude(events, "AAAAAAAA")
      const requests = yield* (yield* ScriptedLLM).requests
      assert.strictEqual(requests.length, 2)
      const second = JSON.stringify(requests[1]?.messages)
      assert.include(second, "over the cap of 1048576 bytes")
      assert.notInclude(second, "AAAAAAAA")
      assert.isBelow(second.length, 64 * 1024)
    }).pipe(
      Effect.provide(
        testLoopLayer({
          root: tempRoot(),
          plugins: [tools],
          steps: [
            [
              chunks.toolCall("c1", "echo", { text: HUGE }),
              chunks.toolCall("c2", "echo", { text: "fine" }),
              chunks.finish(usage, "tool-calls")
            ],
            [chunks.text("ok"), chunks.finish(usage)]
          ]
        })
      )
    )
  )

  it.live("an input just under the cap runs", () =>
    Effect.gen(function* () {
      const turn = yield* runTurn("go")
      const [call] = toolParts(turn)
      assert.strictEqual(call?.state.status, "completed")
    }).pipe(
      Effect.provide(
        testLoopLayer({
          root: tempRoot(),
          plugins: [tools],
          steps: [
            [chunks.toolCall("c1", "echo", { text: "b".repeat(MAX_TOOL_INPUT_BYTES - 20) }), chunks.finish(usage)],
            [chunks.text("ok"), chunks.finish(usage)]
          ]
        })
      )
    )
  )
})
