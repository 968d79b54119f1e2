import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { Config, type ConfigTestInput } from "../src/config/config.js"
import { LLM, type ProviderEnv, providerSetupHelp } from "../src/llm/llm.js"

const resolve = (config: ConfigTestInput, env: ProviderEnv, model?: string) =>
  Effect.gen(function* () {
    return yield* (yield* LLM).resolve(model)
  }).pipe(Effect.provide(LLM.layerWith(env).pipe(Layer.provide(Config.layerTest(config)))))

describe("LLM.resolve", () => {
  it.effect("with nothing configured fails with the three ways to set a provider up", () =>
    Effect.gen(function* () {
      const error = yield* resolve({}, {}).pipe(Effect.flip)
      assert.strictEqual(error._tag, "ProviderNotConfigured")
      assert.strictEqual(error.message, `No model provider is configured.\n${providerSetupHelp}`)
      for (const way of ["ANTHROPIC_API_KEY", "LATHE_MODEL=", "LATHE_BASE_URL=http://127.0.0.1:11434/v1", "lathe.json"])
        assert.include(error.message, way)
      assert.include(error.message, "Ollama")
    })
  )

  it.effect("with only ANTHROPIC_API_KEY picks the catalogue's newest Claude Sonnet with its catalogue limits", () =>
    Effect.gen(function* () {
      const model = yield* resolve({}, { ANTHROPIC_API_KEY: "sk-ant" })
      assert.strictEqual(`${model.providerID}/${model.modelID}`, "anthropic/claude-sonnet-5")
      assert.strictEqual(model.limit.context, 1_000_000)
      assert.strictEqual(model.cost.input, 2)
    })
  )

  it.effect("with only OPENAI_API_KEY picks the catalogue's newest GPT", () =>
    Effect.gen(function* () {
      const model = yield* resolve({}, { OPENAI_API_KEY: "sk-oai" })
      assert.strictEqual(`${model.providerID}/${model.modelID}`, "openai/gpt-5.5")
      assert.strictEqual(model.capabilities.temperature, false)
    })
  )

  it.effect("the configured model wins over a key's default, and an explicit ref over both", () =>
    Effect.gen(function* () {
      const env = { ANTHROPIC_API_KEY: "sk-ant", OPENAI_API_KEY: "sk-oai" }
      const configured = yield* resolve({ model: "openai/gpt-4.1-mini" }, env)
      assert.strictEqual(configured.modelID, "gpt-4.1-mini")
      const explicit = yield* resolve({ model: "openai/gpt-4.1-mini" }, env, "anthropic/claude-haiku-4-5-20251001")
      assert.strictEqual(explicit.modelID, "claude-haiku-4-5-20251001")
      assert.strictEqual(explicit.cost.output, 5, "a dated id finds its catalogue entry")
    })
  )

  it.effect(
    "an unknown model of a configured provider still resolves, with conservative limits and config overrides",
    () =>
      Effect.gen(function* () {
        const config: ConfigTestInput = {
          provider: {
            local: {
              type: "openai-compatible",
              baseURL: "http://127.0.0.1:11434/v1",
              models: { "qwen3-coder": { context: 131_072, cost: { input: 0.1, output: 0.2, cache_read: 0.01 } } }
            }
          }
        }
        const unknown = yield* resolve(config, {}, "local/llama3")
        assert.deepStrictEqual(unknown.limit, { context: 32_768, output: 4_096 })
        assert.deepStrictEqual(unknown.cost, { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 })
        const tuned = yield* resolve(config, {})
        assert.strictEqual(tuned.modelID, "qwen3-coder", "first model of a provider is the default")
        // The config's context; the output cap is the catalogue's (qwen3-coder is in models.dev).
        assert.strictEqual(tuned.limit.context, 131_072)
        assert.isAbove(tuned.limit.output, 4_096)
        assert.deepStrictEqual(tuned.cost, { input: 0.1, output: 0.2, cacheRead: 0.01, cacheWrite: 0 })
      })
  )

  it.effect("a local server's model borrows another provider's limits from the catalogue, never its prices", () =>
    Effect.gen(function* () {
      const local = { type: "openai-compatible" as const, baseURL: "http://127.0.0.1:11434/v1" }
      const borrowed = yield* resolve({ provider: { local } }, {}, "local/qwen3-coder")
      assert.isAbove(borrowed.limit.context, 32_768, "the catalogue's limits, not the unknown-model ones")
      assert.deepStrictEqual(borrowed.cost, { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 })
      // A provider the catalogue lists keeps its own prices, whatever its type.
      const listed = yield* resolve(
        { provider: { deepseek: { type: "openai-compatible", baseURL: "https://api.deepseek.com/v1" } } },
        {},
        "deepseek/deepseek-chat"
      )
      assert.isAbove(listed.cost.input, 0)
    })
  )

  it.effect("an unknown provider is ModelNotFound naming the configured providers", () =>
    Effect.gen(function* () {
      const config = { provider: { local: { type: "openai-compatible" as const, baseURL: "http://127.0.0.1:1/v1" } } }
      const error = yield* resolve(config, { OPENAI_API_KEY: "k" }, "acme/llama").pipe(Effect.flip)
      assert.strictEqual(error._tag, "ModelNotFound")
      assert.include(error.message, 'Unknown provider "acme" in "acme/llama". Configured providers: local, openai.')
    })
  )

  it.effect("a malformed ref is ModelNotFound with an example", () =>
    Effect.gen(function* () {
      for (const ref of ["claude", "/claude", "anthropic/"]) {
        const error = yield* resolve({}, { ANTHROPIC_API_KEY: "k" }, ref).pipe(Effect.flip)
        assert.strictEqual(error._tag, "ModelNotFound")
        assert.include(error.message, `"${ref}" is not a model reference: write "provider/model"`)
        assert.include(error.message, "Configured providers: anthropic.")
      }
    })
  )

  it.effect("anthropic without a key names the env var; openai-compatible without baseURL names the key", () =>
    Effect.gen(function* () {
      const missing = yield* resolve({}, {}, "anthropic/claude-opus-4-5").pipe(Effect.flip)
      assert.strictEqual(missing._tag, "ProviderNotConfigured")
      assert.include(missing.message, "The model anthropic/claude-opus-4-5 needs ANTHROPIC_API_KEY, which is not set.")
      const config = { model: "work/m", provider: { work: { type: "openai-compatible" as const } } }
      const noUrl = yield* resolve(config, {}).pipe(Effect.flip)
      assert.include(noUrl.message, "set provider.work.baseURL in lathe.json")
    })
  )
})
