/**
 * Prompt caching: an Anthropic request marks cache breakpoints on the last tool, the system prompt and the last two
 * messages (four, Anthropic's limit), an OpenAI Responses request carries the session id as `prompt_cache_key`, and
 * the cache reads and writes a provider reports are priced at the catalogue's cache prices. Real SDKs against real
 * HTTP servers on 127.0.0.1 speaking each provider's wire format.
 */
import { assert, describe, it } from "@effect/vitest"
import type { ModelMessage } from "ai"
import { Effect, Layer, Stream } from "effect"
import type { ModelInfo } from "../src/catalog/model-info.js"
import { Config, type ConfigTestInput } from "../src/config/config.js"
import { LLM, type LLMEvent, type LLMRequest, type ProviderEnv } from "../src/llm/llm.js"
import { markAnthropicCache } from "../src/llm/prompt-cache.js"
import { stepCost, tokensFromUsage } from "../src/llm/usage.js"
import { startWireServer, type WireFormat, type WireScript } from "../src/testing/scripted-wire.js"

const wireServer = (format: WireFormat, script: WireScript) =>
  Effect.acquireRelease(
    Effect.promise(() => startWireServer(format, script)),
    (server) => Effect.promise(() => server.close())
  )

const llmLayer = (config: ConfigTestInput, env: ProviderEnv) =>
  LLM.layerWith(env).pipe(Layer.provide(Config.layerTest(config)))

const schema = { type: "object" as const, properties: { path: { type: "string" as const } }, required: ["path"] }

/** A session three steps in: the prompt, a tool call and its result, then the model's follow-up and a new prompt. */
const history: ReadonlyArray<ModelMessage> = [
  { role: "user", content: "read a.txt" },
  {
    role: "assistant",
    content: [{ type: "tool-call", toolCallId: "toolu_1", toolName: "read", input: { path: "a.txt" } }]
  },
  {
    role: "tool",
    content: [
      { type: "tool-result", toolCallId: "toolu_1", toolName: "read", output: { type: "text", value: "hello" } }
    ]
  },
  { role: "assistant", content: [{ type: "text", text: "It says hello." }] },
  { role: "user", content: [{ type: "text", text: "now write b.txt" }] }
]

const request = (model: ModelInfo): LLMRequest => ({
  sessionID: "ses_cache_1",
  model,
  system: ["You are Lathe.", "Project rules: be terse."],
  messages: history,
  tools: {
    read: { description: "Read a file", inputSchema: schema },
    write: { description: "Write a file", inputSchema: schema }
  },
  abort: new AbortController().signal
})

const run = (model?: string) =>
  Effect.gen(function* () {
    const llm = yield* LLM
    const info = yield* Effect.orDie(llm.resolve(model))
    const events = yield* Stream.runCollect(llm.stream(request(info)))
    return { info, events: [...events] as Array<LLMEvent> }
  })

interface AnthropicBody {
  readonly system: ReadonlyArray<{ readonly cache_control?: unknown }>
  readonly tools: ReadonlyArray<{ readonly name: string; readonly cache_control?: unknown }>
  readonly messages: ReadonlyArray<{
    readonly role: string
    readonly content: ReadonlyArray<{ readonly type: string; readonly cache_control?: unknown }>
  }>
}

const ephemeral = { type: "ephemeral" }

