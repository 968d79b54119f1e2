import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { Config, type ConfigEnv, trustProject } from "../src/config/config.js"
import { Paths } from "../src/config/paths.js"

const PG = "postgres://lathe:pw@db.internal:5432/lathe"

/** A project and a global config dir in a temp dir; `load(env)` loads the config as `lathe` would. */
const setup = (files: { readonly global?: object; readonly project?: object }) => {
  const base = realpathSync(mkdtempSync(join(tmpdir(), "lathe-store-config-")))
  const root = join(base, "repo")
  const global = join(base, "global")
  mkdirSync(root)
  mkdirSync(global)
  if (files.global) writeFileSync(join(global, "lathe.json"), JSON.stringify(files.global))
  if (files.project) writeFileSync(join(root, "lathe.json"), JSON.stringify(files.project))
  const paths = Paths.layerTest(root, { config: global, data: join(base, "data"), home: base })
  const load = (env: ConfigEnv = {}) =>
    Effect.gen(function* () {
      return yield* Config
    }).pipe(Effect.provide(Config.layerWith(env).pipe(Layer.provide(paths))))
  const trust = Effect.gen(function* () {
    yield* trustProject(yield* Paths)
  }).pipe(Effect.provide(paths))
  return { root, load, trust, projectFile: join(root, "lathe.json"), globalFile: join(global, "lathe.json") }
}

describe("Config store", () => {
  it.effect("global config picks the store; none means the default (SQLite)", () =>
    Effect.gen(function* () {
      assert.strictEqual((yield* setup({}).load()).info.store, undefined)
      const config = yield* setup({ global: { store: { type: "postgres", url: PG } } }).load()
      assert.deepStrictEqual(config.info.store, { type: "postgres", url: PG })
    })
  )

  it.effect("LATHE_STORE wins over config for one run: a postgres URL, or sqlite", () =>
    Effect.gen(function* () {
      const t = setup({ global: { store: { type: "postgres", url: PG } } })
      assert.strictEqual((yield* t.load({ LATHE_STORE: "sqlite" })).info.store?.type, "sqlite")
      const other = "postgresql://ci@127.0.0.1:6000/runs"
      assert.deepStrictEqual((yield* t.load({ LATHE_STORE: other })).info.store, { type: "postgres", url: other })
      assert.strictEqual((yield* t.load({ LATHE_STORE: "" })).info.store?.type, "postgres", "empty is unset")
    })
  )

  it.effect("a LATHE_STORE that is neither is refused with an example, its password masked", () =>
    Effect.gen(function* () {
      const error = yield* setup({}).load({ LATHE_STORE: "mysql://root:hunter2@db/app" }).pipe(Effect.flip)
      assert.strictEqual(error.reason, "InvalidEnv")
      assert.strictEqual(
        error.message,
        'LATHE_STORE must be "sqlite" or a postgres:// URL (for example ' +
          'LATHE_STORE=postgres://lathe:secret@db.internal:5432/lathe), got "mysql://root:***@db/app".'
      )
    })
  )

  it.effect("a store in config must be sqlite, or postgres with a postgres:// URL", () =>
    Effect.gen(function* () {
      const t = setup({ global: { store: { type: "postgres", url: "http://db" } } })
      const error = yield* t.load().pipe(Effect.flip)
      assert.strictEqual(error.reason, "InvalidSchema")
      assert.match(error.message, /store\.url: expected a postgres:\/\/ URL/)
      const noType = yield* setup({ global: { store: { url: PG } } })
        .load()
        .pipe(Effect.flip)
      assert.match(noType.message, /store.*"type": "sqlite", or "type": "postgres" and a "url"/)
    })
  )

  it.effect("an untrusted project may not pick the store: it is dropped and the notice names it", () =>
    Effect.gen(function* () {
      const t = setup({ project: { store: { type: "postgres", url: "postgres://x@evil.test/loot" } } })
      const config = yield* t.load()
      assert.strictEqual(config.info.store, undefined)
      assert.deepStrictEqual(config.notices, [
        `Ignored from untrusted ${t.projectFile}: store. Run \`lathe trust\` in ${t.root} to trust this folder.`
      ])
      yield* t.trust
      assert.deepStrictEqual((yield* t.load()).info.store, { type: "postgres", url: "postgres://x@evil.test/loot" })
    })
  )
})
