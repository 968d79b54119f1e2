/**
 * The hosted providers through the real `LLM` layer (config + environment, no provider code in the test): each is
 * detected from its key variable alone (with its default model), and a step sends that key the provider's way, with
 * the reasoning setting of the model's config entry and Lathe's cache options in the provider's own fields. Aliases
 * (`together`, `fireworks-ai`) name their provider in config. Real servers on 127.0.0.1.
 */
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Stream } from "effect"
import { Config, type ConfigTestInput } from "../src/config/config.js"
import { descriptorDefaultModel } from "../src/llm/configured.js"
import { LLM, type LLMEvent, type ProviderEnv } from "../src/llm/llm.js"
import { descriptorOf } from "../src/provider/registry.js"
import type { ScriptedServer } from "../src/testing/scripted-server.js"
import { type ChatDialect, startChatWire } from "../src/testing/wire-chat.js"
import { startResponsesWire } from "../src/testing/wire-responses.js"

const dataDir = () => mkdtempSync(join(tmpdir(), "lathe-hosted-"))

const llmLayer = (config: ConfigTestInput, env: ProviderEnv) =>
  LLM.layerWith({ LATHE_DATA_DIR: dataDir(), ...env }).pipe(Layer.provide(Config.layerTest(config)))

const scoped = (start: () => Promise<ScriptedServer>) =>
  Effect.acquireRelease(Effect.promise(start), (server) => Effect.promise(() => server.close()))

const SESSION = "ses_hosted_llm"

/** Resolves the configured model and streams one step asking for a text reply. */
const oneStep = Effect.gen(function* () {
  const llm = yield* LLM
  const model = yield* Effect.orDie(llm.resolve())
  const events = yield* Stream.runCollect(
    llm.stream({
      sessionID: SESSION,
      model,
      system: ["You are Lathe."],
      messages: [{ role: "user", content: "hi" }],
      tools: {},
      abort: new AbortController().signal
    })
  )
  const text = [...events].flatMap((event: LLMEvent) => (event.type === "text-delta" ? [event.text] : [])).join("")
  return { model, text }
})

interface Case {
  readonly type: string
  /** The key variable (and anything else the provider needs) set in the environment. */
  readonly env: ProviderEnv
  /** The provider id in config: the type, or an alias of it. */
  readonly id: string
  readonly modelID: string
  /** `responses`, or the Chat Completions dialect the server speaks. */
  readonly wire: "responses" | ChatDialect
  /** The base URL's path on the local server. */
  readonly base: string
  readonly path: string
  readonly headers: Readonly<Record<string, string>>
  /** Body fields Lathe adds: the reasoning setting (`high`) and the session cache key, in the provider's fields. */
  readonly fields: Readonly<Record<string, unknown>>
}

