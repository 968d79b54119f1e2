import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import {
  assumedModelNotice,
  catalogModels,
  lookupModel,
  ModelCatalog,
  UNKNOWN_MODEL
} from "../src/catalog/model-catalog.js"
import { Config } from "../src/config/config.js"
import { LLM } from "../src/llm/llm.js"

/** A catalogue over the shipped snapshot: an empty data dir, refresh off, a URL nothing listens on. */
const options = () => ({
  dataDir: mkdtempSync(join(tmpdir(), "lathe-catalog-")),
  url: "http://127.0.0.1:9/api.json",
  refresh: false
})
const withCatalog = <A, E>(effect: Effect.Effect<A, E, ModelCatalog>) =>
  effect.pipe(Effect.provide(ModelCatalog.layerTest(options())))

describe("ModelCatalog over the shipped models.dev snapshot", () => {
  it("is not read at import: nothing is loaded before the first look-up", () => {
    assert.deepStrictEqual(catalogModels(), [])
    assert.isUndefined(lookupModel("claude-sonnet-4-5"))
  })

  it.effect("knows models the old 22-row table did not, with their real limits and prices", () =>
    withCatalog(
      Effect.gen(function* () {
        const catalog = yield* ModelCatalog
        const gemini = yield* catalog.lookup("google", "gemini-2.5-pro")
        assert.deepStrictEqual(gemini?.limit, { context: 1_048_576, output: 65_536 })
        assert.deepStrictEqual(gemini?.cost, { input: 1.25, output: 10, cacheRead: 0.125, cacheWrite: 0 })
        assert.deepStrictEqual(gemini?.capabilities, {
          reasoning: true,
          toolCall: true,
          temperature: true,
          image: true,
          pdf: true
        })
        const deepseek = yield* catalog.lookup("deepseek", "deepseek-reasoner")
        assert.strictEqual(deepseek?.name, "DeepSeek Reasoner")
        assert.isTrue(deepseek?.capabilities.reasoning)
        assert.isFalse(deepseek?.capabilities.image, "text-only input")
        assert.isAbove(deepseek?.limit.context ?? 0, 100_000)
        assert.isAbove(deepseek?.cost.input ?? 0, 0)
        // The old table's models keep their figures.
        const sonnet = yield* catalog.lookup("anthropic", "claude-sonnet-4-5")
        assert.deepStrictEqual(sonnet?.cost, { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 })
        assert.deepStrictEqual(sonnet?.limit, { context: 200_000, output: 64_000 })
        assert.deepStrictEqual((yield* catalog.lookup("openai", "gpt-5"))?.limit, { context: 400_000, output: 128_000 })
        assert.isFalse((yield* catalog.lookup("openai", "gpt-5"))?.capabilities.temperature)
        assert.isFalse((yield* catalog.lookup("openai", "o3-mini"))?.capabilities.image)
        // Loaded once, the synchronous helpers see it too.
        assert.isAbove(catalogModels().length, 1_000)
      })
    )
  )

  it.effect("matches dated, -latest, dotted and vendor-prefixed ids, not prefixes of other ids", () =>
    withCatalog(
      Effect.gen(function* () {
        const catalog = yield* ModelCatalog
        const dated = yield* catalog.lookup("anthropic", "claude-sonnet-4-5-20250929")
        assert.deepStrictEqual(dated?.limit, { context: 200_000, output: 64_000 })
        assert.strictEqual((yield* catalog.lookup("anthropic", "claude-sonnet-4.5"))?.cost.input, 3)
        // Only a dated id is in the catalogue: the -latest alias finds it without its suffix.
        assert.strictEqual((yield* catalog.lookup("anthropic", "claude-3-7-sonnet-latest"))?.name, "Claude Sonnet 3.7")
        assert.strictEqual((yield* catalog.lookup("openai", "GPT-4o"))?.name, "GPT-4o")
        assert.strictEqual((yield* catalog.lookup("openai", "gpt-4.1-mini-2025-04-14"))?.limit.context, 1_047_576)
        assert.isUndefined(yield* catalog.lookup("openai", "gpt-4.1-turbo"))
        assert.isUndefined(yield* catalog.lookup("local", "no-such-model-anywhere"))
      })
    )
  )

  it.effect("a provider without a catalogue (openai-compatible `local`) still finds a model by its id", () =>
    withCatalog(
      Effect.gen(function* () {
        const catalog = yield* ModelCatalog
        const qwen = yield* catalog.lookup("local", "qwen3-coder")
        assert.isDefined(qwen)
        assert.isAbove(qwen?.limit.context ?? 0, UNKNOWN_MODEL.limit.context)
        // A proxy serving an OpenAI id gets OpenAI's own row, not one of the twenty resellers'.
        const proxied = yield* catalog.lookup("my-proxy", "gpt-4.1")
        assert.deepStrictEqual(proxied, yield* catalog.lookup("openai", "gpt-4.1"))
        assert.deepStrictEqual(yield* catalog.lookup("my-proxy", "openai/gpt-4.1"), proxied)
      })
    )
  )

  it.effect("config entries override catalogue fields one by one; the rest stays the catalogue's", () =>
    withCatalog(
      Effect.gen(function* () {
        const catalog = yield* ModelCatalog
        const info = yield* catalog.info("google", "gemini-2.5-pro", {
          name: "Gemini (capped)",
          context: 200_000,
          cost: { input: 2, output: 12 }
        })
        assert.strictEqual(info.name, "Gemini (capped)")
        assert.deepStrictEqual(info.limit, { context: 200_000, output: 65_536 })
        assert.deepStrictEqual(info.cost, { input: 2, output: 12, cacheRead: 0.125, cacheWrite: 0 })
        assert.isTrue(info.capabilities.image)
        assert.isUndefined(assumedModelNotice(info), "a known model gets no notice")
      })
    )
  )

  it.effect("LLM.resolve takes limits from the catalogue and the provider's model entries from config", () =>
    Effect.gen(function* () {
      const llm = yield* LLM
      const known = yield* llm.resolve("local/deepseek-chat")
      assert.isAbove(known.limit.context, UNKNOWN_MODEL.limit.context)
      const configured = yield* llm.resolve("local/deepseek-reasoner")
      assert.deepStrictEqual(configured.limit.context, 64_000)
      assert.isTrue(configured.capabilities.reasoning, "the catalogue's field where config says nothing")
    }).pipe(
      Effect.provide(
        LLM.layerWith({ LATHE_DATA_DIR: options().dataDir }).pipe(
          Layer.provide(
            Config.layerTest({
              provider: {
                local: {
                  type: "openai-compatible",
                  baseURL: "http://127.0.0.1:9/v1",
                  models: { "deepseek-reasoner": { context: 64_000 } }
                }
              }
            })
          )
        )
      )
    )
  )

  it.effect("an unknown model gets the assumed limits and one notice naming them and how to set them", () =>
    withCatalog(
      Effect.gen(function* () {
        const catalog = yield* ModelCatalog
        const info = yield* catalog.info("local", "my-finetune-v3")
        assert.deepStrictEqual(info.limit, UNKNOWN_MODEL.limit)
        assert.deepStrictEqual(info.cost, UNKNOWN_MODEL.cost)
        assert.strictEqual(info.name, "my-finetune-v3")
        const notice = assumedModelNotice(info)
        assert.include(notice, "local/my-finetune-v3")
        assert.include(notice, "32,768-token context")
        assert.include(notice, "4,096 output tokens")
        assert.include(notice, '"provider": { "local": { "models": { "my-finetune-v3": { "context"')
        assert.isUndefined(assumedModelNotice(yield* catalog.info("local", "my-finetune-v3")), "only once")
        // A model the person named in config: they are already where limits are set.
        assert.isUndefined(assumedModelNotice(yield* catalog.info("local", "my-other-model", {})))
        const set = yield* catalog.info("local", "my-third-model", { context: 65_536, output: 8_192 })
        assert.deepStrictEqual(set.limit, { context: 65_536, output: 8_192 })
        assert.isUndefined(assumedModelNotice(set))
      })
    )
  )

  it.effect("lists a provider's models and every provider with its key variables", () =>
    withCatalog(
      Effect.gen(function* () {
        const catalog = yield* ModelCatalog
        const anthropic = (yield* catalog.providers()).find((p) => p.id === "anthropic")
        assert.deepStrictEqual(anthropic?.env, ["ANTHROPIC_API_KEY"])
        assert.strictEqual(anthropic?.npm, "@ai-sdk/anthropic")
        const models = yield* catalog.list("anthropic")
        assert.isTrue(models.every((m) => m.providerID === "anthropic" && m.modelID.startsWith("claude")))
        assert.isTrue(models.some((m) => m.modelID === "claude-sonnet-4-5"))
        assert.isAbove((yield* catalog.providers()).length, 50)
        assert.deepStrictEqual(yield* catalog.list("no-such-provider"), [])
      })
    )
  )
})
