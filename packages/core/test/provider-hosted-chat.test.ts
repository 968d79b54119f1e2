/**
 * The hosted providers that speak Chat Completions (Groq, DeepSeek, Mistral, Together AI, Fireworks AI, Cerebras,
 * OpenRouter), each through its own SDK against a real server on 127.0.0.1 speaking that provider's stream shapes:
 * the model calls a tool, the follow-up carries the tool result as the provider takes it, the answer streams, the key
 * goes in the `Authorization` header, the reasoning setting and the session cache key land in the provider's own
 * fields, and the usage the provider reports (cache reads and writes, reasoning) is priced at the catalogue's prices.
 */
import type { SharedV4ProviderOptions } from "@ai-sdk/provider"
import { assert, describe, it } from "@effect/vitest"
import type { ModelMessage } from "ai"
import { Effect, Stream } from "effect"
import { catalogReady, modelInfo } from "../src/catalog/model-catalog.js"
import type { ModelInfo } from "../src/catalog/model-info.js"
import { type LLMEvent, type LLMRequest, streamWithModel } from "../src/llm/llm.js"
import { stepCost, tokensFromUsage } from "../src/llm/usage.js"
import { cerebras } from "../src/provider/cerebras.js"
import { deepseek } from "../src/provider/deepseek.js"
import type { ProviderDescriptor, ProviderOptions, ProviderSettings } from "../src/provider/descriptor.js"
import { fireworks } from "../src/provider/fireworks.js"
import { groq } from "../src/provider/groq.js"
import { mistral } from "../src/provider/mistral.js"
import { openrouter } from "../src/provider/openrouter.js"
import { togetherai } from "../src/provider/togetherai.js"
import { type ChatDialect, type ChatWireUsage, startChatWire } from "../src/testing/wire-chat.js"

const SESSION = "ses_hosted_1"
const schema = { type: "object" as const, properties: { path: { type: "string" as const } }, required: ["path"] }

/** A long session's step: 100,000 prompt tokens of which 80,000 come from the cache, 10,000 out of which 4,000 think. */
const USAGE: ChatWireUsage = { prompt: 100_000, cached: 80_000, completion: 10_000, reasoning: 4_000 }

interface Case {
  readonly descriptor: ProviderDescriptor
  readonly dialect: ChatDialect
  readonly modelID: string
  /** The path the SDK's base URL ends with, as the provider serves it (`/openai/v1` on Groq). */
  readonly base: string
  /** The catalogue's prices for the model, USD per million tokens. */
  readonly prices: ModelInfo["cost"]
  readonly usage: ChatWireUsage
  /** What Lathe makes of the usage. */
  readonly tokens: ReturnType<typeof tokensFromUsage>
  /** The step's cost worked out by hand from `prices`. */
  readonly cost: number
  /** The request body fields the reasoning setting (`high`) and the session cache key become. */
  readonly fields: Readonly<Record<string, unknown>>
}

const TOKENS = { input: 20_000, output: 6_000, reasoning: 4_000, cache: { read: 80_000, write: 0 } }

const cases: ReadonlyArray<Case> = [
  {
    descriptor: groq,
    dialect: "groq",
    modelID: "openai/gpt-oss-120b",
    base: "/openai/v1",
    prices: { input: 0.15, output: 0.6, cacheRead: 0.075, cacheWrite: 0 },
    usage: USAGE,
    tokens: TOKENS,
    // 20,000 × 0.15 + 10,000 × 0.6 + 80,000 × 0.075 = 15,000 per million.
    cost: 0.015,
    fields: { reasoning_effort: "high" }
  },
  {
    descriptor: deepseek,
    dialect: "deepseek",
    modelID: "deepseek-v4-pro",
    base: "",
    prices: { input: 0.435, output: 0.87, cacheRead: 0.003625, cacheWrite: 0 },
    usage: USAGE,
    tokens: TOKENS,
    // 20,000 × 0.435 + 10,000 × 0.87 + 80,000 × 0.003625 = 17,690 per million.
    cost: 0.01769,
    fields: { thinking: { type: "enabled" }, reasoning_effort: "high" }
  },
  {
    descriptor: mistral,
    dialect: "mistral",
    modelID: "mistral-medium-2604",
    base: "/v1",
    prices: { input: 1.5, output: 7.5, cacheRead: 0, cacheWrite: 0 },
    // Mistral reports no reasoning tokens.
    usage: { prompt: 100_000, cached: 80_000, completion: 10_000 },
    tokens: { input: 20_000, output: 10_000, reasoning: 0, cache: { read: 80_000, write: 0 } },
    // 20,000 × 1.5 + 10,000 × 7.5 (cache reads unpriced in the catalogue) = 105,000 per million.
    cost: 0.105,
    fields: { reasoning_effort: "high", prompt_cache_key: SESSION }
  },
  {
    descriptor: togetherai,
    dialect: "openai",
    modelID: "moonshotai/Kimi-K2.7-Code",
    base: "/v1",
    prices: { input: 0.95, output: 4, cacheRead: 0.19, cacheWrite: 0 },
    usage: USAGE,
    tokens: TOKENS,
    // 20,000 × 0.95 + 10,000 × 4 + 80,000 × 0.19 = 74,200 per million.
    cost: 0.0742,
    // A hybrid model: switched to thinking, with no effort.
    fields: { reasoning: { enabled: true }, reasoning_effort: undefined }
  },
  {
    descriptor: fireworks,
    dialect: "openai",
    modelID: "accounts/fireworks/models/kimi-k2p7-code",
    base: "/inference/v1",
    prices: { input: 0.95, output: 4, cacheRead: 0.19, cacheWrite: 0 },
    usage: USAGE,
    tokens: TOKENS,
    cost: 0.0742,
    fields: { reasoning_effort: "high", prompt_cache_key: SESSION }
  },
  {
    descriptor: cerebras,
    dialect: "openai",
    modelID: "gpt-oss-120b",
    base: "/v1",
    prices: { input: 0.35, output: 0.75, cacheRead: 0, cacheWrite: 0 },
    usage: USAGE,
    tokens: TOKENS,
    // 20,000 × 0.35 + 10,000 × 0.75 = 14,500 per million.
    cost: 0.0145,
    fields: { reasoning_effort: "high", prompt_cache_key: SESSION }
  },
  {
    descriptor: openrouter,
    dialect: "openrouter",
    modelID: "anthropic/claude-sonnet-4.6",
    base: "/api/v1",
    prices: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
    // 100,000 prompt tokens: 80,000 read from the cache, 5,000 written to it, 15,000 neither.
    usage: { prompt: 100_000, cached: 80_000, cacheWrite: 5_000, completion: 10_000, reasoning: 4_000, cost: 0.24 },
    tokens: { input: 15_000, output: 6_000, reasoning: 4_000, cache: { read: 80_000, write: 5_000 } },
    // 15,000 × 3 + 10,000 × 15 + 80,000 × 0.3 + 5,000 × 3.75 = 237,750 per million.
    cost: 0.23775,
    fields: { reasoning: { effort: "high" } }
  }
]

