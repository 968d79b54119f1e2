import { assert, describe, it } from "@effect/vitest"
import { definePlugin } from "@lathe/plugin"
import { Effect } from "effect"
import { chunks, ScriptedLLM, testLoopLayer } from "../src/testing/index.js"
import { EchoTool, runTurn, tempRoot, toolParts } from "./loop-helpers.js"

// Where each loop hook runs and what changing its output does (system.transform, text.complete, tool.before/after
// are covered in processor.test.ts and the CLI's plugin tests; permission.ask in @lathe/permission).
const usage = { input: 10, output: 5 }

describe("loop hooks", () => {
  it.live("messages.transform changes what the model sees, never what is stored", () =>
    Effect.gen(function* () {
      const turn = yield* runTurn("my secret is 1234")
      const [request] = yield* (yield* ScriptedLLM).requests
      assert.notInclude(JSON.stringify(request?.messages), "1234")
      assert.include(JSON.stringify(request?.messages), "my secret is ****")
      const stored = turn.messages[0]?.parts.find((p) => p.type === "text")
      assert.strictEqual(stored?.type === "text" ? stored.text : "", "my secret is 1234")
    }).pipe(
      Effect.provide(
        testLoopLayer({
          root: tempRoot(),
          plugins: [
            definePlugin({
              name: "redact",
              setup: () => ({
                "messages.transform": (_input, output) => {
                  output.messages = output.messages.map((m) => ({
                    ...m,
                    parts: m.parts.map((p) => (p.type === "text" ? { ...p, text: p.text.replace(/\d{4}/, "****") } : p))
                  }))
                }
              })
            })
          ],
          steps: [[chunks.text("ok"), chunks.finish(usage)]]
        })
      )
    )
  )

  it.live("chat.params sets sampling, provider options and headers of the step, and sees the model's limits", () => {
    const seen: Array<number> = []
    return Effect.gen(function* () {
      yield* runTurn("hi")
      const [request] = yield* (yield* ScriptedLLM).requests
      assert.strictEqual(request?.temperature, 0.2)
      assert.strictEqual(request?.maxOutputTokens, 1234)
      assert.deepStrictEqual(request?.headers, { "x-team": "core" })
      assert.deepStrictEqual(request?.providerOptions, { scripted: { reasoningEffort: "low" } })
      assert.deepStrictEqual(seen, [200_000])
    }).pipe(
      Effect.provide(
        testLoopLayer({
          root: tempRoot(),
          plugins: [
            definePlugin({
              name: "params",
              setup: () => ({
                "chat.params": (input, output) => {
                  seen.push(input.modelInfo.limit.context)
                  output.temperature = 0.2
                  output.maxOutputTokens = 1234
                  output.options.reasoningEffort = "low"
                  output.headers["x-team"] = "core"
                }
              })
            })
          ],
          steps: [[chunks.text("ok"), chunks.finish(usage)]]
        })
      )
    )
  })

  it.live("tool.before can block a call with a reason the model reads", () =>
    Effect.gen(function* () {
      const turn = yield* runTurn("echo")
      const [call] = toolParts(turn)
      assert.strictEqual(
        call?.state.status === "error" ? call.state.error : "",
        "The echo call was blocked by a plugin: echo is off today"
      )
      const requests = yield* (yield* ScriptedLLM).requests
      assert.include(JSON.stringify(requests[1]?.messages), "echo is off today")
    }).pipe(
      Effect.provide(
        testLoopLayer({
          root: tempRoot(),
          plugins: [
            definePlugin({ name: "tools", setup: () => ({ tools: [EchoTool] }) }),
            definePlugin({
              name: "guard",
              setup: () => ({
                "tool.before": (input, output) => {
                  if (input.tool === "echo") output.block = "echo is off today"
                }
              })
            })
          ],
          steps: [
            [chunks.toolCall("c1", "echo", { text: "x" }), chunks.finish(usage, "tool-calls")],
            [chunks.text("ok"), chunks.finish(usage)]
          ]
        })
      )
    )
  )

  it.live("session.compacting adds context to the summary prompt", () =>
    Effect.gen(function* () {
      yield* runTurn("big task")
      const requests = yield* (yield* ScriptedLLM).requests
      const summary = requests.find((r) => r.system[0]?.startsWith("You summarise"))
      assert.isDefined(summary)
      assert.include(summary?.system.join("\n") ?? "", "Remember: the deploy freeze starts Friday.")
    }).pipe(
      Effect.provide(
        testLoopLayer({
          root: tempRoot(),
          plugins: [
            definePlugin({ name: "tools", setup: () => ({ tools: [EchoTool] }) }),
            definePlugin({
              name: "memo",
              setup: () => ({
                "session.compacting": (_input, output) => {
                  output.context.push("Remember: the deploy freeze starts Friday.")
                }
              })
            })
          ],
          scripted: { model: { limit: { context: 1_000, output: 100 } } },
          steps: [
            [chunks.toolCall("c1", "echo", { text: "x" }), chunks.finish({ input: 950, output: 20 }, "tool-calls")],
            [chunks.text("Task: summary"), chunks.finish({ input: 300, output: 50 })],
            [chunks.text("continued"), chunks.finish({ input: 200, output: 10 })]
          ]
        })
      )
    )
  )
})