const cases: ReadonlyArray<Case> = [
  {
    type: "azure",
    env: { AZURE_API_KEY: "az-env", AZURE_RESOURCE_NAME: "lathe-test" },
    id: "azure",
    modelID: "gpt-5.4",
    wire: "responses",
    base: "/openai",
    path: "/openai/responses",
    headers: { "api-key": "az-env" },
    fields: { reasoning: { effort: "high", summary: "detailed" }, prompt_cache_key: SESSION }
  },
  {
    type: "openrouter",
    env: { OPENROUTER_API_KEY: "or-env" },
    id: "openrouter",
    modelID: "anthropic/claude-sonnet-4.6",
    wire: "openrouter",
    base: "/api/v1",
    path: "/api/v1/chat/completions",
    headers: { authorization: "Bearer or-env" },
    fields: { reasoning: { effort: "high" } }
  },
  {
    type: "groq",
    env: { GROQ_API_KEY: "gsk-env" },
    id: "groq",
    modelID: "openai/gpt-oss-120b",
    wire: "groq",
    base: "/openai/v1",
    path: "/openai/v1/chat/completions",
    headers: { authorization: "Bearer gsk-env" },
    fields: { reasoning_effort: "high" }
  },
  {
    type: "deepseek",
    env: { DEEPSEEK_API_KEY: "ds-env" },
    id: "deepseek",
    modelID: "deepseek-v4-flash",
    wire: "deepseek",
    base: "",
    path: "/chat/completions",
    headers: { authorization: "Bearer ds-env" },
    fields: { thinking: { type: "enabled" }, reasoning_effort: "high" }
  },
  {
    type: "xai",
    env: { XAI_API_KEY: "xai-env" },
    id: "xai",
    modelID: "grok-4.3",
    wire: "responses",
    base: "/v1",
    path: "/v1/responses",
    headers: { authorization: "Bearer xai-env" },
    fields: { reasoning: { effort: "high" }, prompt_cache_key: SESSION }
  },
  {
    type: "mistral",
    env: { MISTRAL_API_KEY: "mi-env" },
    id: "mistral",
    modelID: "mistral-small-latest",
    wire: "mistral",
    base: "/v1",
    path: "/v1/chat/completions",
    headers: { authorization: "Bearer mi-env" },
    fields: { reasoning_effort: "high", prompt_cache_key: SESSION }
  },
  {
    type: "togetherai",
    env: { TOGETHER_API_KEY: "tg-env" },
    id: "together",
    modelID: "openai/gpt-oss-120b",
    wire: "openai",
    base: "/v1",
    path: "/v1/chat/completions",
    headers: { authorization: "Bearer tg-env" },
    fields: { reasoning_effort: "high" }
  },
  {
    type: "fireworks",
    env: { FIREWORKS_API_KEY: "fw-env" },
    id: "fireworks-ai",
    modelID: "accounts/fireworks/models/gpt-oss-120b",
    wire: "openai",
    base: "/inference/v1",
    path: "/inference/v1/chat/completions",
    headers: { authorization: "Bearer fw-env" },
    fields: { reasoning_effort: "high", prompt_cache_key: SESSION }
  },
  {
    type: "cerebras",
    env: { CEREBRAS_API_KEY: "cb-env" },
    id: "cerebras",
    modelID: "gpt-oss-120b",
    wire: "openai",
    base: "/v1",
    path: "/v1/chat/completions",
    headers: { authorization: "Bearer cb-env" },
    fields: { reasoning_effort: "high", prompt_cache_key: SESSION }
  }
]

describe("hosted providers through LLM.layerWith(env): detection and keys from the environment", () => {
  for (const c of cases) {
    it.effect(`${c.type}: its key variable alone sets it up, and a step sends that key`, () =>
      Effect.gen(function* () {
        const descriptor = descriptorOf(c.type)
        assert.strictEqual(descriptorOf(c.id), descriptor, `${c.id} names ${c.type}`)
        const detected = yield* Effect.gen(function* () {
          return yield* Effect.orDie((yield* LLM).resolve())
        }).pipe(Effect.provide(llmLayer({}, c.env)))
        assert.deepStrictEqual(
          [detected.providerID, detected.modelID],
          [c.type, descriptor && descriptorDefaultModel(descriptor)]
        )

        const reply = { text: "Hello from the cloud." }
        const server = yield* scoped(() =>
          c.wire === "responses" ? startResponsesWire([reply]) : startChatWire(c.wire, [reply])
        )
        const baseURL = `${new URL(server.url).origin}${c.base}`
        const config = {
          model: `${c.id}/${c.modelID}`,
          provider: { [c.id]: { baseURL, models: { [c.modelID]: { reasoning: "high" as const } } } }
        }
        const { model, text } = yield* oneStep.pipe(Effect.provide(llmLayer(config, c.env)))
        assert.strictEqual(text, "Hello from the cloud.")
        assert.strictEqual(model.reasoning, "high")
        const sent = server.requests[0]
        assert.strictEqual(sent?.path, c.path)
        for (const [name, value] of Object.entries(c.headers)) assert.strictEqual(sent?.headers[name], value, name)
        const body = (sent?.body ?? {}) as Record<string, unknown>
        assert.strictEqual(body.model, c.modelID)
        for (const [field, value] of Object.entries(c.fields)) assert.deepStrictEqual(body[field], value, field)
        if (c.type === "openrouter")
          assert.include(
            JSON.stringify(body.messages),
            '"cache_control":{"type":"ephemeral"}',
            "a Claude model's marks"
          )
      }).pipe(Effect.scoped)
    )
  }

  it.effect("azure: a key without a resource name or base URL fails before any request, naming the fix", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(
        Effect.gen(function* () {
          return yield* (yield* LLM).resolve()
        }).pipe(Effect.provide(llmLayer({ model: "azure/gpt-5.4" }, { AZURE_API_KEY: "az-env" })))
      )
      assert.strictEqual(error._tag, "ProviderNotConfigured")
      assert.include(error.message, "AZURE_RESOURCE_NAME")
    })
  )
})
