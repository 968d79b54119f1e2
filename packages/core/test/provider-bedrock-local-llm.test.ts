/**
 * Amazon Bedrock, Ollama and LM Studio through the real `LLM` layer (config + environment, no provider code in the
 * test): Bedrock detected from AWS variables alone and signed with them, a missing region named as the fix; Ollama
 * used by reference at `OLLAMA_HOST`; LM Studio from a config block with `LMSTUDIO_API_KEY`. Real servers on 127.0.0.1.
 */
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Stream } from "effect"
import { Config, type ConfigTestInput } from "../src/config/config.js"
import { LLM, type LLMEvent, type ProviderEnv } from "../src/llm/llm.js"
import { startBedrockWireServer } from "../src/testing/wire-bedrock.js"
import { startLocalWireServer } from "../src/testing/wire-ollama.js"

const dataDir = () => mkdtempSync(join(tmpdir(), "lathe-providers-"))

const llmLayer = (config: ConfigTestInput, env: ProviderEnv) =>
  LLM.layerWith({ LATHE_DATA_DIR: dataDir(), ...env }).pipe(Layer.provide(Config.layerTest(config)))

const scoped = <A>(start: () => Promise<A & { readonly close: () => Promise<void> }>) =>
  Effect.acquireRelease(Effect.promise(start), (server) => Effect.promise(() => server.close()))

/** Resolves the configured model and streams one step asking for a text reply. */
const oneStep = Effect.gen(function* () {
  const llm = yield* LLM
  const model = yield* Effect.orDie(llm.resolve())
  const events = yield* Stream.runCollect(
    llm.stream({
      sessionID: "ses_providers",
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

const BEDROCK_MODEL = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"

describe("providers through the LLM layer", () => {
  it.effect(
    "Amazon Bedrock: AWS variables alone set it up; requests are validly signed with them and cache-marked",
    () =>
      Effect.gen(function* () {
        const credentials = { accessKeyId: "AKIDLATHEE2E", secretAccessKey: "e2e-secret" }
        // The server checks the SigV4 signature against these, as Bedrock does.
        const server = yield* scoped(() => startBedrockWireServer([{ text: "Hello from Bedrock." }], { credentials }))
        const env = {
          AWS_ACCESS_KEY_ID: "AKIDLATHEE2E",
          AWS_SECRET_ACCESS_KEY: "e2e-secret",
          AWS_REGION: "eu-central-1",
          AWS_ENDPOINT_URL_BEDROCK_RUNTIME: server.url
        }
        const { model, text } = yield* oneStep.pipe(
          Effect.provide(llmLayer({ model: `amazon-bedrock/${BEDROCK_MODEL}` }, env))
        )
        assert.strictEqual(text, "Hello from Bedrock.")
        assert.deepStrictEqual(model.cost, { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 })
        const sent = server.requests[0]
        assert.strictEqual(sent?.path, `/model/${encodeURIComponent(BEDROCK_MODEL)}/converse-stream`)
        expect(String(sent?.headers.authorization)).toMatch(
          /^AWS4-HMAC-SHA256 Credential=AKIDLATHEE2E\/\d{8}\/eu-central-1\/bedrock\/aws4_request, /
        )
        const body = sent?.body as { readonly system: ReadonlyArray<unknown> }
        assert.deepStrictEqual(body.system, [{ text: "You are Lathe." }, { cachePoint: { type: "default" } }])
      }).pipe(Effect.scoped)
  )

  it.effect("Amazon Bedrock: keys without a region fail before any request, naming AWS_REGION", () =>
    Effect.gen(function* () {
      const env = { AWS_ACCESS_KEY_ID: "AKIDLATHEE2E", AWS_SECRET_ACCESS_KEY: "e2e-secret" }
      const error = yield* Effect.flip(
        Effect.gen(function* () {
          return yield* (yield* LLM).resolve()
        }).pipe(Effect.provide(llmLayer({ model: `amazon-bedrock/${BEDROCK_MODEL}` }, env)))
      )
      assert.strictEqual(error._tag, "ProviderNotConfigured")
      expect(error.message).toContain("set AWS_REGION")
    })
  )

  it.effect("Ollama: a model reference is enough; OLLAMA_HOST (host:port) says where; no key is sent", () =>
    Effect.gen(function* () {
      const server = yield* scoped(() =>
        startLocalWireServer({
          kind: "ollama",
          models: [{ id: "qwen3:8b" }],
          script: [{ steps: [{ text: "Hello from Ollama." }], usage: { input: 50, output: 5 } }]
        })
      )
      const env = { OLLAMA_HOST: new URL(server.url).host }
      const { model, text } = yield* oneStep.pipe(Effect.provide(llmLayer({ model: "ollama/qwen3:8b" }, env)))
      assert.strictEqual(text, "Hello from Ollama.")
      assert.deepStrictEqual(model.cost, { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 })
      assert.strictEqual(server.requests[0]?.path, "/v1/chat/completions")
      assert.isUndefined(server.requests[0]?.headers.authorization)
    }).pipe(Effect.scoped)
  )

  it.effect("LM Studio: a config block with its base URL, LMSTUDIO_API_KEY sent as the bearer token", () =>
    Effect.gen(function* () {
      const server = yield* scoped(() =>
        startLocalWireServer({
          kind: "lmstudio",
          models: [{ id: "qwen/qwen3-coder-30b" }],
          script: [{ steps: [{ text: "Hello from LM Studio." }] }]
        })
      )
      const config = { model: "lmstudio/qwen/qwen3-coder-30b", provider: { lmstudio: { baseURL: server.url } } }
      const { text } = yield* oneStep.pipe(Effect.provide(llmLayer(config, { LMSTUDIO_API_KEY: "lm-e2e-key" })))
      assert.strictEqual(text, "Hello from LM Studio.")
      assert.strictEqual(server.requests[0]?.path, "/v1/chat/completions")
      assert.strictEqual(server.requests[0]?.headers.authorization, "Bearer lm-e2e-key")
    }).pipe(Effect.scoped)
  )
})
