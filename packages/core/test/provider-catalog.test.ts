/**
 * Providers built from the models.dev catalogue (`provider/catalog-provider.ts`): the generated table matches the
 * shipped snapshot, a catalogue provider with no descriptor of its own (`zhipuai`) gets one from its entry (package,
 * base URL, key variables), a package Lathe cannot drive is refused in words, config accepts `provider.zhipuai: {}`,
 * and a model reference works with the key alone. Plus the default-model rule (`catalog/default-model.ts`), checked
 * against the snapshot itself and against made-up rows.
 */
import { readFileSync } from "node:fs"
import { assert, describe, it } from "@effect/vitest"
import { Cause, Effect, Exit, Layer } from "effect"
import { CatalogIndex, type CatalogModel } from "../src/catalog/catalog-index.js"
import { flagshipModel } from "../src/catalog/default-model.js"
import type { CatalogData } from "../src/catalog/models-dev.js"
import { Config, type ConfigTestInput } from "../src/config/config.js"
import { configuredProviders, referencedProvider } from "../src/llm/configured.js"
import { LLM, type ProviderEnv } from "../src/llm/llm.js"
import { catalogProviderEntries, catalogProviderEntry, drivenBy } from "../src/provider/catalog-provider.js"
import { descriptorFor, descriptorOf, PROVIDERS } from "../src/provider/registry.js"

const snapshot = JSON.parse(
  readFileSync(new URL("../src/catalog/snapshot.json", import.meta.url), "utf8")
) as CatalogData
const index = new CatalogIndex(snapshot)
const none: ProviderEnv = { LATHE_DATA_DIR: "/nonexistent/lathe-provider-catalog" }

const resolve = (config: ConfigTestInput, env: ProviderEnv, model?: string) =>
  Effect.gen(function* () {
    return yield* (yield* LLM).resolve(model)
  }).pipe(Effect.provide(LLM.layerWith(env).pipe(Layer.provide(Config.layerTest(config)))))

