/**
 * Azure OpenAI and xAI, which speak the Responses API, each through its own SDK against a real server on 127.0.0.1
 * speaking Responses SSE: the model calls a tool, the follow-up carries a `function_call_output`, the answer streams,
 * the key goes where the provider wants it (`api-key` on Azure, a bearer token on xAI), the reasoning setting and the
 * session cache key land in the body, and the usage is priced at the catalogue's prices. Azure's resource URL
 * (`https://{resource}.openai.azure.com/openai/v1/responses?api-version=v1`) is reached through a fetch that sends
 * that host to the local server, path and query untouched; its deployment URL (Chat Completions) through `baseURL`.
 */
import { assert, describe, it } from "@effect/vitest"
import type { ModelMessage } from "ai"
import { Effect, Stream } from "effect"
import { catalogReady, modelInfo } from "../src/catalog/model-catalog.js"
import type { ModelInfo } from "../src/catalog/model-info.js"
import { type LLMEvent, type LLMRequest, streamWithModel } from "../src/llm/llm.js"
import { stepCost, tokensFromUsage } from "../src/llm/usage.js"
import { azure } from "../src/provider/azure.js"
import type { ProviderDescriptor, ProviderOptions, ProviderSettings } from "../src/provider/descriptor.js"
import { xai } from "../src/provider/xai.js"
import type { ScriptedServer } from "../src/testing/scripted-server.js"
import { startChatWire } from "../src/testing/wire-chat.js"
import { startResponsesWire } from "../src/testing/wire-responses.js"

const SESSION = "ses_hosted_2"
const schema = { type: "object" as const, properties: { path: { type: "string" as const } }, required: ["path"] }

const serve = (start: () => Promise<ScriptedServer>) =>
  Effect.acquireRelease(Effect.promise(start), (server) => Effect.promise(() => server.close()))

/** A fetch that sends requests for `host` to `target` (an origin), path and query untouched. */
const redirecting =
  (host: string, target: string): typeof fetch =>
  (input, init) => {
    const url = new URL(input instanceof Request ? input.url : input.toString())
    assert.strictEqual(url.host, host, "the SDK addressed the resource's own host")
    return globalThis.fetch(`${target}${url.pathname}${url.search}`, init)
  }

const settingsOf = (overrides: Partial<ProviderSettings> & Pick<ProviderSettings, "id">): ProviderSettings => ({
  apiKey: undefined,
  baseURL: undefined,
  headers: undefined,
  options: {},
  env: {},
  fetch: globalThis.fetch,
  ...overrides
})

/** The provider options Lathe adds: the session cache key and the reasoning (`high`). */
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

const requestOf = (descriptor: ProviderDescriptor, info: ModelInfo, messages: ReadonlyArray<ModelMessage>) =>
  ({
    sessionID: SESSION,
    model: info,
    system: ["You are Lathe."],
    messages,
    tools: { read: { description: "Read a file", inputSchema: schema } },
    providerOptions: latheOptions(descriptor, info),
    abort: new AbortController().signal
  }) satisfies LLMRequest

const stepOf = (descriptor: ProviderDescriptor, settings: ProviderSettings, request: LLMRequest) =>
  Effect.gen(function* () {
    const model = yield* Effect.promise(() => descriptor.load(settings, request.model.modelID))
    const options = { imagesInToolResults: descriptor.imagesInToolResults }
    return [...(yield* Stream.runCollect(streamWithModel(model, request, options)))] as Array<LLMEvent>
  })

const history = (callID: string): ReadonlyArray<ModelMessage> => [
  { role: "user", content: "read a.txt" },
  {
    role: "assistant",
    content: [{ type: "tool-call", toolCallId: callID, toolName: "read", input: { path: "a.txt" } }]
  },
  {
    role: "tool",
    content: [{ type: "tool-result", toolCallId: callID, toolName: "read", output: { type: "text", value: "hello" } }]
  }
]

interface ResponsesBody {
  readonly model: string
  readonly prompt_cache_key?: string
  readonly reasoning?: { readonly effort?: string }
  readonly input: ReadonlyArray<Record<string, unknown>>
}