const settingsOf = (id: string, baseURL: string, apiKey: string): ProviderSettings => ({
  id,
  apiKey,
  baseURL,
  headers: undefined,
  options: {},
  env: {},
  fetch: globalThis.fetch
})

/** The provider options Lathe adds: the session cache key (where the provider takes one) and the reasoning. */
const latheOptions = (descriptor: ProviderDescriptor, info: ModelInfo): ProviderOptions => {
  const merged: Record<string, Record<string, unknown>> = {}
  const cache = descriptor.cache?.(info.modelID)
  const parts = [
    cache?.kind === "session-key" ? cache.options(SESSION) : {},
    info.capabilities.reasoning ? (descriptor.reasoning?.(info, "high") ?? {}) : {}
  ]
  for (const options of parts)
    for (const [name, values] of Object.entries(options)) merged[name] = { ...merged[name], ...values }
  return merged
}

/** The first message, with the descriptor's cache mark on it when the provider caches by breakpoints. */
const prompt = (descriptor: ProviderDescriptor, modelID: string): ModelMessage => {
  const cache = descriptor.cache?.(modelID)
  return {
    role: "user",
    content: "read a.txt",
    ...(cache?.kind === "breakpoints" ? { providerOptions: cache.mark as SharedV4ProviderOptions } : {})
  }
}

const stepOf = (descriptor: ProviderDescriptor, settings: ProviderSettings, request: LLMRequest) =>
  Effect.gen(function* () {
    const model = yield* Effect.promise(() => descriptor.load(settings, request.model.modelID))
    const options = { imagesInToolResults: descriptor.imagesInToolResults }
    return [...(yield* Stream.runCollect(streamWithModel(model, request, options)))] as Array<LLMEvent>
  })

interface ChatBody {
  readonly model: string
  readonly messages: ReadonlyArray<{
    readonly role: string
    readonly content?: unknown
    readonly tool_call_id?: string
    readonly tool_calls?: ReadonlyArray<{ readonly id: string; readonly function: { readonly name: string } }>
  }>
}

