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
})
