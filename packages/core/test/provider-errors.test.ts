/**
 * What a person reads when a provider is not set up or a model id is wrong: the key variables and `lathe auth login`
 * from the descriptor, close matches from the catalogue when a real server on 127.0.0.1 answers "model not found",
 * and the unknown-model notice's "did you mean". Also `closeMatches` itself.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Stream } from "effect"
import { afterAll } from "vitest"
import { assumedModelNotice } from "../src/catalog/model-catalog.js"
import { Config, type ConfigTestInput } from "../src/config/config.js"
import { LLM, type ProviderEnv } from "../src/llm/llm.js"
import { keyHintFor } from "../src/llm/provider-error.js"
import { closeMatches } from "../src/provider/close-match.js"
import { keyVariables } from "../src/provider/key-hint.js"
import { descriptorOf, PROVIDER_TYPES } from "../src/provider/registry.js"
import { startScriptedServer } from "../src/testing/scripted-server.js"

const dirs: Array<string> = []
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

/** An environment with a fresh, empty data directory (no stored keys, the shipped catalogue). */
const cleanEnv = (): ProviderEnv => {
  const dir = mkdtempSync(join(tmpdir(), "lathe-provider-errors-"))
  dirs.push(dir)
  return { LATHE_DATA_DIR: dir }
}

const llmLayer = (config: ConfigTestInput, env: ProviderEnv) =>
  LLM.layerWith(env).pipe(Layer.provide(Config.layerTest(config)))

describe("closeMatches", () => {
  const ids = ["claude-sonnet-4-5", "claude-sonnet-4-5-20250929", "claude-opus-4-1", "claude-haiku-4-5", "gpt-5"]

  it("finds typos and dated twins, closest first, at most three", () => {
    assert.deepStrictEqual(closeMatches("claude-sonet-4-5", ids)[0], "claude-sonnet-4-5")
    assert.deepStrictEqual(closeMatches("Claude-Sonnet-4-5", ids)[0], "claude-sonnet-4-5-20250929", "case is ignored")
    assert.deepStrictEqual(closeMatches("claude-sonnet-4", ids).slice(0, 2), [
      "claude-sonnet-4-5",
      "claude-sonnet-4-5-20250929"
    ])
    assert.isAtMost(closeMatches("claude-4", ids).length, 3)
    assert.deepStrictEqual(closeMatches("gpt-5", ["gpt-5"]), [], "the id itself is no suggestion")
  })

  it("suggests nothing for an unrelated id", () => {
    assert.deepStrictEqual(closeMatches("llama3.1:8b", ids), [])
    assert.deepStrictEqual(closeMatches("", ids), [])
  })
})

describe("a provider with no key", () => {
  it.effect("names its key variables and lathe auth login, for every key provider", () =>
    Effect.gen(function* () {
      const env = cleanEnv()
      for (const type of PROVIDER_TYPES) {
        const descriptor = descriptorOf(type)
        if (descriptor === undefined || descriptor.auth !== "key" || descriptor.keyEnv.length === 0) continue
        const error = yield* Effect.gen(function* () {
          return yield* (yield* LLM).resolve(`${type}/some-model`)
        }).pipe(Effect.provide(llmLayer({}, env)), Effect.flip)
        assert.strictEqual(error._tag, "ProviderNotConfigured", type)
        assert.include(error.message, `needs ${keyVariables(descriptor.keyEnv)}, which is not set`, type)
        assert.include(error.message, `lathe auth login ${type}`, type)
        assert.include(error.message, `provider.${type}.apiKey in lathe.json`, type)
      }
    })
  )

  it.effect("an ambient provider with nothing set up says what is missing, as its descriptor words it", () =>
    Effect.gen(function* () {
      const env = cleanEnv()
      for (const type of PROVIDER_TYPES) {
        const descriptor = descriptorOf(type)
        if (descriptor?.auth !== "ambient" || descriptor.missing === undefined) continue
        const error = yield* Effect.gen(function* () {
          return yield* (yield* LLM).resolve(`${type}/some-model`)
        }).pipe(Effect.provide(llmLayer({}, env)), Effect.flip)
        assert.strictEqual(error._tag, "ProviderNotConfigured", type)
        assert.include(error.message, `The model ${type}/some-model needs ${descriptor.name} set up: set `, type)
      }
    })
  )

  it("a rejected key's hint names every variable, the config key and lathe auth login", () => {
    const google = descriptorOf("google")
    if (google !== undefined && google.keyEnv.length > 1) {
      const hint = keyHintFor("google")
      assert.include(hint, `set ${google.keyEnv[0]} (or ${google.keyEnv.slice(1).join(", ")})`)
      assert.include(hint, "provider.google.apiKey in lathe.json")
      assert.include(hint, "`lathe auth login google`")
    }
    // A custom id of a known type: its own config key first, then the type's variable.
    assert.strictEqual(keyHintFor("work", "anthropic"), "set provider.work.apiKey in lathe.json, or ANTHROPIC_API_KEY")
  })
})

describe("a model the provider does not know", () => {
  it.effect("a 404 model-not-found from a real server names close catalogue models", () =>
    Effect.gen(function* () {
      const server = yield* Effect.acquireRelease(
        Effect.promise(() =>
          startScriptedServer([
            {
              type: "error",
              status: 404,
              body: {
                error: {
                  message: "The model `gpt-4.1-mnii` does not exist or you do not have access to it.",
                  type: "invalid_request_error",
                  code: "model_not_found"
                }
              }
            }
          ])
        ),
        (s) => Effect.promise(() => s.close())
      )
      const config = { provider: { openai: { baseURL: server.url } } }
      const error = yield* Effect.gen(function* () {
        const llm = yield* LLM
        const model = yield* Effect.orDie(llm.resolve("openai/gpt-4.1-mnii"))
        const abort = new AbortController().signal
        const request = { sessionID: "ses_e", model, system: [], messages: [], tools: {}, abort }
        return yield* Stream.runDrain(llm.stream({ ...request, messages: [{ role: "user", content: "hi" }] }))
      }).pipe(Effect.provide(llmLayer(config, { ...cleanEnv(), OPENAI_API_KEY: "sk-test" })), Effect.flip)
      assert.strictEqual(server.requests.length, 1)
      assert.strictEqual(error.reason._tag, "InvalidRequest")
      assert.include(error.message, "does not exist")
      assert.include(error.message, 'Check that provider "openai"')
      assert.match(error.message, /Did you mean openai\/gpt-4\.1-mini(, [^ ]+)*\?$/)
    })
  )

  it.effect("resolve does not fail, and the notice says what it may have meant", () =>
    Effect.gen(function* () {
      const info = yield* Effect.gen(function* () {
        return yield* (yield* LLM).resolve("anthropic/claude-sonet-4-5")
      }).pipe(Effect.provide(llmLayer({}, { ...cleanEnv(), ANTHROPIC_API_KEY: "k" })))
      assert.strictEqual(info.modelID, "claude-sonet-4-5")
      const notice = assumedModelNotice(info) ?? ""
      assert.include(
        notice,
        "anthropic/claude-sonet-4-5 is not in Lathe's model catalogue — did you mean claude-sonnet-4-5"
      )
      // An id with nothing close: the notice as before.
      const other = yield* Effect.gen(function* () {
        return yield* (yield* LLM).resolve("anthropic/zzz-private")
      }).pipe(Effect.provide(llmLayer({}, { ...cleanEnv(), ANTHROPIC_API_KEY: "k" })))
      assert.include(assumedModelNotice(other) ?? "", "anthropic/zzz-private is not in Lathe's model catalogue (lathe")
    })
  )
})