interface Case {
  readonly descriptor: ProviderDescriptor
  readonly modelID: string
  readonly prices: ModelInfo["cost"]
  /** The step's cost worked out by hand from `prices`. */
  readonly cost: number
  /** Settings pointing the SDK at `origin`, and the path and headers each request must arrive with. */
  readonly setup: (origin: string) => {
    readonly settings: ProviderSettings
    readonly path: string
    readonly headers: Readonly<Record<string, string | undefined>>
  }
}

const cases: ReadonlyArray<Case> = [
  {
    descriptor: azure,
    modelID: "gpt-5.4",
    prices: { input: 2.5, output: 15, cacheRead: 0.25, cacheWrite: 0 },
    // 20,000 × 2.5 + 10,000 × 15 + 80,000 × 0.25 = 220,000 per million.
    cost: 0.22,
    setup: (origin) => ({
      settings: settingsOf({
        id: "azure",
        apiKey: "az-key-test",
        env: { AZURE_RESOURCE_NAME: "lathe-test" },
        fetch: redirecting("lathe-test.openai.azure.com", origin)
      }),
      path: "/openai/v1/responses?api-version=v1",
      headers: { "api-key": "az-key-test", authorization: undefined }
    })
  },
  {
    descriptor: xai,
    modelID: "grok-4.3",
    prices: { input: 1.25, output: 2.5, cacheRead: 0.2, cacheWrite: 0 },
    // 20,000 × 1.25 + 10,000 × 2.5 + 80,000 × 0.2 = 66,000 per million.
    cost: 0.066,
    setup: (origin) => ({
      settings: settingsOf({ id: "xai", apiKey: "xai-key-test", baseURL: `${origin}/v1` }),
      path: "/v1/responses",
      headers: { authorization: "Bearer xai-key-test" }
    })
  }
]

