/**
 * Google's providers, each through its descriptor and its real ai SDK against a real HTTP server on 127.0.0.1 that
 * speaks the provider's wire format: the Gemini API (`google`), Gemini on Vertex AI (`google-vertex`, with
 * application default credentials and with an express-mode key) and Claude on Vertex (`google-vertex-anthropic`).
 * Each test runs a tool call, sends its result back in the provider's own shape, streams the answer, and prices the
 * reported usage at the catalogue's prices.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { LanguageModelV4 } from "@ai-sdk/provider"
import { assert, describe, it } from "@effect/vitest"
import type { ModelMessage } from "ai"
import { Effect, Layer, Stream } from "effect"
import { catalogReady, modelInfo } from "../src/catalog/model-catalog.js"
import type { ModelInfo } from "../src/catalog/model-info.js"
import { Config, type ConfigTestInput } from "../src/config/config.js"
import { LLM, type LLMEvent, type LLMRequest, type ProviderEnv, streamWithModel } from "../src/llm/llm.js"
import { stepCost, tokensFromUsage } from "../src/llm/usage.js"
import type { ProviderDescriptor, ProviderSettings, ReasoningSetting } from "../src/provider/descriptor.js"
import { ANTHROPIC_CACHE_MARK } from "../src/provider/families.js"
import { google } from "../src/provider/google.js"
import { googleVertex, googleVertexAnthropic } from "../src/provider/google-vertex.js"
import { descriptorFor } from "../src/provider/registry.js"
import { startWireServer, type WireScript } from "../src/testing/scripted-wire.js"
import {
  GEMINI_WIRE_ACCESS_TOKEN,
  type GeminiScript,
  type GeminiServer,
  startGeminiServer
} from "../src/testing/wire-gemini.js"

const geminiServer = (script: GeminiScript) =>
  Effect.acquireRelease(
    Effect.promise(() => startGeminiServer(script)),
    (server) => Effect.promise(() => server.close())
  )

const anthropicServer = (script: WireScript) =>
  Effect.acquireRelease(
    Effect.promise(() => startWireServer("anthropic", script)),
    (server) => Effect.promise(() => server.close())
  )

const tempDir = Effect.acquireRelease(
  Effect.promise(() => mkdtemp(join(tmpdir(), "lathe-google-"))),
  (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
)

/**
 * A fetch for the SDK that sends what it addresses to `*.googleapis.com` to the local server at `origin` (recording
 * the URL the SDK built) and refuses anything else, so no test reaches Google.
 */
const toLocal =
  (origin: string, seen: Array<string>): typeof fetch =>
  (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input))
    seen.push(url.href)
    if (!url.hostname.endsWith(".googleapis.com")) return Promise.reject(new Error(`test fetch: refused ${url.href}`))
    return fetch(`${origin}${url.pathname}${url.search}`, init)
  }

const settingsOf = (id: string, overrides: Partial<ProviderSettings>): ProviderSettings => ({
  id,
  apiKey: undefined,
  baseURL: undefined,
  headers: undefined,
  options: {},
  env: {},
  fetch: globalThis.fetch,
  ...overrides
})

/** The catalogue's entry for a model, asked to reason as `reasoning` says. */
const infoOf = (providerID: string, modelID: string, reasoning: ReasoningSetting) =>
  Effect.promise(async () => {
    await catalogReady()
    return { ...modelInfo(providerID, modelID), reasoning } satisfies ModelInfo
  })

const readTool = {
  read: {
    description: "Read a file",
    inputSchema: { type: "object" as const, properties: { path: { type: "string" as const } }, required: ["path"] }
  }
}

/** Streams one step of `messages` on `model` as the LLM layer does, with the descriptor's options. */
const step = (
  descriptor: ProviderDescriptor,
  model: LanguageModelV4,
  info: ModelInfo,
  messages: ReadonlyArray<ModelMessage>
) =>
  Effect.gen(function* () {
    const request: LLMRequest = {
      sessionID: "ses_google",
      model: info,
      system: ["You are Lathe."],
      messages,
      tools: readTool,
      abort: new AbortController().signal
    }
    const options = {
      imagesInToolResults: descriptor.imagesInToolResults,
      cache: descriptor.cache?.(info.modelID),
      reasoning: descriptor.reasoning
    }
    return [...(yield* Stream.runCollect(streamWithModel(model, request, options)))] as Array<LLMEvent>
  })

