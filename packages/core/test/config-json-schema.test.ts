/**
 * lathe.json's JSON Schema is generated from the zod schema the config loader validates with (`configJsonSchema`),
 * through the proxies that build those schemas on first use.
 */
import { assert, describe, it } from "@effect/vitest"
import { CONFIG_SCHEMA_URL, configJsonSchema } from "../src/config/config-json-schema.js"
import { ConfigFile } from "../src/config/config-schema.js"

type Json = Record<string, unknown>

const at = (schema: Json, ...path: ReadonlyArray<string>): Json =>
  path.reduce<Json>((node, key) => node[key] as Json, schema)

describe("configJsonSchema", () => {
  it("has every top-level key the loader takes, and no other", () => {
    const schema = configJsonSchema()
    assert.strictEqual(schema.$schema, "https://json-schema.org/draft/2020-12/schema")
    assert.strictEqual(schema.$id, CONFIG_SCHEMA_URL)
    assert.deepStrictEqual(Object.keys(at(schema, "properties")).sort(), Object.keys(ConfigFile.shape).sort())
    assert.strictEqual(schema.additionalProperties, false)
  })

  it("describes what a person writes: a transform's input, enums, strict objects, patterns", () => {
    const schema = configJsonSchema()
    // `reasoning` of a model is turned into `reasoning_effort` by the loader; the file holds the input form.
    const model = at(schema, "properties", "provider", "additionalProperties", "properties", "models")
    const entry = at(model, "additionalProperties")
    assert.include(Object.keys(at(entry, "properties")), "reasoning")
    assert.notInclude(Object.keys(at(entry, "properties")), "reasoning_effort")
    assert.strictEqual(entry.additionalProperties, false)
    const sandbox = JSON.stringify(at(schema, "properties", "sandbox"))
    assert.include(sandbox, '"workspace-write"')
    assert.include(sandbox, '"required"')
    // zod's own `format` names (`includes`) are left out: strict validators refuse formats they do not know.
    assert.notInclude(JSON.stringify(schema), '"format":"includes"')
    assert.deepStrictEqual(at(schema, "properties", "model"), { type: "string", pattern: "\\/" })
  })

  it("leaves the schemas themselves working as before", () => {
    configJsonSchema()
    assert.isTrue(ConfigFile.safeParse({ provider: { x: { models: { m: { reasoning: "high" } } } } }).success)
    assert.isFalse(ConfigFile.safeParse({ nonsense: 1 }).success)
  })
})