describe("hosted Responses providers, against the Responses wire format", () => {
  for (const c of cases) {
    it.effect(
      `${c.descriptor.type}: a tool call, its function_call_output, the answer, the key, reasoning and cost`,
      () =>
        Effect.gen(function* () {
          yield* Effect.promise(() => catalogReady())
          const server = yield* serve(() =>
            startResponsesWire([
              {
                tool: { name: "read", input: { path: "a.txt" }, id: "call_read_1" },
                usage: { input: 120, output: 30 }
              },
              { text: "It says hello.", usage: { input: 100_000, cached: 80_000, output: 10_000, reasoning: 4_000 } }
            ])
          )
          const { settings, path, headers } = c.setup(new URL(server.url).origin)
          const info = modelInfo(c.descriptor.catalogID, c.modelID)
          assert.deepStrictEqual(info.cost, c.prices, "the catalogue's prices for the model")

          const calls = yield* stepOf(c.descriptor, settings, requestOf(c.descriptor, info, history("x").slice(0, 1)))
          const call = calls.find((e) => e.type === "tool-call")
          assert.deepStrictEqual(call?.type === "tool-call" ? [call.toolName, call.toolCallId, call.input] : [], [
            "read",
            "call_read_1",
            { path: "a.txt" }
          ])
          const events = yield* stepOf(c.descriptor, settings, requestOf(c.descriptor, info, history("call_read_1")))
          assert.strictEqual(
            events.flatMap((e) => (e.type === "text-delta" ? [e.text] : [])).join(""),
            "It says hello."
          )
          assert.strictEqual(events.at(-1)?.type, "finish")

          assert.strictEqual(server.requests.length, 2)
          for (const request of server.requests) {
            assert.strictEqual(request.path, path)
            for (const [name, value] of Object.entries(headers)) assert.strictEqual(request.headers[name], value, name)
            const body = request.body as ResponsesBody
            assert.strictEqual(body.model, c.modelID)
            assert.strictEqual(body.prompt_cache_key, SESSION)
            assert.strictEqual(body.reasoning?.effort, "high")
          }
          const input = (server.requests[1]?.body as ResponsesBody | undefined)?.input ?? []
          const sentCall = input.find((item) => item.type === "function_call")
          assert.deepStrictEqual(
            [sentCall?.call_id, sentCall?.name, sentCall?.arguments],
            ["call_read_1", "read", JSON.stringify({ path: "a.txt" })]
          )
          const output = input.find((item) => item.type === "function_call_output")
          assert.deepStrictEqual([output?.call_id, output?.output], ["call_read_1", "hello"])

          const finish = events.find((e) => e.type === "finish-step")
          const tokens = tokensFromUsage(finish?.type === "finish-step" ? finish.usage : undefined)
          assert.deepStrictEqual(tokens, {
            input: 20_000,
            output: 6_000,
            reasoning: 4_000,
            cache: { read: 80_000, write: 0 }
          })
          const cost = stepCost(tokens, info)
          assert.closeTo(cost, c.cost, 1e-9)
          assert.strictEqual(cost.toFixed(2), c.cost.toFixed(2))
        })
    )
  }

  it.effect(
    "azure: deployment URLs go to the deployment's Chat Completions with the api-version, reasoning forced",
    () =>
      Effect.gen(function* () {
        yield* Effect.promise(() => catalogReady())
        const server = yield* serve(() => startChatWire("openai", [{ text: "ok" }]))
        const settings = settingsOf({
          id: "azure",
          apiKey: "az-key-test",
          baseURL: `${new URL(server.url).origin}/openai`,
          options: { useDeploymentBasedUrls: true, apiVersion: "2024-10-21" }
        })
        // A deployment whose name says nothing of its model; config says it is GPT-5.4, which reasons.
        const info = { ...modelInfo("azure", "gpt-5.4"), modelID: "prod-coder" }
        const events = yield* stepOf(azure, settings, requestOf(azure, info, history("x").slice(0, 1)))
        assert.strictEqual(events.at(-1)?.type, "finish")
        const request = server.requests[0]
        assert.strictEqual(request?.path, "/openai/deployments/prod-coder/chat/completions?api-version=2024-10-21")
        assert.strictEqual(request?.headers["api-key"], "az-key-test")
        const body = request?.body as { reasoning_effort?: string; prompt_cache_key?: string } | undefined
        assert.strictEqual(body?.reasoning_effort, "high")
        assert.strictEqual(body?.prompt_cache_key, SESSION)
      })
  )

  it.effect("azure: a deployment named anything still reasons on the Responses API when config says it reasons", () =>
    Effect.gen(function* () {
      yield* Effect.promise(() => catalogReady())
      const server = yield* serve(() => startResponsesWire([{ text: "ok" }]))
      const settings = settingsOf({
        id: "azure",
        apiKey: "az-key-test",
        baseURL: `${new URL(server.url).origin}/openai`
      })
      // The SDK guesses reasoning from the model id; a deployment's name need not say it runs GPT-5.4.
      const info = { ...modelInfo("azure", "gpt-5.4"), modelID: "prod-coder" }
      yield* stepOf(azure, settings, requestOf(azure, info, history("x").slice(0, 1)))
      const body = server.requests[0]?.body as ResponsesBody | undefined
      assert.strictEqual(server.requests[0]?.path, "/openai/responses")
      assert.strictEqual(body?.reasoning?.effort, "high")
    })
  )

  it("azure: what is missing is worded as the fix", () => {
    const bare = settingsOf({ id: "azure", apiKey: "k" })
    assert.match(azure.missing?.(bare) ?? "", /AZURE_RESOURCE_NAME/)
    assert.isUndefined(azure.missing?.(settingsOf({ id: "azure", env: { AZURE_RESOURCE_NAME: "r" } })))
    assert.isUndefined(azure.missing?.(settingsOf({ id: "azure", baseURL: "https://gw.example/openai" })))
    const deployments = settingsOf({
      id: "azure",
      baseURL: "https://r.openai.azure.com/openai",
      options: { useDeploymentBasedUrls: true }
    })
    assert.match(azure.missing?.(deployments) ?? "", /apiVersion/)
  })
})
