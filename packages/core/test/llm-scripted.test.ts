import { assert, describe, it } from "@effect/vitest"
import { Effect, Stream } from "effect"
import type { ModelInfo } from "../src/catalog/model-info.js"
import { LLM, type LLMEvent, type LLMRequest } from "../src/llm/llm.js"
import { chunks, ScriptedLLM } from "../src/testing/scripted-llm.js"

const request = (model: ModelInfo, text = "hi", abort = new AbortController().signal): LLMRequest => ({
  sessionID: "ses_1",
  model,
  system: ["Be brief."],
  messages: [{ role: "user", content: text }],
  tools: {
    read: { description: "Read a file", inputSchema: { type: "object", properties: { path: { type: "string" } } } }
  },
  topP: 0.9,
  maxOutputTokens: 100,
  providerOptions: { openai: { store: false } },
  headers: { "x-session": "ses_1" },
  abort
})

const call = (text?: string, abort?: AbortSignal) =>
  Effect.gen(function* () {
    const llm = yield* LLM
    const model = yield* llm.resolve()
    return yield* Stream.runCollect(llm.stream(request(model, text, abort)))
  })

const types = (events: ReadonlyArray<LLMEvent>) => events.map((e) => e.type)

describe("ScriptedLLM.layer", () => {
  it.effect("plays one step per call through streamText and records requests and SDK calls", () =>
    Effect.gen(function* () {
      const first = yield* call("read a.txt")
      assert.deepStrictEqual(types(first), [
        "start",
        "start-step",
        "reasoning-start",
        "reasoning-delta",
        "reasoning-end",
        "tool-input-start",
        "tool-input-delta",
        "tool-input-end",
        "tool-call",
        "finish-step",
        "finish"
      ])
      const second = yield* call("thanks")
      const text = second.flatMap((e) => (e.type === "text-delta" ? [e.text] : []))
      assert.deepStrictEqual(text, ["echo: thanks"])
      const finish = second.at(-1)
      assert.strictEqual(finish?.type === "finish" && finish.totalUsage.inputTokenDetails.cacheReadTokens, 4)
      const scripted = yield* ScriptedLLM
      const requests = yield* scripted.requests
      assert.deepStrictEqual(
        requests.map((r) => r.messages[0]?.content),
        ["read a.txt", "thanks"]
      )
      const calls = yield* scripted.calls
      const tools = calls[0]?.tools?.map((t) => t.name)
      assert.deepStrictEqual(tools, ["read"])
      const system = calls[0]?.prompt[0]
      assert.deepStrictEqual([system?.role, system?.content], ["system", "Be brief."])
      assert.strictEqual(calls[0]?.topP, 0.9)
      assert.strictEqual(calls[0]?.maxOutputTokens, 100)
      assert.deepStrictEqual(calls[0]?.providerOptions, { openai: { store: false } })
      assert.strictEqual(calls[0]?.headers?.["x-session"], "ses_1")
      assert.strictEqual(yield* scripted.remaining, 0)
    }).pipe(
      Effect.provide(
        ScriptedLLM.layer([
          [
            chunks.reasoning("look first"),
            chunks.toolCall("call_1", "read", { path: "a.txt" }),
            chunks.finish({ input: 10, output: 3 }, "tool-calls")
          ],
          (req) => [
            chunks.text(`echo: ${String(req.messages[0]?.content)}`),
            chunks.finish({ input: 12, output: 2, cacheRead: 4 })
          ]
        ])
      )
    )
  )

  it.effect("a call past the end of the script fails clearly and is not retryable", () =>
    Effect.gen(function* () {
      yield* call()
      const error = yield* call().pipe(Effect.flip)
      assert.strictEqual(error._tag, "ProviderError")
      if (error._tag !== "ProviderError") return
      assert.deepStrictEqual(error.reason, { _tag: "InvalidRequest" })
      assert.strictEqual(error.message, "The scripted model has no step for call 2: the script has 1.")
      assert.strictEqual((yield* (yield* ScriptedLLM).requests).length, 2)
    }).pipe(Effect.provide(ScriptedLLM.layer([[chunks.text("only"), chunks.finish({ input: 1, output: 1 })]])))
  )

  it.effect("an in-band error part ends the stream with a classified ProviderError, never an error event", () =>
    Effect.gen(function* () {
      const seen: Array<string> = []
      const llm = yield* LLM
      const model = yield* llm.resolve()
      const error = yield* Stream.runForEach(llm.stream(request(model)), (e) =>
        Effect.sync(() => seen.push(e.type))
      ).pipe(Effect.flip)
      assert.deepStrictEqual(error.reason, { _tag: "Overloaded" })
      assert.include(error.message, "scripted/model is overloaded")
      assert.include(seen, "text-delta")
      assert.notInclude(seen, "error")
    }).pipe(
      Effect.provide(
        ScriptedLLM.layer([
          [
            chunks.text("partial"),
            chunks.error({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } }),
            chunks.finish({ input: 1, output: 1 })
          ]
        ])
      )
    )
  )

  it.effect("a step without a finish part is StreamCut", () =>
    Effect.gen(function* () {
      const error = yield* call().pipe(Effect.flip)
      assert.strictEqual(error._tag, "ProviderError")
      if (error._tag === "ProviderError") assert.deepStrictEqual(error.reason, { _tag: "StreamCut" })
    }).pipe(Effect.provide(ScriptedLLM.layer([[chunks.toolCall("call_1", "read", '{"pa')]])))
  )

  it.live("aborting mid-stream ends it as Aborted", () =>
    Effect.gen(function* () {
      const controller = new AbortController()
      const llm = yield* LLM
      const model = yield* llm.resolve()
      const seen: Array<string> = []
      const error = yield* Stream.runForEach(llm.stream(request(model, "hi", controller.signal)), (e) =>
        Effect.sync(() => {
          seen.push(e.type)
          if (e.type === "text-delta") controller.abort()
        })
      ).pipe(Effect.flip)
      assert.deepStrictEqual(error.reason, { _tag: "Aborted" })
      assert.include(seen, "text-delta")
      assert.notInclude(seen, "finish")
    }).pipe(
      Effect.provide(
        ScriptedLLM.layer([[chunks.text("one"), chunks.text("two"), chunks.finish({ input: 1, output: 1 })]], {
          chunkDelayMs: 20
        })
      )
    )
  )

  it.live("a consumer that stops early aborts the model call", () =>
    Effect.gen(function* () {
      const llm = yield* LLM
      const model = yield* llm.resolve()
      const firstTwo = yield* Stream.runCollect(Stream.take(llm.stream(request(model)), 2))
      assert.deepStrictEqual(types(firstTwo), ["start", "start-step"])
      const calls = yield* (yield* ScriptedLLM).calls
      assert.strictEqual(calls[0]?.abortSignal?.aborted, true)
    }).pipe(
      Effect.provide(
        ScriptedLLM.layer([[chunks.text("a"), chunks.text("b"), chunks.finish({ input: 1, output: 1 })]], {
          chunkDelayMs: 20
        })
      )
    )
  )

  it.effect("resolve returns configurable limits and prices, and takes the requested ids", () =>
    Effect.gen(function* () {
      const llm = yield* LLM
      const model = yield* llm.resolve("acme/tiny")
      assert.strictEqual(`${model.providerID}/${model.modelID}`, "acme/tiny")
      assert.deepStrictEqual(model.limit, { context: 1_000, output: 32_000 })
      assert.strictEqual(model.cost.input, 1)
      assert.strictEqual(model.cost.output, 15)
    }).pipe(Effect.provide(ScriptedLLM.layer([], { model: { limit: { context: 1_000 }, cost: { input: 1 } } })))
  )
})
