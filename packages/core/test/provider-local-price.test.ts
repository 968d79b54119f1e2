/**
 * A local server's models cost nothing unless config says so: a model id Ollama or LM Studio serves is often listed by
 * hosted providers too (with their prices), and Lathe borrows its limits from there, never its price.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { catalogReady, lookupModel } from "../src/catalog/model-catalog.js"
import { Config, type ConfigTestInput } from "../src/config/config.js"
import { LLM, type ProviderEnv } from "../src/llm/llm.js"

const resolve = (config: ConfigTestInput, env: ProviderEnv, model: string) =>
  Effect.gen(function* () {
    return yield* (yield* LLM).resolve(model)
  }).pipe(Effect.provide(LLM.layerWith(env).pipe(Layer.provide(Config.layerTest(config)))))

describe("local servers' prices", () => {
  it.effect("an Ollama model a hosted provider lists takes its limits but costs nothing", () =>
    Effect.gen(function* () {
      yield* Effect.promise(() => catalogReady())
      const hosted = lookupModel("deepseek-r1:8b")
      // The premise: some provider in the catalogue prices this id.
      assert.isDefined(hosted)
      const info = yield* resolve({}, { OLLAMA_HOST: "127.0.0.1:9" }, "ollama/deepseek-r1:8b")
      assert.deepStrictEqual(info.cost, { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 })
      assert.strictEqual(info.limit.context, hosted?.limit.context)
    })
  )

  it.effect("a config entry's cost still applies to a local model", () =>
    Effect.gen(function* () {
      const info = yield* resolve(
        { provider: { ollama: { models: { "qwen3:8b": { cost: { input: 1, output: 2 } } } } } },
        {},
        "ollama/qwen3:8b"
      )
      assert.strictEqual(info.cost.input, 1)
      assert.strictEqual(info.cost.output, 2)
    })
  )
})