describe("hosted Chat Completions providers, against their own wire formats", () => {
  for (const c of cases) {
    it.effect(`${c.descriptor.type}: a tool call, its result, the answer, the key, reasoning and cost`, () =>
      Effect.gen(function* () {
        yield* Effect.promise(() => catalogReady())
        const callID = c.dialect === "mistral" ? "Rd7kQ2xZp" : "call_read_1"
        const server = yield* Effect.acquireRelease(
          Effect.promise(() =>
            startChatWire(c.dialect, [
              { tool: { name: "read", input: { path: "a.txt" }, id: callID }, usage: { prompt: 120, completion: 30 } },
              { reasoning: "It is short.", text: "It says hello.", usage: c.usage }
            ])
          ),
          (s) => Effect.promise(() => s.close())
        )
        const origin = new URL(server.url).origin
        const key = `sk-${c.descriptor.type}-test`
        const settings = settingsOf(c.descriptor.type, `${origin}${c.base}`, key)
        const info = modelInfo(c.descriptor.catalogID, c.modelID)
        assert.deepStrictEqual(info.cost, c.prices, "the catalogue's prices for the model")
        assert.isTrue(info.capabilities.reasoning, "the catalogue says the model reasons")
        const providerOptions = latheOptions(c.descriptor, info)
        const base = {
          sessionID: SESSION,
          model: info,
          system: ["You are Lathe."],
          tools: { read: { description: "Read a file", inputSchema: schema } },
          providerOptions,
          abort: new AbortController().signal
        }
        const first = prompt(c.descriptor, c.modelID)

        // Step 1: the model calls `read`.
        const calls = yield* stepOf(c.descriptor, settings, { ...base, messages: [first] })
        const call = calls.find((e) => e.type === "tool-call")
        assert.deepStrictEqual(call?.type === "tool-call" ? [call.toolName, call.toolCallId, call.input] : [], [
          "read",
          callID,
          { path: "a.txt" }
        ])

        // Step 2: the tool result goes back; the answer streams.
        const history: ReadonlyArray<ModelMessage> = [
          first,
          {
            role: "assistant",
            content: [{ type: "tool-call", toolCallId: callID, toolName: "read", input: { path: "a.txt" } }]
          },
          {
            role: "tool",
            content: [
              { type: "tool-result", toolCallId: callID, toolName: "read", output: { type: "text", value: "hello" } }
            ]
          }
        ]
        const events = yield* stepOf(c.descriptor, settings, { ...base, messages: history })
        const text = events.flatMap((e) => (e.type === "text-delta" ? [e.text] : [])).join("")
        assert.strictEqual(text, "It says hello.")
        const thinking = events.flatMap((e) => (e.type === "reasoning-delta" ? [e.text] : [])).join("")
        assert.strictEqual(thinking, "It is short.")
        assert.strictEqual(events.at(-1)?.type, "finish")

        // The wire: path, key, model, reasoning and cache fields, the tool result in the provider's format.
        assert.strictEqual(server.requests.length, 2)
        for (const request of server.requests) {
          assert.strictEqual(request.method, "POST")
          assert.strictEqual(request.path, `${c.base}/chat/completions`)
          assert.strictEqual(request.headers.authorization, `Bearer ${key}`)
          const body = request.body as ChatBody & Record<string, unknown>
          assert.strictEqual(body.model, c.modelID)
          for (const [field, value] of Object.entries(c.fields)) assert.deepStrictEqual(body[field], value, field)
        }
        const sent = (server.requests[1]?.body as ChatBody | undefined)?.messages ?? []
        const assistant = sent.find((m) => m.role === "assistant")
        assert.deepStrictEqual(
          assistant?.tool_calls?.map((t) => [t.id, t.function.name]),
          [[callID, "read"]]
        )
        const tool = sent.find((m) => m.role === "tool")
        assert.deepStrictEqual([tool?.tool_call_id, tool?.content], [callID, "hello"])

        // Usage and cost.
        const finish = events.find((e) => e.type === "finish-step")
        const tokens = tokensFromUsage(finish?.type === "finish-step" ? finish.usage : undefined)
        assert.deepStrictEqual(tokens, c.tokens)
        if (c.usage.cost !== undefined) {
          // OpenRouter also says what it charged; Lathe prices from the catalogue, which agrees to the cent here.
          const metadata = finish?.type === "finish-step" ? finish.providerMetadata : undefined
          const charged = (metadata?.openrouter?.usage as { cost?: number } | undefined)?.cost
          assert.strictEqual(charged, c.usage.cost)
        }
        const cost = stepCost(tokens, info)
        assert.closeTo(cost, c.cost, 1e-9)
        assert.strictEqual(cost.toFixed(2), c.cost.toFixed(2))
      })
    )
  }

  it.effect("openrouter: a Claude model's cache mark becomes cache_control; other models carry none", () =>
    Effect.gen(function* () {
      const server = yield* Effect.acquireRelease(
        Effect.promise(() => startChatWire("openrouter", [{ text: "ok" }])),
        (s) => Effect.promise(() => s.close())
      )
      const settings = settingsOf("openrouter", server.url, "sk-or-test")
      const info = modelInfo("openrouter", "anthropic/claude-sonnet-4.6")
      const request = {
        sessionID: SESSION,
        model: info,
        system: ["You are Lathe."],
        messages: [prompt(openrouter, info.modelID)],
        tools: {},
        abort: new AbortController().signal
      }
      yield* stepOf(openrouter, settings, request)
      const body = server.requests[0]?.body as ChatBody
      const user = body.messages.find((m) => m.role === "user")
      assert.deepStrictEqual(user?.content, [
        { type: "text", text: "read a.txt", cache_control: { type: "ephemeral" } }
      ])
      assert.deepStrictEqual((server.requests[0]?.body as { stream_options?: unknown } | undefined)?.stream_options, {
        include_usage: true
      })
      assert.strictEqual(openrouter.cache?.("openai/gpt-5"), undefined, "OpenAI models cache on their own")
      assert.strictEqual(openrouter.prompt instanceof Function && openrouter.prompt(info.modelID), "anthropic")
    })
  )
})
