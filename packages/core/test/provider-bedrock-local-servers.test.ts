/**
 * Ollama and LM Studio descriptors against real local-server imitations on 127.0.0.1: model discovery from each
 * server's own listings (`/api/tags`; `/v1/models` with `/api/v0/models`' context windows), then one Chat
 * Completions step each that calls a tool, the follow-up carrying the tool result, usage, the key (or none) and the
 * reasoning effort as each server takes them.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import type { ModelMessage } from "ai"
import { Effect, Stream } from "effect"
import { UNKNOWN_MODEL } from "../src/catalog/model-catalog.js"
import type { ModelInfo } from "../src/catalog/model-info.js"
import { type LLMEvent, type LLMRequest, streamWithModel } from "../src/llm/llm.js"
import { tokensFromUsage } from "../src/llm/usage.js"
import type { ProviderDescriptor, ProviderEnv, ProviderSettings } from "../src/provider/descriptor.js"
import { nodeFetch } from "../src/provider/http-fetch.js"
import { lmstudio } from "../src/provider/lmstudio.js"
import { ollama, ollamaRoot } from "../src/provider/ollama.js"
import { descriptorFor } from "../src/provider/registry.js"
import type { ServerScript } from "../src/testing/scripted-server.js"
import { type LocalWireOptions, startLocalWireServer } from "../src/testing/wire-ollama.js"

const localServer = (options: LocalWireOptions) =>
  Effect.acquireRelease(
    Effect.promise(() => startLocalWireServer(options)),
    (server) => Effect.promise(() => server.close())
  )

const settingsOf = (
  id: string,
  baseURL: string | undefined,
  apiKey?: string,
  env: ProviderEnv = {}
): ProviderSettings => ({
  id,
  apiKey,
  baseURL,
  headers: undefined,
  options: {},
  env,
  fetch: nodeFetch as typeof fetch
})

const schema = { type: "object" as const, properties: { path: { type: "string" as const } }, required: ["path"] }

/** A local model as the LLM layer sees one the catalogue does not price. */
const modelOf = (providerID: string, modelID: string): ModelInfo => ({
  ...UNKNOWN_MODEL,
  providerID,
  modelID,
  capabilities: { ...UNKNOWN_MODEL.capabilities, reasoning: true }
})

const request = (model: ModelInfo, messages: ReadonlyArray<ModelMessage>, descriptor: ProviderDescriptor) => {
  const req: LLMRequest = {
    sessionID: "ses_local",
    model,
    system: ["You are Lathe."],
    messages,
    tools: { read: { description: "Read a file", inputSchema: schema } },
    providerOptions: descriptor.reasoning?.(model, "high") ?? {},
    abort: new AbortController().signal
  }
  return req
}

const script: ServerScript = [
  { steps: [{ tool: "read", input: { path: "a.txt" }, id: "call_read_1" }], usage: { input: 120, output: 30 } },
  {
    steps: [{ reasoning: "It is short." }, { text: "It says hello." }],
    usage: { input: 160, output: 12, reasoning: 4 }
  }
]

const history: ReadonlyArray<ModelMessage> = [
  { role: "user", content: "read a.txt" },
  {
    role: "assistant",
    content: [{ type: "tool-call", toolCallId: "call_read_1", toolName: "read", input: { path: "a.txt" } }]
  },
  {
    role: "tool",
    content: [
      { type: "tool-result", toolCallId: "call_read_1", toolName: "read", output: { type: "text", value: "hello" } }
    ]
  }
]

const step = (descriptor: ProviderDescriptor, settings: ProviderSettings, req: LLMRequest) =>
  Effect.gen(function* () {
    const model = yield* Effect.promise(() => descriptor.load(settings, req.model.modelID))
    const events = yield* Stream.runCollect(
      streamWithModel(model, req, { imagesInToolResults: descriptor.imagesInToolResults })
    )
    return [...events] as Array<LLMEvent>
  })

interface ChatBody {
  readonly model: string
  readonly reasoning_effort?: string
  readonly stream_options?: { readonly include_usage?: boolean }
  readonly messages: ReadonlyArray<Record<string, unknown>>
}

const cases = [
  {
    descriptor: ollama,
    modelID: "qwen3:8b",
    /** OLLAMA_HOST's form: host:port, no scheme, no /v1. */
    baseURL: (url: string) => new URL(url).host,
    apiKey: undefined,
    authorization: undefined
  },
  {
    descriptor: lmstudio,
    modelID: "qwen/qwen3-coder-30b",
    baseURL: (url: string) => url,
    apiKey: "lm-studio-token",
    authorization: "Bearer lm-studio-token"
  }
] as const

