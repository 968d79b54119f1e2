import { assert, describe, it } from "@effect/vitest"
import { pluginCatalog } from "../src/plugin-host/plugin-catalog.js"

// `ctx.catalog`: the host's table of providers (the one `lathe models` shows) in the kit's plain shape.
describe("pluginCatalog", () => {
  it("lists config's providers, then a kind whose key is in the environment; the newest model after ready()", async () => {
    const catalog = pluginCatalog(
      { provider: { corp: { type: "anthropic", models: { "claude-opus-4-1": {} } } } },
      { OPENAI_API_KEY: "sk-test", LATHE_DATA_DIR: "/nonexistent" }
    )
    const providers = catalog.providers()
    assert.deepStrictEqual(providers[0], {
      id: "corp",
      type: "anthropic",
      ready: false,
      models: ["claude-opus-4-1"],
      defaultModel: "claude-opus-4-1"
    })
    assert.include(
      providers.map((provider) => `${provider.id}:${provider.type}:${provider.ready}`),
      "openai:openai:true"
    )
    await catalog.ready()
    assert.match(catalog.newestModel("anthropic", "claude-sonnet") ?? "", /^claude-sonnet/)
  })

  it("model: the catalogue's entry with config's override on top, or the unknown model's small window", async () => {
    const catalog = pluginCatalog(
      { provider: { local: { type: "openai-compatible", models: { tiny: { context: 1_000 } } } } },
      { LATHE_DATA_DIR: "/nonexistent" }
    )
    await catalog.ready()
    assert.strictEqual(catalog.model("anthropic", "claude-sonnet-4-5").limit.context, 200_000)
    assert.strictEqual(catalog.model("local", "tiny").limit.context, 1_000)
    assert.strictEqual(catalog.model("nowhere", "nothing").limit.context, 32_768)
  })

  it("defaultModel: the model Lathe answers with when config names none (what the keys present give)", async () => {
    const none = { LATHE_DATA_DIR: "/nonexistent" }
    // The catalogue's flagship once it is loaded (`ready`), as the LLM layer's choice.
    await pluginCatalog({}, none).ready()
    assert.strictEqual(pluginCatalog({}, { ...none, OPENAI_API_KEY: "k" }).defaultModel(), "openai/gpt-5.5")
    assert.match(
      pluginCatalog({}, { ...none, OPENAI_API_KEY: "k", ANTHROPIC_API_KEY: "k" }).defaultModel() ?? "",
      /^anthropic\//
    )
    assert.strictEqual(pluginCatalog({}, none).defaultModel(), undefined)
  })
})