/** Two steps: the model calls `read`, then answers once the result ("hello") is back. */
const toolRoundTrip = (descriptor: ProviderDescriptor, model: LanguageModelV4, info: ModelInfo) =>
  Effect.gen(function* () {
    const prompt: ModelMessage = { role: "user", content: "What does a.txt say?" }
    const first = yield* step(descriptor, model, info, [prompt])
    const call = first.find((event) => event.type === "tool-call")
    assert.ok(call?.type === "tool-call", "the first step calls a tool")
    const second = yield* step(descriptor, model, info, [
      prompt,
      {
        role: "assistant",
        content: [{ type: "tool-call", toolCallId: call.toolCallId, toolName: call.toolName, input: call.input }]
      },
      {
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: call.toolCallId,
            toolName: call.toolName,
            output: { type: "text", value: "hello" }
          }
        ]
      }
    ])
    const text = second.flatMap((event) => (event.type === "text-delta" ? [event.text] : [])).join("")
    const finish = second.find((event) => event.type === "finish-step")
    const tokens = tokensFromUsage(finish?.type === "finish-step" ? finish.usage : undefined)
    return { first, call, text, tokens, cost: stepCost(tokens, info) }
  })

interface GeminiBody {
  readonly contents: ReadonlyArray<{ readonly role: string; readonly parts: ReadonlyArray<Record<string, unknown>> }>
  readonly generationConfig?: { readonly thinkingConfig?: unknown }
}

/** The Gemini script both Gemini tests play: a thought and a `read` call, then the answer with `usage`. */
const geminiScript = (usage: { prompt: number; candidates: number; thoughts: number; cached: number }) => [
  { thought: "I should read the file.", tool: { name: "read", input: { path: "a.txt" } } },
  { text: "a.txt says hello.", usage }
]

/** The second request's tool call and result parts, as Gemini takes them. */
const geminiToolTurn = (server: GeminiServer, index: number) => {
  const body = server.requests.filter((r) => r.path !== "/token")[index]?.body as GeminiBody
  const parts = body.contents.flatMap((content) => content.parts.map((part) => ({ role: content.role, ...part })))
  return {
    body,
    call: parts.find((part) => "functionCall" in part),
    result: parts.find((part) => "functionResponse" in part)
  }
}

describe("google: the Gemini API", () => {
  it.effect("a tool call, its functionResponse and the answer, with x-goog-api-key, thinking and cost", () =>
    Effect.gen(function* () {
      const usage = { prompt: 400_000, candidates: 20_000, thoughts: 30_000, cached: 300_000 }
      const server = yield* geminiServer(geminiScript(usage))
      const settings = settingsOf("google", { apiKey: "AIza-test-key", baseURL: `${server.origin}/v1beta` })
      const model = yield* Effect.promise(() => google.load(settings, "gemini-2.5-pro"))
      const info = yield* infoOf("google", "gemini-2.5-pro", "medium")
      const run = yield* toolRoundTrip(google, model, info)

      assert.deepStrictEqual([run.call.toolName, run.call.input], ["read", { path: "a.txt" }])
      const thought = run.first.filter((e) => e.type === "reasoning-delta").map((e) => e.text)
      assert.deepStrictEqual(thought, ["I should read the file."], "thoughts stream as reasoning")
      assert.strictEqual(run.text, "a.txt says hello.")
      for (const request of server.requests) {
        assert.strictEqual(request.path, "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse")
        assert.strictEqual(request.headers["x-goog-api-key"], "AIza-test-key")
        assert.isUndefined(request.headers.authorization)
      }
      const turn = geminiToolTurn(server, 1)
      // Gemini 2.5 takes a budget: "medium" is 16,000 tokens.
      assert.deepStrictEqual(turn.body.generationConfig?.thinkingConfig, {
        thinkingBudget: 16_000,
        includeThoughts: true
      })
      // The Gemini API pairs a call and its response by id (Vertex, below, by name and order).
      const id = run.call.toolCallId
      assert.deepInclude(turn.call, { role: "model", functionCall: { id, name: "read", args: { path: "a.txt" } } })
      assert.deepInclude(turn.result, {
        role: "user",
        functionResponse: { id, name: "read", response: { name: "read", content: "hello" } }
      })

      // promptTokenCount includes the cached part; thoughts are billed as output.
      assert.deepStrictEqual(run.tokens, {
        input: 100_000,
        output: 20_000,
        reasoning: 30_000,
        cache: { read: 300_000, write: 0 }
      })
      // Gemini 2.5 Pro: $1.25 in, $10 out, $0.125 cache read per million. By hand: 100,000 × 1.25 + 50,000 × 10 +
      // 300,000 × 0.125 = $662,500 per million = $0.6625.
      assert.deepInclude(info.cost, { input: 1.25, output: 10, cacheRead: 0.125 })
      assert.closeTo(run.cost, 0.6625, 1e-9)
      assert.strictEqual(run.cost.toFixed(2), "0.66")
    })
  )

  it.effect("reasoning: a level on Gemini 3 and later, a budget within the model's maximum on 2.x", () =>
    Effect.sync(() => {
      const target = (modelID: string) => ({
        modelID,
        limit: { context: 1_048_576, output: 65_536 },
        capabilities: { reasoning: true }
      })
      const thinking = (modelID: string, reasoning: ReasoningSetting) =>
        google.reasoning?.(target(modelID), reasoning).google?.thinkingConfig
      assert.deepStrictEqual(thinking("gemini-3.1-pro-preview", "high"), {
        thinkingLevel: "high",
        includeThoughts: true
      })
      assert.deepStrictEqual(thinking("gemini-3.5-flash", { budget: 2_000 }), {
        thinkingLevel: "low",
        includeThoughts: true
      })
      assert.deepStrictEqual(thinking("gemini-flash-latest", "medium"), {
        thinkingLevel: "medium",
        includeThoughts: true
      })
      assert.deepStrictEqual(thinking("gemini-2.5-flash", "high"), { thinkingBudget: 24_576, includeThoughts: true })
      assert.deepStrictEqual(thinking("gemini-2.5-pro", "high"), { thinkingBudget: 32_000, includeThoughts: true })
      assert.deepStrictEqual(thinking("gemini-2.5-pro", { budget: 40_000 }), {
        thinkingBudget: 32_768,
        includeThoughts: true
      })
      assert.strictEqual(descriptorFor("gemini"), google, "provider.gemini means type google")
    })
  )
})

