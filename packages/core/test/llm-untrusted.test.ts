/**
 * `LLM.resolve` when the model's settings were in an untrusted project's config: one failure naming the ignored keys,
 * the file and `lathe trust`, instead of the setup guide or "set the baseURL"; other failures are left as they were.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { Config, loadConfig } from "../src/config/config.js"
import type { PathsShape } from "../src/config/paths.js"
import { LLM } from "../src/llm/llm.js"

/** Real files: the person's own config (optional) and an untrusted project's lathe.json. */
const resolveWith = (files: { readonly user?: unknown; readonly project: unknown }, model?: string) =>
  Effect.gen(function* () {
    const dir = mkdtempSync(join(tmpdir(), "lathe-llm-untrusted-"))
    const paths: PathsShape = {
      directory: join(dir, "project"),
      root: join(dir, "project"),
      projectID: "p",
      data: join(dir, "data"),
      config: join(dir, "config"),
      home: dir
    }
    mkdirSync(paths.root, { recursive: true })
    mkdirSync(paths.config, { recursive: true })
    if (files.user !== undefined) writeFileSync(join(paths.config, "lathe.json"), JSON.stringify(files.user))
    writeFileSync(join(paths.root, "lathe.json"), JSON.stringify(files.project))
    const config = yield* loadConfig(paths, {})
    const error = yield* Effect.flip(
      Effect.flatMap(LLM, (llm) => llm.resolve(model)).pipe(
        Effect.provide(LLM.layerWith({}).pipe(Layer.provide(Layer.succeed(Config, Config.of(config)))))
      )
    )
    return { error, paths }
  })

const local = (url: string) => ({ local: { type: "openai-compatible", baseURL: url } })

describe("LLM.resolve with an untrusted project's model settings", () => {
  it.effect("model and provider in the project: one message with the keys, the file and `lathe trust`", () =>
    Effect.gen(function* () {
      const { error, paths } = yield* resolveWith({
        project: { model: "local/qwen3-coder", provider: local("http://127.0.0.1:11434/v1") }
      })
      assert.strictEqual(error._tag, "ProviderNotConfigured")
      assert.isTrue(error._tag === "ProviderNotConfigured" && error.untrusted === true)
      assert.include(
        error.message,
        `${join(paths.root, "lathe.json")} sets model, provider.local.type, provider.local.baseURL`
      )
      assert.include(error.message, `Run \`lathe trust\` in ${paths.root}`)
      assert.include(error.message, join(paths.config, "lathe.json"))
      assert.notInclude(error.message, "Lathe needs one model")
    })
  )

  it.effect("the person's model, the project's baseURL: not 'set the baseURL' but why it was ignored", () =>
    Effect.gen(function* () {
      const { error } = yield* resolveWith({
        user: { model: "local/m", provider: { local: { type: "openai-compatible" } } },
        project: { provider: { local: { baseURL: "http://127.0.0.1:11434/v1" } } }
      })
      assert.isTrue(error._tag === "ProviderNotConfigured" && error.untrusted === true)
      assert.include(error.message, "sets provider.local.baseURL, but Lathe ignores it")
      assert.notInclude(error.message, "has no baseURL")
    })
  )

  it.effect("a failure the project's settings did not cause keeps its own message", () =>
    Effect.gen(function* () {
      const { error } = yield* resolveWith({
        user: { model: "anthropic/claude-sonnet-4-5" },
        project: { provider: local("http://127.0.0.1:11434/v1") }
      })
      assert.strictEqual(error._tag, "ProviderNotConfigured")
      assert.isFalse(error._tag === "ProviderNotConfigured" && error.untrusted === true)
      assert.include(error.message, "needs ANTHROPIC_API_KEY")
    })
  )
})