describe("the catalogue's providers", () => {
  it("the generated table (catalog-providers.ts) is the snapshot's providers: name, package, URL, variables", () => {
    const entries = catalogProviderEntries()
    assert.deepStrictEqual(
      entries.map((entry) => entry.id),
      Object.keys(snapshot.providers)
    )
    for (const entry of entries) {
      const provider = snapshot.providers[entry.id]
      assert.deepStrictEqual(
        [entry.name, entry.npm, entry.api, entry.env],
        [provider?.name, provider?.npm ?? "", provider?.api ?? "", provider?.env ?? []],
        entry.id
      )
    }
    assert.isUndefined(catalogProviderEntry("no-such-provider"))
  })

  it("zhipuai gets the OpenAI-compatible descriptor with its base URL and key variable", () => {
    const zhipu = descriptorOf("zhipuai")
    assert.isDefined(zhipu)
    assert.deepInclude(zhipu, {
      type: "zhipuai",
      name: "Zhipu AI",
      catalogID: "zhipuai",
      auth: "key",
      keyEnv: ["ZHIPU_API_KEY"],
      baseURL: { default: "https://open.bigmodel.cn/api/paas/v4" },
      catalogue: { npm: "@ai-sdk/openai-compatible" }
    })
    assert.isUndefined(zhipu?.unsupported)
    // Built once, on first look-up; a shipped provider keeps its own descriptor, also under its catalogue id.
    assert.strictEqual(descriptorOf("zhipuai"), zhipu)
    assert.strictEqual(descriptorOf("anthropic")?.catalogue, undefined)
    assert.strictEqual(descriptorOf("fireworks-ai"), descriptorOf("fireworks"))
    assert.strictEqual(descriptorFor("zhipuai"), zhipu)
  })

  it("an Anthropic-compatible entry (minimax) drives Anthropic's SDK at its URL, with Anthropic's caching", () => {
    const minimax = descriptorOf("minimax")
    assert.deepInclude(minimax, {
      auth: "key",
      keyEnv: ["MINIMAX_API_KEY"],
      baseURL: { default: "https://api.minimax.io/anthropic/v1" },
      imagesInToolResults: true
    })
    assert.strictEqual(minimax?.cache?.("MiniMax-M2")?.kind, "breakpoints")
  })

  it("every entry whose package Lathe drives gets a working descriptor; the others are refused in words", () => {
    const refused = catalogProviderEntries().filter((entry) => drivenBy(entry.npm) === undefined)
    assert.isAbove(refused.length, 0)
    for (const entry of catalogProviderEntries()) {
      const descriptor = descriptorOf(entry.id)
      if (PROVIDERS.some((shipped) => shipped === descriptor)) continue
      if (drivenBy(entry.npm) !== undefined) assert.isUndefined(descriptor?.unsupported, entry.id)
      else {
        assert.include(descriptor?.unsupported, `Lathe cannot drive ${entry.name} (${entry.id})`)
        assert.include(descriptor?.unsupported, entry.npm)
        assert.include(descriptor?.unsupported, '"type": "openai-compatible"')
      }
    }
  })

  it("a base URL naming a variable asks for it; the key variable is the other one", () => {
    const databricks = descriptorOf("databricks")
    assert.deepStrictEqual(databricks?.keyEnv, ["DATABRICKS_TOKEN"])
    const [provider] = configuredProviders({ provider: { databricks: {} } }, { ...none, DATABRICKS_TOKEN: "t" })
    assert.strictEqual(provider?.ready, false)
    assert.include(provider?.problem, "set DATABRICKS_HOST")
    const [ready] = configuredProviders(
      { provider: { databricks: {} } },
      { ...none, DATABRICKS_TOKEN: "t", DATABRICKS_HOST: "x.cloud.databricks.com" }
    )
    assert.strictEqual(ready?.ready, true)
  })

  it("the key variable alone makes a catalogue provider usable by reference; without it, it is not", () => {
    assert.isUndefined(referencedProvider("zhipuai", none))
    const provider = referencedProvider("zhipuai", { ...none, ZHIPU_API_KEY: "zk" })
    assert.deepInclude(provider, { id: "zhipuai", ready: true, keySource: "env:ZHIPU_API_KEY", configured: false })
    assert.strictEqual(provider?.settings.baseURL, "https://open.bigmodel.cn/api/paas/v4")
    // The key variable does not add it to the table by itself: a reference, a provider block or a stored key does.
    assert.isFalse(configuredProviders({}, { ...none, ZHIPU_API_KEY: "zk" }).some((p) => p.id === "zhipuai"))
    const stored = configuredProviders({}, none, { stored: { zhipuai: "zk-stored", cohere: "co" } })
    assert.deepStrictEqual(
      stored.map((p) => [p.id, p.keySource, p.ready]),
      [["zhipuai", "auth", true]]
    )
  })

  it.effect("config accepts provider.zhipuai: {} (no type), and a model of it resolves with the catalogue's rows", () =>
    Effect.gen(function* () {
      const info = yield* resolve({ provider: { zhipuai: {} } }, { ...none, ZHIPU_API_KEY: "zk" }, "zhipuai/glm-4.6")
      assert.deepInclude(info, { providerID: "zhipuai", modelID: "glm-4.6" })
      const row = index.find("zhipuai", "glm-4.6")
      assert.strictEqual(info.limit.context, row?.entry.limit.context)
      const config = yield* Effect.provide(Config, Config.layerTest({ provider: { zhipuai: {} } }))
      assert.deepStrictEqual(config.info.provider?.zhipuai, {})
    })
  )

  it.effect("configured as the only provider, a catalogue provider's default is its newest flagship by rule", () =>
    Effect.gen(function* () {
      const info = yield* resolve({ provider: { zhipuai: {} } }, { ...none, ZHIPU_API_KEY: "zk" })
      assert.strictEqual(info.providerID, "zhipuai")
      assert.strictEqual(info.modelID, flagshipModel(index.list("zhipuai")))
      assert.notMatch(info.modelID, /flash|air|vision|preview/i)
    })
  )

  it.effect("a model of a catalogue provider with no key says which variable to set", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(resolve({}, none, "zhipuai/glm-4.6"))
      assert.include(error.message, "The model zhipuai/glm-4.6 needs ZHIPU_API_KEY, which is not set.")
      assert.include(error.message, "lathe auth login zhipuai")
    })
  )

  it.effect("a provider whose package Lathe cannot drive is refused, by reference and when configured", () =>
    Effect.gen(function* () {
      const byReference = yield* Effect.flip(resolve({}, { ...none, COHERE_API_KEY: "c" }, "cohere/command-a-03-2025"))
      assert.include(byReference.message, "The model cohere/command-a-03-2025 cannot be used.")
      assert.include(byReference.message, "Lathe cannot drive Cohere (cohere): models.dev drives it with the package")
      assert.include(byReference.message, "@ai-sdk/cohere, which Lathe does not include")
      const configured = yield* Effect.flip(
        resolve({ provider: { cohere: {} } }, { ...none, COHERE_API_KEY: "c" }, "cohere/command-a-03-2025")
      )
      assert.include(configured.message, "Lathe cannot drive Cohere (cohere)")
      // Configured as OpenAI-compatible, as the refusal says, it works.
      const compatible = yield* resolve(
        { provider: { cohere: { type: "openai-compatible", baseURL: "http://127.0.0.1:9/v1" } } },
        none,
        "cohere/command-a-03-2025"
      )
      assert.strictEqual(compatible.providerID, "cohere")
    })
  )

  it.effect("an unknown provider id without a type is still a config error", () =>
    Effect.gen(function* () {
      const exit = yield* Effect.exit(resolve({ provider: { "not-a-provider": {} } }, none, "not-a-provider/m"))
      assert.isTrue(Exit.isFailure(exit))
      assert.include(String(Exit.isFailure(exit) ? Cause.squash(exit.cause) : ""), "provider.not-a-provider.type")
    })
  )
})