describe("google-vertex: Gemini on Vertex AI", () => {
  it.effect("application default credentials: the regional URL, a Bearer token, a tool round trip, a level", () =>
    Effect.gen(function* () {
      const usage = { prompt: 250_000, candidates: 12_000, thoughts: 8_000, cached: 200_000 }
      const server = yield* geminiServer(geminiScript(usage))
      const dir = yield* tempDir
      const credentials = yield* Effect.promise(() => server.credentialsFile(dir))
      const seen: Array<string> = []
      const env = {
        GOOGLE_VERTEX_PROJECT: "lathe-test",
        GOOGLE_VERTEX_LOCATION: "europe-west4",
        GOOGLE_APPLICATION_CREDENTIALS: credentials
      }
      const settings = settingsOf("google-vertex", { env, fetch: toLocal(server.origin, seen) })
      assert.isUndefined(googleVertex.missing?.(settings), "a project is all Vertex needs")
      const model = yield* Effect.promise(() => googleVertex.load(settings, "gemini-3.1-pro-preview"))
      const info = yield* infoOf("google-vertex", "gemini-3.1-pro-preview", "high")
      const run = yield* toolRoundTrip(googleVertex, model, info)

      assert.deepStrictEqual([run.call.toolName, run.call.input], ["read", { path: "a.txt" }])
      assert.strictEqual(run.text, "a.txt says hello.")
      const url =
        "https://europe-west4-aiplatform.googleapis.com/v1beta1/projects/lathe-test/locations/europe-west4" +
        "/publishers/google/models/gemini-3.1-pro-preview:streamGenerateContent?alt=sse"
      assert.deepStrictEqual(seen, [url, url])
      // The credentials file's token exchange happened once, on this server; both steps carry its token.
      assert.strictEqual(server.requests.filter((r) => r.path === "/token").length, 1)
      const steps = server.requests.filter((r) => r.path !== "/token")
      assert.deepStrictEqual(
        steps.map((r) => [r.headers.authorization, r.headers["x-goog-api-key"]]),
        [
          [`Bearer ${GEMINI_WIRE_ACCESS_TOKEN}`, undefined],
          [`Bearer ${GEMINI_WIRE_ACCESS_TOKEN}`, undefined]
        ]
      )
      const turn = geminiToolTurn(server, 1)
      assert.deepStrictEqual(turn.body.generationConfig?.thinkingConfig, {
        thinkingLevel: "high",
        includeThoughts: true
      })
      assert.deepInclude(turn.call?.functionCall as object, { name: "read", args: { path: "a.txt" } })
      assert.deepInclude(turn.result?.functionResponse as object, {
        name: "read",
        response: { name: "read", content: "hello" }
      })
      assert.deepStrictEqual(run.tokens, {
        input: 50_000,
        output: 12_000,
        reasoning: 8_000,
        cache: { read: 200_000, write: 0 }
      })
      // Gemini 3.1 Pro Preview on Vertex: $2 in, $12 out, $0.20 cache read. 50,000 × 2 + 20,000 × 12 + 200,000 × 0.2
      // = $380,000 per million = $0.38.
      assert.deepInclude(info.cost, { input: 2, output: 12, cacheRead: 0.2 })
      assert.closeTo(run.cost, 0.38, 1e-9)
      assert.strictEqual(run.cost.toFixed(2), "0.38")
    })
  )

  it.effect("express mode: GOOGLE_VERTEX_API_KEY goes as x-goog-api-key to the project-less URL", () =>
    Effect.gen(function* () {
      const server = yield* geminiServer([{ text: "hi" }])
      const seen: Array<string> = []
      const settings = settingsOf("google-vertex", {
        apiKey: "vertex-express-key",
        fetch: toLocal(server.origin, seen)
      })
      assert.isUndefined(googleVertex.missing?.(settings), "an express-mode key needs no project")
      assert.match(googleVertex.missing?.(settingsOf("google-vertex", {})) ?? "", /GOOGLE_VERTEX_PROJECT/)
      const model = yield* Effect.promise(() => googleVertex.load(settings, "gemini-2.5-flash"))
      const info = yield* infoOf("google-vertex", "gemini-2.5-flash", "low")
      const events = yield* step(googleVertex, model, info, [{ role: "user", content: "hi" }])
      assert.strictEqual(events.at(-1)?.type, "finish")
      assert.deepStrictEqual(seen, [
        "https://aiplatform.googleapis.com/v1/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
      ])
      assert.strictEqual(server.requests[0]?.headers["x-goog-api-key"], "vertex-express-key")
      assert.isUndefined(server.requests[0]?.headers.authorization)
      const body = server.requests[0]?.body as GeminiBody
      assert.deepStrictEqual(body.generationConfig?.thinkingConfig, { thinkingBudget: 4_000, includeThoughts: true })
    })
  )

  it.effect(
    "GOOGLE_APPLICATION_CREDENTIALS naming a file that is not credentials is refused, with the file named",
    () =>
      Effect.gen(function* () {
        const dir = yield* tempDir
        // Not JSON, a JSON array, an object without a `type`, a `type` that is not a string: none is a credentials file.
        for (const [name, text] of [
          ["text.json", "not json"],
          ["array.json", '[{"type":"service_account"}]'],
          ["untyped.json", '{"project_id":"lathe-test"}'],
          ["numbered.json", '{"type":1}']
        ] as const) {
          const file = join(dir, name)
          yield* Effect.promise(() => writeFile(file, text))
          const env = { GOOGLE_VERTEX_PROJECT: "lathe-test", GOOGLE_APPLICATION_CREDENTIALS: file }
          const failed = yield* Effect.flip(
            Effect.tryPromise(() => googleVertex.load(settingsOf("google-vertex", { env }), "gemini-2.5-flash"))
          )
          assert.include(
            String(failed.cause),
            `GOOGLE_APPLICATION_CREDENTIALS is ${file}, which is not a Google credentials`
          )
          assert.include(String(failed.cause), "gcloud auth application-default login")
        }
      })
  )
})

