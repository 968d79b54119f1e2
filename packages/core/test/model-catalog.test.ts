import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { catalogModels, lookupModel, ModelCatalog, modelInfo, UNKNOWN_MODEL } from "../src/catalog/model-catalog.js"

describe("model catalogue", () => {
  // The synchronous helpers read the catalogue a ModelCatalog loaded (here the shipped snapshot).
  beforeAll(async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "lathe-catalog-"))
    await Effect.runPromise(ModelCatalog.make({ dataDir, url: "http://127.0.0.1:9/", refresh: false }).list())
  })

  it("knows current Anthropic and OpenAI models with prices per million tokens", () => {
    const sonnet = lookupModel("claude-sonnet-4-5")
    assert.deepStrictEqual(sonnet?.cost, { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 })
    assert.deepStrictEqual(sonnet?.limit, { context: 200_000, output: 64_000 })
    assert.strictEqual(lookupModel("claude-opus-4-5")?.cost.input, 5)
    assert.strictEqual(lookupModel("claude-haiku-4-5")?.cost.output, 5)
    assert.deepStrictEqual(lookupModel("gpt-5")?.limit, { context: 400_000, output: 128_000 })
    assert.strictEqual(lookupModel("gpt-5")?.capabilities.temperature, false)
    assert.strictEqual(lookupModel("gpt-4.1")?.limit.context, 1_047_576)
    assert.strictEqual(lookupModel("o4-mini")?.capabilities.reasoning, true)
    assert.isAbove(catalogModels().length, 1_000)
    const oldTable = [
      "claude-opus-4-5",
      "claude-opus-4-1",
      "claude-sonnet-4-5",
      "claude-haiku-4-5",
      "claude-3-7-sonnet"
    ]
    for (const id of [...oldTable, "gpt-5", "gpt-5-mini", "gpt-4.1", "gpt-4o", "o3", "o3-mini", "o4-mini", "o1"]) {
      const entry = lookupModel(id)
      assert.isDefined(entry, id)
      assert.isAbove(entry?.limit.context ?? 0, entry?.limit.output ?? 0, id)
      assert.isAbove(entry?.cost.output ?? 0, 0, id)
    }
  })

  it("matches dated, -latest and dotted ids, but not prefixes of other ids", () => {
    assert.strictEqual(lookupModel("claude-sonnet-4-5-20250929")?.name, "Claude Sonnet 4.5")
    assert.strictEqual(lookupModel("claude-sonnet-4.5")?.name, "Claude Sonnet 4.5 (latest)")
    assert.strictEqual(lookupModel("claude-3-7-sonnet-latest")?.name, "Claude Sonnet 3.7")
    assert.strictEqual(lookupModel("gpt-4.1-mini-2025-04-14")?.name, "GPT-4.1 mini")
    assert.strictEqual(lookupModel("GPT-4o")?.name, "GPT-4o")
    assert.isUndefined(lookupModel("gpt-4.1-turbo"))
    assert.isUndefined(lookupModel("qwen3-coder-local-finetune"))
  })

  it("gives unknown models conservative limits, no cost, and tools", () => {
    const info = modelInfo("local", "qwen3-coder-local-finetune")
    assert.deepStrictEqual(info.limit, { context: 32_768, output: 4_096 })
    assert.deepStrictEqual(info.cost, UNKNOWN_MODEL.cost)
    assert.strictEqual(info.capabilities.toolCall, true)
    assert.strictEqual(info.name, "qwen3-coder-local-finetune")
    assert.strictEqual(`${info.providerID}/${info.modelID}`, "local/qwen3-coder-local-finetune")
  })

  it("applies a config override field by field on top of the catalogue", () => {
    const info = modelInfo("anthropic", "claude-sonnet-4-5", {
      name: "Sonnet (1M)",
      context: 1_000_000,
      cost: { input: 6, output: 22.5, cache_write: 7.5 },
      temperature: false
    })
    assert.strictEqual(info.name, "Sonnet (1M)")
    assert.deepStrictEqual(info.limit, { context: 1_000_000, output: 64_000 })
    assert.deepStrictEqual(info.cost, { input: 6, output: 22.5, cacheRead: 0.3, cacheWrite: 7.5 })
    assert.deepStrictEqual(info.capabilities, {
      reasoning: true,
      toolCall: true,
      temperature: false,
      image: true,
      pdf: true
    })
  })
})
