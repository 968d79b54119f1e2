/**
 * The config schemas are built on first use (`lazySchema` in config-schema.ts: a run with no config file builds none
 * of them). What stands for a schema until then must be one in every way the code and plugins use it.
 */
import { assert, describe, it } from "@effect/vitest"
import { z } from "zod"
import {
  ConfigFile,
  configFileSchemaFor,
  McpServerConfig,
  ModelConfig,
  ProviderConfig,
  StoreConfig
} from "../src/config/config-schema.js"

describe("config schemas built on first use", () => {
  it("are schemas: instanceof, shape, keys, and extend as zod gives them", () => {
    assert.isTrue(ConfigFile instanceof z.ZodObject)
    assert.isTrue(ConfigFile instanceof z.ZodType)
    assert.isTrue("model" in ConfigFile.shape)
    assert.include(Object.keys(ConfigFile.shape), "provider")
    const grown = ConfigFile.extend({ extra: z.string().optional() })
    assert.deepStrictEqual(grown.parse({ model: "a/b", extra: "x" }), { model: "a/b", extra: "x" })
    assert.strictEqual(ConfigFile.safeParse({ extra: "x" }).success, false)
  })

  it("parse, transform and reject with the same issues inside another schema as alone", () => {
    assert.deepStrictEqual(ModelConfig.parse({ context: 1000, reasoning: "high" }), {
      context: 1000,
      reasoning: true,
      reasoning_effort: "high"
    })
    const bad = { type: "openai-compatible", baseURL: "ftp://x", models: { m: { context: -1 } } }
    const alone = ProviderConfig.safeParse(bad)
    const nested = z.object({ provider: ProviderConfig }).safeParse({ provider: bad })
    assert.isFalse(alone.success)
    assert.isFalse(nested.success)
    assert.deepStrictEqual(
      nested.error?.issues.map((issue) => ({ ...issue, path: issue.path.slice(1) })),
      alone.error?.issues
    )
    assert.deepStrictEqual(
      alone.error?.issues.map((issue) => [issue.path.join("."), issue.message]),
      [
        ["baseURL", "an http(s) URL"],
        ["models.m.context", "a positive integer"]
      ]
    )
  })

  it("discriminated unions of them pick their branch", () => {
    assert.deepStrictEqual(StoreConfig.parse({ type: "sqlite" }), { type: "sqlite" })
    assert.isTrue(McpServerConfig.safeParse({ type: "local", command: ["x"] }).success)
    assert.isFalse(McpServerConfig.safeParse({ type: "elsewhere", command: ["x"] }).success)
  })

  // The provider's own refusal of such a URL is tested with @lathe/mcp's OAuth.
  it("an MCP server's OAuth client metadata URL must be https with a path", () => {
    const config = (clientMetadataUrl: string) =>
      McpServerConfig.safeParse({ type: "remote", url: "https://x.dev/mcp", oauth: { clientMetadataUrl } })
    assert.isTrue(config("https://example.com/lathe/client.json").success)
    for (const bad of ["http://example.com/client.json", "https://example.com/", "client.json"])
      assert.match(config(bad).error?.issues[0]?.message ?? "", /^an https URL with a path/)
  })

  it("a file is checked with the schemas of the keys it has, with what the whole file's schema gives", () => {
    // Each as a person writes them: valid, with a bad value, a transform, a nested unknown key, an unknown top key.
    const files: ReadonlyArray<unknown> = [
      { max_steps: 0 },
      { model: "anthropic/claude", max_steps: 3, compaction: { auto: false } },
      {
        provider: {
          local: { type: "openai-compatible", baseURL: "http://127.0.0.1:1/v1", models: { m: { reasoning: "high" } } }
        }
      },
      { max_steps: -1, model: "no-slash" },
      { snapshot: { max_file_size: 0 } },
      { websearch: { backend: "bing" } },
      { budget: { max_cost: 1, per_day: 2 } },
      { max_step: 3 },
      JSON.parse(`{ "model": "a/b", "__proto__": { "x": 1 } }`),
      {},
      [],
      "lathe"
    ]
    for (const file of files) {
      const whole = ConfigFile.safeParse(file)
      const fitted = configFileSchemaFor(file).safeParse(file)
      assert.strictEqual(fitted.success, whole.success, JSON.stringify(file))
      if (whole.success) {
        assert.deepStrictEqual(fitted.data, whole.data)
        assert.deepStrictEqual(Object.keys(fitted.data ?? {}), Object.keys(whole.data))
      } else assert.deepStrictEqual(fitted.error?.issues, whole.error.issues, JSON.stringify(file))
    }
    // Only the keys the file has; an unknown key gets the whole schema, whose error names every key.
    const fitted = configFileSchemaFor({ max_steps: 0 })
    assert.isTrue(fitted instanceof z.ZodObject)
    assert.deepStrictEqual(Object.keys((fitted as z.ZodObject).shape), ["max_steps"])
    assert.strictEqual(configFileSchemaFor({ max_step: 3 }), ConfigFile)
    assert.strictEqual(configFileSchemaFor({ max_steps: 1 }), fitted)
  })

  it("a hostile file's keys named after Object.prototype's members get the whole schema, and its error", () => {
    for (const key of ["constructor", "toString", "hasOwnProperty", "__proto__", "valueOf"]) {
      const file = JSON.parse(`{ "max_steps": 1, ${JSON.stringify(key)}: {} }`) as Record<string, unknown>
      // The payload: each is "in" any plain object, so a check of a file's keys with `in` would take it as known.
      assert.isTrue(key in {}, key)
      assert.strictEqual(configFileSchemaFor(file), ConfigFile, key)
      const parsed = ConfigFile.safeParse(file)
      assert.isFalse(parsed.success, key)
      assert.deepStrictEqual(
        parsed.error?.issues.map((issue) => [issue.code, issue.code === "unrecognized_keys" ? issue.keys : []]),
        [["unrecognized_keys", [key]]],
        key
      )
    }
  })
})