interface AnthropicBody {
  readonly anthropic_version?: string
  readonly model?: string
  readonly thinking?: unknown
  readonly system: ReadonlyArray<{ readonly cache_control?: unknown }>
  readonly tools: ReadonlyArray<{ readonly cache_control?: unknown }>
  readonly messages: ReadonlyArray<{
    readonly role: string
    readonly content: ReadonlyArray<{
      readonly type: string
      readonly content?: unknown
      readonly cache_control?: unknown
    }>
  }>
}

describe("google-vertex: the catalogue's other Vertex models", () => {
  it.effect("Claude ids go to Vertex's Anthropic endpoint with its cache and thinking; MaaS ids are refused", () =>
    Effect.gen(function* () {
      const settings = settingsOf("google-vertex", { env: { GOOGLE_VERTEX_PROJECT: "lathe-test" } })
      const claude = yield* Effect.promise(() => googleVertex.load(settings, "claude-sonnet-4-5@20250929"))
      assert.strictEqual(claude.provider, "googleVertex.anthropic.messages")
      assert.deepStrictEqual(googleVertex.cache?.("claude-sonnet-4-5@20250929"), {
        kind: "breakpoints",
        mark: ANTHROPIC_CACHE_MARK
      })
      assert.isUndefined(googleVertex.cache?.("gemini-2.5-pro"), "Gemini caches implicitly")
      const target = { modelID: "claude-sonnet-4-5@20250929", limit: { context: 200_000, output: 64_000 } }
      assert.deepStrictEqual(googleVertex.reasoning?.({ ...target, capabilities: { reasoning: true } }, "low"), {
        anthropic: { thinking: { type: "enabled", budgetTokens: 4_000 } }
      })
      const prompt = googleVertex.prompt
      assert.deepStrictEqual(
        typeof prompt === "function" ? [prompt("claude-opus-4-5@20251101"), prompt("gemini-2.5-pro")] : [],
        ["anthropic", "gemini"]
      )
      const gemini = yield* Effect.promise(() => googleVertex.load(settings, "gemini-2.5-pro"))
      assert.strictEqual(gemini.provider, "google.vertex.chat")
      const refused = yield* Effect.promise(() =>
        googleVertex.load(settings, "zai-org/glm-5-maas").then(
          () => "loaded",
          (error: unknown) => String(error)
        )
      )
      assert.match(refused, /Model-as-a-Service/)
    })
  )
})