describe("local servers: a Chat Completions step with a tool call", () => {
  for (const c of cases) {
    it.effect(`${c.descriptor.name}: the tool call, its result, usage, key and reasoning effort on the wire`, () =>
      Effect.gen(function* () {
        const kind = c.descriptor.type === "ollama" ? "ollama" : "lmstudio"
        const server = yield* localServer({ kind, models: [{ id: c.modelID }], script })
        const settings = settingsOf(c.descriptor.type, c.baseURL(server.url), c.apiKey)
        const model = modelOf(c.descriptor.type, c.modelID)
        const first = yield* step(c.descriptor, settings, request(model, history.slice(0, 1), c.descriptor))
        const call = first.find((event) => event.type === "tool-call")
        assert.deepStrictEqual(call?.type === "tool-call" ? [call.toolName, call.input] : [], [
          "read",
          { path: "a.txt" }
        ])

        const second = yield* step(c.descriptor, settings, request(model, history, c.descriptor))
        const text = second.flatMap((event) => (event.type === "text-delta" ? [event.text] : [])).join("")
        assert.strictEqual(text, "It says hello.")
        const finish = second.find((event) => event.type === "finish-step")
        if (finish?.type !== "finish-step") throw new Error("the step did not finish")
        assert.deepStrictEqual(tokensFromUsage(finish.usage), {
          input: 160,
          output: 8,
          reasoning: 4,
          cache: { read: 0, write: 0 }
        })

        assert.deepStrictEqual(
          server.requests.map((r) => [r.method, r.path]),
          [
            ["POST", "/v1/chat/completions"],
            ["POST", "/v1/chat/completions"]
          ]
        )
        assert.strictEqual(server.requests[0]?.headers.authorization, c.authorization)
        const body1 = server.requests[0]?.body as ChatBody
        assert.strictEqual(body1.model, c.modelID)
        assert.strictEqual(body1.reasoning_effort, "high")
        assert.strictEqual(body1.stream_options?.include_usage, true)
        const body2 = server.requests[1]?.body as ChatBody
        assert.deepStrictEqual(body2.messages.at(-1), { role: "tool", tool_call_id: "call_read_1", content: "hello" })
      }).pipe(Effect.scoped)
    )
  }
})

describe("local servers: discovery", () => {
  it.effect("Ollama lists the pulled models from /api/tags, at OLLAMA_HOST's host:port", () =>
    Effect.gen(function* () {
      const server = yield* localServer({
        kind: "ollama",
        models: [{ id: "qwen3:8b", parameterSize: "8.2B", quantization: "Q4_K_M" }, { id: "llama3.2:latest" }]
      })
      const found = yield* Effect.promise(
        () => ollama.discover?.(settingsOf("ollama", new URL(server.url).host)) ?? Promise.resolve([])
      )
      assert.deepStrictEqual(found, [{ id: "qwen3:8b", name: "qwen3:8b (8.2B, Q4_K_M)" }, { id: "llama3.2:latest" }])
      assert.deepStrictEqual(
        server.requests.map((r) => [r.method, r.path]),
        [["GET", "/api/tags"]]
      )
    }).pipe(Effect.scoped)
  )

  it.effect("LM Studio lists /v1/models with /api/v0/models' context windows, leaving embedding models out", () =>
    Effect.gen(function* () {
      const models = [
        { id: "qwen/qwen3-coder-30b", context: 262_144 },
        { id: "text-embedding-nomic-embed-text-v1.5", type: "embeddings" as const, context: 2_048 },
        { id: "openai/gpt-oss-20b" }
      ]
      const server = yield* localServer({ kind: "lmstudio", models })
      const found = yield* Effect.promise(
        () => lmstudio.discover?.(settingsOf("lmstudio", server.url)) ?? Promise.resolve([])
      )
      assert.deepStrictEqual(found, [{ id: "qwen/qwen3-coder-30b", context: 262_144 }, { id: "openai/gpt-oss-20b" }])
      assert.deepStrictEqual(server.requests.map((r) => r.path).sort(), ["/api/v0/models", "/v1/models"])

      // A server without LM Studio's own listing: the OpenAI list alone, without context windows.
      const plain = yield* localServer({ kind: "lmstudio", models, nativeListing: false })
      const listed = yield* Effect.promise(
        () => lmstudio.discover?.(settingsOf("lmstudio", plain.url)) ?? Promise.resolve([])
      )
      assert.deepStrictEqual(
        listed.map((model) => [model.id, model.context]),
        models.map((model) => [model.id, undefined])
      )
    }).pipe(Effect.scoped)
  )

  it.effect("a server that is not running fails discovery with a message naming it and the URL", () =>
    Effect.gen(function* () {
      const server = yield* localServer({ kind: "lmstudio", models: [] })
      const url = server.url
      yield* Effect.promise(() => server.close())
      const error = yield* Effect.promise(() =>
        (lmstudio.discover?.(settingsOf("lmstudio", url)) ?? Promise.resolve([])).then(
          () => undefined,
          (cause: unknown) => cause
        )
      )
      expect(String(error)).toMatch(new RegExp(`LM Studio did not answer at ${url}/models`))
    }).pipe(Effect.scoped)
  )
})

describe("local server descriptors", () => {
  it("reads OLLAMA_HOST as Ollama does", () => {
    assert.strictEqual(ollamaRoot(undefined), "http://127.0.0.1:11434")
    assert.strictEqual(ollamaRoot("0.0.0.0"), "http://127.0.0.1:11434")
    assert.strictEqual(ollamaRoot("0.0.0.0:8080"), "http://127.0.0.1:8080")
    assert.strictEqual(ollamaRoot("gpu-box"), "http://gpu-box:11434")
    assert.strictEqual(ollamaRoot("http://gpu-box"), "http://gpu-box")
    assert.strictEqual(ollamaRoot("https://ollama.example.com/"), "https://ollama.example.com")
    assert.strictEqual(ollamaRoot("http://127.0.0.1:11434/v1"), "http://127.0.0.1:11434")
  })

  it("are found by type and alias, default to their usual ports and are used only when referenced", () => {
    assert.strictEqual(descriptorFor("ollama"), ollama)
    assert.strictEqual(descriptorFor("lm-studio"), lmstudio)
    assert.strictEqual(ollama.baseURL?.default, "http://127.0.0.1:11434/v1")
    assert.strictEqual(ollama.baseURL?.env, "OLLAMA_HOST")
    assert.strictEqual(lmstudio.baseURL?.default, "http://127.0.0.1:1234/v1")
    assert.deepStrictEqual([ollama.detectEnv, lmstudio.detectEnv], [[], []])
  })
})
