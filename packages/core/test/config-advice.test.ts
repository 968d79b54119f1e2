import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { assumedModelNotice, modelInfo, noticesFile } from "../src/catalog/model-catalog.js"
import { Config, type ConfigEnv, type ConfigShape } from "../src/config/config.js"
import {
  type ConfigAdviceName,
  configAdvice,
  configAdviceExamples,
  renderSnippet
} from "../src/config/config-advice.js"
import type { ConfigFileInput } from "../src/config/config-schema.js"
import { Paths } from "../src/config/paths.js"

/**
 * Loads config the way a run does (`Config.layerWith` on real files): `global` as the person's own lathe.json, then
 * `explicit` ($LATHE_CONFIG) and `project` (a lathe.json in the project, trusted or not) as the exact text given.
 */
const load = (
  files: { readonly global?: string; readonly explicit?: string; readonly project?: string; readonly trust?: boolean },
  env: ConfigEnv = {}
) => {
  const base = realpathSync(mkdtempSync(join(tmpdir(), "lathe-advice-")))
  for (const dir of ["project", "global", "data"]) mkdirSync(join(base, dir))
  const root = join(base, "project")
  if (files.global !== undefined) writeFileSync(join(base, "global", "lathe.json"), files.global)
  if (files.project !== undefined) writeFileSync(join(root, "lathe.json"), files.project)
  if (files.trust) writeFileSync(join(base, "data", "trust.json"), JSON.stringify({ trusted: [root] }))
  const explicit = join(base, "explicit.json")
  if (files.explicit !== undefined) writeFileSync(explicit, files.explicit)
  const paths = Paths.layerTest(root, { config: join(base, "global"), data: join(base, "data"), home: base })
  const fullEnv = files.explicit === undefined ? env : { ...env, LATHE_CONFIG: explicit }
  return Effect.gen(function* () {
    return yield* Config
  }).pipe(Effect.provide(Config.layerWith(fullEnv).pipe(Layer.provide(paths))))
}

/** What each snippet says it does, checked on the config it was loaded into. */
const effects: {
  readonly [K in ConfigAdviceName]: (config: ConfigShape, snippet: ConfigFileInput, env: ConfigEnv) => void
} = {
  modelLimits: (config, snippet, env) => {
    const [providerID, entry] = Object.entries(snippet.provider ?? {})[0] ?? []
    const [modelID] = Object.keys(entry?.models ?? {})
    assert.isDefined(providerID)
    assert.isDefined(modelID)
    if (providerID === "env" && env.LATHE_BASE_URL === undefined) {
      // Limits for LATHE_BASE_URL's server, with no such server this run: nothing to add to, nothing broken.
      assert.isUndefined(config.info.provider?.env)
      return
    }
    const override = config.info.provider?.[providerID]?.models?.[modelID]
    const info = modelInfo(providerID, modelID, override)
    assert.strictEqual(info.limit.context, 128_000)
    assert.strictEqual(info.limit.output, 8_192)
    assert.strictEqual(info.cost.input, 1)
    assert.isUndefined(assumedModelNotice(info), "the model is known now: no notice")
  },
  modelNoticeOff: (config) => assert.strictEqual(config.info.models?.notice, false),
  localProvider: (config) => {
    assert.strictEqual(config.info.model, "local/qwen3-coder")
    assert.strictEqual(config.info.provider?.local?.type, "openai-compatible")
    assert.strictEqual(config.info.provider?.local?.baseURL, "http://127.0.0.1:11434/v1")
  },
  permissionAllow: (config, snippet) => {
    const [permission, patterns] = Object.entries(snippet.permission ?? {})[0] ?? []
    const [pattern] = Object.keys(typeof patterns === "object" ? patterns : {})
    assert.isTrue(
      config.info.permission.some((r) => r.permission === permission && r.pattern === pattern && r.action === "allow"),
      JSON.stringify(config.info.permission)
    )
  }
}

describe("every config snippet Lathe prints loads and does what it says", () => {
  for (const [name, examples] of Object.entries(configAdviceExamples) as Array<
    [ConfigAdviceName, (typeof configAdviceExamples)[ConfigAdviceName]]
  >)
    for (const [index, { snippet, env = {}, beside }] of examples.entries())
      it.effect(`${name} #${index + 1}: ${renderSnippet(snippet)}`, () =>
        Effect.gen(function* () {
          const printed = renderSnippet(snippet)
          // As the person's whole file, and (when they already have config it belongs to) as a file beside it.
          const alone = yield* load(
            beside === undefined ? { global: printed } : { global: renderSnippet(beside), explicit: printed },
            env
          )
          effects[name](alone, snippet, env)
          assert.deepStrictEqual(JSON.parse(printed), snippet, "the printed text is the snippet")
        })
      )

  it.effect("the old advice, provider.env.models without LATHE_BASE_URL, no longer breaks a run", () =>
    Effect.gen(function* () {
      const config = yield* load({
        global: '{ "provider": { "env": { "models": { "fake": { "context": 128000 } } } } }'
      })
      assert.isUndefined(config.info.provider?.env)
      // With a baseURL but no type it is a provider of its own, and the type is still asked for.
      const error = yield* Effect.flip(
        load({ global: '{ "provider": { "env": { "baseURL": "http://127.0.0.1:9/v1" } } }' })
      )
      assert.include(error.message, "provider.env.type")
    })
  )

  it.effect("models.notice: an untrusted project may turn the notice off, never back on", () =>
    Effect.gen(function* () {
      const off = renderSnippet(configAdvice.modelNoticeOff())
      assert.strictEqual((yield* load({ project: off })).info.models?.notice, false)
      const on = '{ "models": { "notice": true } }'
      assert.strictEqual((yield* load({ global: off, project: on })).info.models?.notice, false)
      assert.strictEqual((yield* load({ global: off, project: on, trust: true })).info.models?.notice, true)
    })
  )
})

describe("the not-in-the-catalogue notice", () => {
  it("offers the loadable snippet, is shown once per model across runs, and can be silenced", () => {
    const data = mkdtempSync(join(tmpdir(), "lathe-notice-"))
    const info = modelInfo("env", "advice-once-model")
    const text = assumedModelNotice(info, { dataDir: data, configDir: "/home/me/.config/lathe" })
    assert.include(text, renderSnippet(configAdvice.modelLimits("env", "advice-once-model")))
    assert.include(text, "/home/me/.config/lathe/lathe.json")
    assert.include(text, renderSnippet(configAdvice.modelNoticeOff()))
    assert.deepStrictEqual(JSON.parse(readFileSync(noticesFile(data), "utf8")), {
      unknownModels: ["env/advice-once-model"]
    })
    // A later run (another data dir already holding the model) says nothing.
    const told = mkdtempSync(join(tmpdir(), "lathe-notice-"))
    writeFileSync(noticesFile(told), JSON.stringify({ unknownModels: ["env/advice-told-model"] }))
    assert.isUndefined(assumedModelNotice(modelInfo("env", "advice-told-model"), { dataDir: told }))
    // Silenced: nothing shown, nothing remembered.
    const quiet = mkdtempSync(join(tmpdir(), "lathe-notice-"))
    assert.isUndefined(assumedModelNotice(modelInfo("env", "advice-quiet-model"), { dataDir: quiet, silenced: true }))
    assert.isFalse(existsSync(noticesFile(quiet)))
  })
})