/** A catalogue model for the rule's made-up cases. */
const model = (modelID: string, releaseDate: string, toolCall = true): CatalogModel => ({
  providerID: "p",
  modelID,
  entry: {
    name: modelID,
    limit: { context: 100_000, output: 8_000 },
    cost: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0 },
    capabilities: { reasoning: true, toolCall, temperature: true, image: false }
  },
  input: ["text"],
  attachment: false,
  releaseDate
})

describe("the default model, by rule", () => {
  it("the newest tool-calling model of the family; no mini, nano, lite or preview tier unless nothing else", () => {
    const models = [
      model("x-2", "2026-01-01"),
      model("x-3-mini", "2026-03-01"),
      model("x-3-preview", "2026-03-02"),
      model("x-3", "2026-02-01"),
      model("x-4-no-tools", "2026-04-01", false),
      model("y-9", "2026-05-01")
    ]
    assert.strictEqual(flagshipModel(models, /^x-/), "x-3")
    assert.strictEqual(flagshipModel(models), "y-9")
    assert.strictEqual(
      flagshipModel([model("x-3-preview", "2026-03-02"), model("x-2-mini", "2026-01-01")]),
      "x-3-preview"
    )
    assert.isUndefined(flagshipModel([model("z", "2026-01-01", false)]))
    assert.isUndefined(flagshipModel(models, /^w-/))
  })

  it("on the same date: a -latest alias, then the shortest id (not the dated twin, not -pro)", () => {
    assert.strictEqual(flagshipModel([model("m-5.5-pro", "2026-04-23"), model("m-5.5", "2026-04-23")]), "m-5.5")
    assert.strictEqual(flagshipModel([model("c-4-5-20250929", "2025-09-29"), model("c-4-5", "2025-09-29")]), "c-4-5")
    assert.strictEqual(flagshipModel([model("d-2512", "2025-12-09"), model("d-latest", "2025-12-09")]), "d-latest")
  })

  it("each shipped provider's default, read from the snapshot, is a current flagship of its family", () => {
    const defaults = Object.fromEntries(
      PROVIDERS.filter((descriptor) => descriptor.defaultModel !== undefined).map((descriptor) => [
        descriptor.type,
        flagshipModel(index.list(descriptor.catalogID), descriptor.defaultFamily) ?? descriptor.defaultModel
      ])
    )
    // What the snapshot shipped with this test gives; a new snapshot may move these (that is the point).
    assert.deepInclude(defaults, {
      anthropic: "claude-sonnet-5",
      openai: "gpt-5.5",
      google: "gemini-3.5-flash",
      "google-vertex-anthropic": "claude-sonnet-5@default",
      "amazon-bedrock": "global.anthropic.claude-sonnet-5",
      azure: "gpt-5.5",
      openrouter: "anthropic/claude-sonnet-5",
      groq: "openai/gpt-oss-120b",
      deepseek: "deepseek-v4-pro",
      xai: "grok-4.3",
      mistral: "devstral-latest",
      fireworks: "accounts/fireworks/models/glm-5p2"
    })
    // Every default is a model the catalogue lists for that provider, and calls tools.
    for (const descriptor of PROVIDERS) {
      const id = defaults[descriptor.type]
      if (id === undefined || index.list(descriptor.catalogID).length === 0) continue
      const found = index.list(descriptor.catalogID).find((m) => m.modelID === id)
      assert.isTrue(found?.entry.capabilities.toolCall, `${descriptor.type}: ${id}`)
    }
  })

  it.effect("with only ANTHROPIC_API_KEY, a run defaults to the catalogue's newest Sonnet", () =>
    Effect.gen(function* () {
      const info = yield* resolve({}, { ...none, ANTHROPIC_API_KEY: "a" })
      assert.strictEqual(`${info.providerID}/${info.modelID}`, "anthropic/claude-sonnet-5")
    })
  )
})
