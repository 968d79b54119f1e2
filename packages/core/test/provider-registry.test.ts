/**
 * Provider descriptors wired through core: which descriptor a provider id takes, where its key comes from (config, then
 * the environment, then `lathe auth login`'s file, in a real temp data directory), which providers the environment
 * sets up without config, and a keyless local server used by reference alone. Requests go to real HTTP servers on
 * 127.0.0.1 through the real SDKs.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Stream } from "effect"
import { afterAll } from "vitest"
import type { ModelInfo } from "../src/catalog/model-info.js"
import { storeKey } from "../src/config/auth-store.js"
import { Config, type ConfigTestInput } from "../src/config/config.js"
import type { ProviderConfig } from "../src/config/config-schema.js"
import { configuredProviders, descriptorDefaultModel } from "../src/llm/configured.js"
import { LLM, type LLMRequest, type ProviderEnv } from "../src/llm/llm.js"
import { descriptorFor, descriptorOf, PROVIDER_TYPES } from "../src/provider/registry.js"
import { startScriptedServer } from "../src/testing/scripted-server.js"
import { startWireServer } from "../src/testing/scripted-wire.js"

const dirs: Array<string> = []
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

/** A fresh data directory (where `lathe auth login` keeps keys) as an environment. */
const dataEnv = (): { readonly LATHE_DATA_DIR: string } => {
  const dir = mkdtempSync(join(tmpdir(), "lathe-provider-"))
  dirs.push(dir)
  return { LATHE_DATA_DIR: dir }
}

const llmLayer = (config: ConfigTestInput, env: ProviderEnv) =>
  LLM.layerWith(env).pipe(Layer.provide(Config.layerTest(config)))

const resolve = (config: ConfigTestInput, env: ProviderEnv, model?: string) =>
  Effect.gen(function* () {
    return yield* (yield* LLM).resolve(model)
  }).pipe(Effect.provide(llmLayer(config, env)))

const request = (model: ModelInfo): LLMRequest => ({
  sessionID: "ses_p",
  model,
  system: ["You are Lathe."],
  messages: [{ role: "user", content: "hi" }],
  tools: {},
  abort: new AbortController().signal
})

/** Resolves `model` (default: the configured one) and streams one step; the model as resolved. */
const step = (config: ConfigTestInput, env: ProviderEnv, model?: string) =>
  Effect.gen(function* () {
    const llm = yield* LLM
    const info = yield* Effect.orDie(llm.resolve(model))
    yield* Stream.runDrain(llm.stream(request(info)))
    return info
  }).pipe(Effect.provide(llmLayer(config, env)))

describe("the registry", () => {
  it("names each type once, and finds a descriptor by type, alias or custom id", () => {
    assert.strictEqual(new Set(PROVIDER_TYPES).size, PROVIDER_TYPES.length)
    for (const type of ["anthropic", "openai", "openai-compatible"]) assert.include(PROVIDER_TYPES, type)
    assert.strictEqual(descriptorFor("anthropic").type, "anthropic")
    assert.strictEqual(descriptorFor("work", "anthropic").type, "anthropic", "an explicit type wins over the id")
    assert.strictEqual(descriptorFor("anthropic", "openai-compatible").type, "openai-compatible")
    assert.strictEqual(descriptorFor("my-gateway").type, "openai-compatible", "a custom id is an OpenAI-style server")
    for (const descriptor of PROVIDER_TYPES.map((type) => descriptorOf(type)))
      for (const alias of descriptor?.aliases ?? []) assert.strictEqual(descriptorFor(alias), descriptor, alias)
  })

  it.effect("a config provider may leave type out when its id is a type or an alias", () =>
    Effect.gen(function* () {
      const aliased = PROVIDER_TYPES.map((type) => descriptorOf(type)).find((d) => (d?.aliases ?? []).length > 0)
      const alias = aliased?.aliases?.[0]
      if (aliased === undefined || alias === undefined) return
      const config = yield* Effect.provide(Config, Config.layerTest({ provider: { [alias]: {}, anthropic: {} } }))
      assert.strictEqual(config.info.provider?.[alias]?.type, aliased.type)
      assert.strictEqual(config.info.provider?.anthropic?.type, "anthropic")
    })
  )
})