describe("prompt caching on Anthropic models", () => {
  it.effect("the body carries cache_control on the last tool, the system prompt and the last two messages", () =>
    Effect.gen(function* () {
      const server = yield* wireServer("anthropic", [{ text: "Done." }])
      const config = { model: "anthropic/claude-sonnet-4-5", provider: { anthropic: { baseURL: server.url } } }
      const { events } = yield* run().pipe(Effect.provide(llmLayer(config, { ANTHROPIC_API_KEY: "sk-ant-test" })))
      assert.strictEqual(events.at(-1)?.type, "finish")
      const body = server.requests[0]?.body as AnthropicBody
      assert.strictEqual(server.requests[0]?.path, "/v1/messages")
      // Tools: only the last one is marked (the mark caches every tool before it too).
      assert.deepStrictEqual(
        body.tools.map((t) => [t.name, t.cache_control]),
        [
          ["read", undefined],
          ["write", ephemeral]
        ]
      )
      // System: the last block is marked, so the whole system prompt is one cached prefix.
      assert.deepStrictEqual(
        body.system.map((block) => block.cache_control),
        [undefined, ephemeral]
      )
      // Messages: the last block of each of the last two messages (Anthropic merges the tool result into a user turn).
      const marks = body.messages.map((m) => m.content.map((block) => block.cache_control ?? null))
      assert.deepStrictEqual(marks, [[null], [null], [null], [ephemeral], [ephemeral]].slice(-body.messages.length))
      const all = JSON.stringify(body).split('"cache_control"').length - 1
      assert.strictEqual(all, 4, "four breakpoints, Anthropic's limit")
    })
  )

  it.effect("with one message, the marks are the last tool, the system prompt and that message", () =>
    Effect.sync(() => {
      const marked = markAnthropicCache({
        instructions: [{ role: "system", content: "s" }],
        messages: [{ role: "user", content: "hi" }],
        tools: undefined
      })
      assert.deepStrictEqual(marked.instructions[0]?.providerOptions, { anthropic: { cacheControl: ephemeral } })
      assert.deepStrictEqual(marked.messages[0]?.providerOptions, { anthropic: { cacheControl: ephemeral } })
    })
  )

  it.effect("cache reads and writes are priced at the catalogue's cache prices, to the cent", () =>
    Effect.gen(function* () {
      // A long session's step: 50,000 tokens read from the cache, 3,000 written, 2,000 new, 500 out.
      const usage = { input: 2_000, output: 500, cacheRead: 50_000, cacheWrite: 3_000 }
      const server = yield* wireServer("anthropic", [{ text: "Done.", usage }])
      const config = { model: "anthropic/claude-sonnet-4-5", provider: { anthropic: { baseURL: server.url } } }
      const { info, events } = yield* run().pipe(Effect.provide(llmLayer(config, { ANTHROPIC_API_KEY: "sk-ant-test" })))
      // Claude Sonnet 4.5's published prices, USD per million tokens.
      assert.deepStrictEqual(info.cost, { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 })
      const finish = events.find((e) => e.type === "finish-step")
      const tokens = tokensFromUsage(finish?.type === "finish-step" ? finish.usage : undefined)
      assert.deepStrictEqual(tokens, { input: 2_000, output: 500, reasoning: 0, cache: { read: 50_000, write: 3_000 } })
      // By hand: 2,000 × $3 + 500 × $15 + 50,000 × $0.30 + 3,000 × $3.75 = $39,750 per million = $0.03975.
      const cost = stepCost(tokens, info)
      assert.closeTo(cost, 0.03975, 1e-9)
      assert.strictEqual(cost.toFixed(2), "0.04")
      // The same 55,000 input tokens uncached: 55,000 × $3 + 500 × $15 = $0.1725, so caching saved 13 cents.
      const uncached = stepCost({ input: 55_000, output: 500, reasoning: 0, cache: { read: 0, write: 0 } }, info)
      assert.strictEqual(uncached.toFixed(2), "0.17")
    })
  )
})

describe("prompt caching on OpenAI models", () => {
  it.effect("the Responses body carries prompt_cache_key = the session id, and cached tokens are priced", () =>
    Effect.gen(function* () {
      const server = yield* wireServer("openai-responses", [
        { text: "Done.", usage: { input: 1_000, output: 200, cacheRead: 40_000 } }
      ])
      const config = { model: "openai/gpt-5", provider: { openai: { baseURL: server.url } } }
      const { info, events } = yield* run().pipe(Effect.provide(llmLayer(config, { OPENAI_API_KEY: "sk-oai-test" })))
      assert.strictEqual(server.requests[0]?.path, "/v1/responses")
      const body = server.requests[0]?.body as { prompt_cache_key?: string; tools: Array<Record<string, unknown>> }
      assert.strictEqual(body.prompt_cache_key, "ses_cache_1")
      assert.notInclude(JSON.stringify(body), "cache_control", "no Anthropic marks on OpenAI")
      const finish = events.find((e) => e.type === "finish-step")
      const tokens = tokensFromUsage(finish?.type === "finish-step" ? finish.usage : undefined)
      assert.deepStrictEqual(tokens.cache, { read: 40_000, write: 0 })
      assert.strictEqual(tokens.input, 1_000)
      // GPT-5: 1,000 × $1.25 + 200 × $10 + 40,000 × $0.125 = $8,250 per million = $0.00825.
      assert.closeTo(stepCost(tokens, info), 0.00825, 1e-9)
    })
  )

  it.effect("an openai-compatible server gets neither a cache key nor cache marks", () =>
    Effect.gen(function* () {
      const server = yield* wireServer("openai-responses", [{ text: "Done." }])
      const config = {
        model: "local/qwen3-coder",
        provider: { local: { type: "openai-compatible" as const, baseURL: server.url } }
      }
      yield* run().pipe(Effect.provide(llmLayer(config, {})), Effect.ignore)
      const body = JSON.stringify(server.requests[0]?.body)
      assert.notInclude(body, "prompt_cache_key")
      assert.notInclude(body, "cache_control")
    })
  )
})