describe("google-vertex-anthropic: Claude on Vertex AI", () => {
  it.effect("streamRawPredict with a Bearer token, cache breakpoints, thinking, the tool result, and cost", () =>
    Effect.gen(function* () {
      const usage = { input: 2_000, output: 500, cacheRead: 50_000, cacheWrite: 3_000 }
      const server = yield* anthropicServer([
        { tool: { name: "read", input: { path: "a.txt" } } },
        { text: "hello", usage }
      ])
      const tokens = yield* geminiServer([])
      const dir = yield* tempDir
      const credentials = yield* Effect.promise(() => tokens.credentialsFile(dir))
      const seen: Array<string> = []
      const env = { GOOGLE_CLOUD_PROJECT: "lathe-test", GOOGLE_APPLICATION_CREDENTIALS: credentials }
      const settings = settingsOf("google-vertex-anthropic", { env, fetch: toLocal(server.url.slice(0, -3), seen) })
      assert.isUndefined(googleVertexAnthropic.missing?.(settings))
      assert.match(googleVertexAnthropic.missing?.(settingsOf("google-vertex-anthropic", {})) ?? "", /PROJECT/)
      const modelID = "claude-sonnet-4-5@20250929"
      assert.deepStrictEqual(googleVertexAnthropic.cache?.(modelID), {
        kind: "breakpoints",
        mark: ANTHROPIC_CACHE_MARK
      })
      const model = yield* Effect.promise(() => googleVertexAnthropic.load(settings, modelID))
      const info = yield* infoOf("google-vertex-anthropic", modelID, "medium")
      const run = yield* toolRoundTrip(googleVertexAnthropic, model, info)

      assert.deepStrictEqual([run.call.toolName, run.call.input], ["read", { path: "a.txt" }])
      assert.strictEqual(run.text, "hello")
      // The default region is `global`, whose host has no region prefix.
      const url =
        "https://aiplatform.googleapis.com/v1/projects/lathe-test/locations/global/publishers/anthropic/models/" +
        "claude-sonnet-4-5@20250929:streamRawPredict"
      assert.deepStrictEqual(seen, [url, url])
      for (const request of server.requests) {
        assert.strictEqual(request.headers.authorization, `Bearer ${GEMINI_WIRE_ACCESS_TOKEN}`)
        assert.isUndefined(request.headers["x-api-key"])
      }
      const body = server.requests[1]?.body as AnthropicBody
      assert.strictEqual(body.anthropic_version, "vertex-2023-10-16")
      assert.isUndefined(body.model, "Vertex takes the model from the URL")
      assert.deepStrictEqual(body.thinking, { type: "enabled", budget_tokens: 16_000 })
      const ephemeral = { type: "ephemeral" }
      assert.deepStrictEqual(body.tools.at(-1)?.cache_control, ephemeral)
      assert.deepStrictEqual(body.system.at(-1)?.cache_control, ephemeral)
      const marks = JSON.stringify(body).split('"cache_control"').length - 1
      assert.strictEqual(marks, 4, "four breakpoints: the tool, the system prompt and the last two messages")
      const result = body.messages.at(-1)?.content.find((block) => block.type === "tool_result")
      assert.deepInclude(result as object, { content: "hello" })

      assert.deepStrictEqual(run.tokens, {
        input: 2_000,
        output: 500,
        reasoning: 0,
        cache: { read: 50_000, write: 3_000 }
      })
      // Claude Sonnet 4.5 on Vertex: $3 in, $15 out, $0.30 cache read, $3.75 cache write. 2,000 × 3 + 500 × 15 +
      // 50,000 × 0.3 + 3,000 × 3.75 = $39,750 per million = $0.03975.
      assert.closeTo(run.cost, 0.03975, 1e-9)
      assert.strictEqual(run.cost.toFixed(2), "0.04")
    })
  )
})