describe("where a key comes from", () => {
  it("config apiKey, then the key variable, then the key lathe auth login stored", () => {
    const env = { ...dataEnv(), ANTHROPIC_API_KEY: "sk-env" }
    storeKey("anthropic", "sk-stored", env)
    const keyOf = (config: Readonly<Record<string, ProviderConfig>>, e: ProviderEnv) => {
      const [provider] = configuredProviders({ provider: config }, e)
      return [provider?.settings.apiKey, provider?.keySource]
    }
    assert.deepStrictEqual(keyOf({ anthropic: { type: "anthropic", apiKey: "sk-config" } }, env), [
      "sk-config",
      "config"
    ])
    assert.deepStrictEqual(keyOf({ anthropic: { type: "anthropic" } }, env), ["sk-env", "env:ANTHROPIC_API_KEY"])
    const noVariable = { LATHE_DATA_DIR: env.LATHE_DATA_DIR }
    assert.deepStrictEqual(keyOf({ anthropic: { type: "anthropic" } }, noVariable), ["sk-stored", "auth"])
    // Not configured at all: the stored key alone sets the provider up, ready.
    const [detected] = configuredProviders({}, noVariable)
    assert.strictEqual(detected?.id, "anthropic")
    assert.strictEqual(detected?.keySource, "auth")
    assert.isTrue(detected?.ready)
  })

  it.effect("a stored key is the one sent, when no variable or config holds one", () =>
    Effect.gen(function* () {
      const server = yield* Effect.acquireRelease(
        Effect.promise(() => startWireServer("anthropic", [{ text: "ok" }])),
        (s) => Effect.promise(() => s.close())
      )
      const env = dataEnv()
      storeKey("anthropic", "sk-ant-stored", env)
      const config = { model: "anthropic/claude-sonnet-4-5", provider: { anthropic: { baseURL: server.url } } }
      yield* step(config, env)
      assert.strictEqual(server.requests[0]?.headers["x-api-key"], "sk-ant-stored")
    })
  )

  it.effect("a provider configured under its own id with a type takes that type's catalogue rows", () =>
    Effect.gen(function* () {
      const info = yield* resolve(
        { provider: { work: { type: "anthropic", apiKey: "k" } } },
        dataEnv(),
        "work/claude-sonnet-4-5"
      )
      assert.strictEqual(info.providerID, "work")
      assert.strictEqual(info.limit.context, 200_000)
      assert.strictEqual(info.cost.input, 3)
    })
  )
})

describe("providers the environment sets up", () => {
  it("every provider type whose key variable is set, and no other", () => {
    const hosted = PROVIDER_TYPES.map((type) => descriptorOf(type)).filter(
      (d) => d !== undefined && d.auth === "key" && d.keyEnv.length > 0 && d.detectEnv === undefined
    )
    for (const descriptor of hosted) {
      const name = descriptor?.keyEnv.at(-1) ?? ""
      const table = configuredProviders({}, { ...dataEnv(), [name]: "k" })
      assert.deepStrictEqual(
        table.map((p) => [p.id, p.keySource]),
        [[descriptor?.type, `env:${name}`]],
        name
      )
      // Ready with the key alone, unless it needs more (Azure's resource name), which its problem then says.
      if (descriptor?.missing === undefined) assert.isTrue(table[0]?.ready, name)
      else if (!table[0]?.ready) assert.include(table[0]?.problem, "is not set up", name)
    }
    assert.deepStrictEqual(configuredProviders({}, dataEnv()), [])
  })

  it.effect("with only another provider's key, its default model is picked", () =>
    Effect.gen(function* () {
      const other = PROVIDER_TYPES.map((type) => descriptorOf(type)).find(
        (d) => d !== undefined && d.auth === "key" && d.type !== "anthropic" && d.type !== "openai" && d.keyEnv[0]
      )
      if (other === undefined) return
      const info = yield* resolve({}, { ...dataEnv(), [other.keyEnv[0] ?? ""]: "k" })
      assert.strictEqual(info.providerID, other.type)
      const expected = descriptorDefaultModel(other)
      if (expected !== undefined) assert.strictEqual(info.modelID, expected)
      // Anthropic still comes first when its key is there too.
      const both = yield* resolve({}, { ...dataEnv(), [other.keyEnv[0] ?? ""]: "k", ANTHROPIC_API_KEY: "a" })
      assert.strictEqual(`${both.providerID}/${both.modelID}`, "anthropic/claude-sonnet-5")
    })
  )
})

describe("a keyless local server, by reference alone", () => {
  it.effect("ollama/<model> works with no provider block, at OLLAMA_HOST", () =>
    Effect.gen(function* () {
      if (descriptorOf("ollama") === undefined) return
      const server = yield* Effect.acquireRelease(
        Effect.promise(() => startScriptedServer([{ steps: [{ text: "hello" }] }])),
        (s) => Effect.promise(() => s.close())
      )
      const host = new URL(server.url).host
      const info = yield* step({}, { ...dataEnv(), OLLAMA_HOST: host }, "ollama/qwen3")
      assert.strictEqual(`${info.providerID}/${info.modelID}`, "ollama/qwen3")
      assert.strictEqual(server.requests[0]?.path, "/v1/chat/completions")
      assert.strictEqual((server.requests[0]?.body as { model?: string } | undefined)?.model, "qwen3")
      // It is usable, not listed: `configuredProviders` names what config and keys set up.
      assert.deepStrictEqual(configuredProviders({}, { ...dataEnv(), OLLAMA_HOST: host }), [])
    })
  )
})