const llmLayer = (config: ConfigTestInput, env: ProviderEnv) =>
  LLM.layerWith(env).pipe(Layer.provide(Config.layerTest(config)))

const oneStep = Effect.gen(function* () {
  const llm = yield* LLM
  const info = yield* Effect.orDie(llm.resolve())
  const request: LLMRequest = {
    sessionID: "ses_google_e2e",
    model: info,
    system: ["You are Lathe."],
    messages: [{ role: "user", content: "hi" }],
    tools: {},
    abort: new AbortController().signal
  }
  const events = [...(yield* Stream.runCollect(llm.stream(request)))] as Array<LLMEvent>
  return { info, events }
})

describe("through LLM.layerWith(env): detection and keys from the environment", () => {
  it.effect("GEMINI_API_KEY alone sets up google, its default model, and the key it sends", () =>
    Effect.gen(function* () {
      const env = { GEMINI_API_KEY: "AIza-from-env" }
      const detected = yield* Effect.gen(function* () {
        return yield* Effect.orDie((yield* LLM).resolve())
      }).pipe(Effect.provide(llmLayer({}, env)))
      assert.deepStrictEqual([detected.providerID, detected.modelID], ["google", google.defaultModel])

      const server = yield* geminiServer([{ text: "hi" }])
      const config = { model: "gemini/gemini-2.5-flash", provider: { gemini: { baseURL: `${server.origin}/v1beta` } } }
      const { events } = yield* oneStep.pipe(Effect.provide(llmLayer(config, env)))
      assert.strictEqual(events.at(-1)?.type, "finish")
      assert.strictEqual(server.requests[0]?.path, "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse")
      assert.strictEqual(server.requests[0]?.headers["x-goog-api-key"], "AIza-from-env")
    })
  )

  it.effect("a project and GOOGLE_APPLICATION_CREDENTIALS set up google-vertex, authorised by that file", () =>
    Effect.gen(function* () {
      const server = yield* geminiServer([{ text: "hi" }])
      const dir = yield* tempDir
      const env = {
        GOOGLE_VERTEX_PROJECT: "lathe-test",
        GOOGLE_APPLICATION_CREDENTIALS: yield* Effect.promise(() => server.credentialsFile(dir))
      }
      const detected = yield* Effect.gen(function* () {
        return yield* Effect.orDie((yield* LLM).resolve())
      }).pipe(Effect.provide(llmLayer({}, env)))
      assert.deepStrictEqual([detected.providerID, detected.modelID], ["google-vertex", googleVertex.defaultModel])

      // A base URL (a proxy's, here the local server's) keeps the request off the network; the rest is from env.
      const baseURL = `${server.origin}/v1beta1/projects/lathe-test/locations/global/publishers/google`
      const config = { model: "google-vertex/gemini-2.5-flash", provider: { "google-vertex": { baseURL } } }
      const { events } = yield* oneStep.pipe(Effect.provide(llmLayer(config, env)))
      assert.strictEqual(events.at(-1)?.type, "finish")
      const sent = server.requests.filter((r) => r.path !== "/token")
      assert.strictEqual(
        sent[0]?.path,
        "/v1beta1/projects/lathe-test/locations/global/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
      )
      assert.strictEqual(sent[0]?.headers.authorization, `Bearer ${GEMINI_WIRE_ACCESS_TOKEN}`)
    })
  )
})
