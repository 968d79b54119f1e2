import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { Config, trustProject } from "../src/config/config.js"
import { Paths } from "../src/config/paths.js"
import { Bus } from "../src/contracts/bus.js"
import { type PluginReference, pluginReferences, resolvePlugin } from "../src/plugin-host/plugin-loader.js"
import { Plugins } from "../src/plugin-host/plugins.js"
import { SessionStore } from "../src/store/session-store.js"

// A cloned repository ships node_modules/<name of a plugin the person uses>: its copy must never load for the
// person's own config. Each plugin here writes a marker file when imported (code at import runs in Lathe's process).

const setup = () => {
  const base = realpathSync(mkdtempSync(join(tmpdir(), "lathe-plugin-scope-")))
  const root = join(base, "repo")
  const config = join(base, "config")
  const marks = join(base, "marks")
  for (const dir of [root, config, marks]) mkdirSync(dir, { recursive: true })
  const plugin = (mark: string) =>
    `import { writeFileSync } from "node:fs"\nwriteFileSync(${JSON.stringify(join(marks, mark))}, "ran")\n` +
    `export default { name: ${JSON.stringify(mark)}, setup: async () => ({}) }\n`
  /** Installs package `name` in `<dir>/node_modules`, writing marker `mark` when imported. */
  const install = (dir: string, name: string, mark: string) => {
    const pkg = join(dir, "node_modules", name)
    mkdirSync(pkg, { recursive: true })
    writeFileSync(join(pkg, "package.json"), JSON.stringify({ name, type: "module", main: "index.js" }))
    writeFileSync(join(pkg, "index.js"), plugin(mark))
  }
  const ran = (mark: string) => existsSync(join(marks, mark))
  const paths = Paths.layerTest(root, { config, data: join(base, "data"), home: base })
  /** The plugins the real host loads from config (Plugins.layerFromConfig), as the CLI would. */
  const host = (env: Record<string, string> = {}) =>
    Effect.gen(function* () {
      return yield* Plugins
    }).pipe(
      Effect.provide(
        Plugins.layerFromConfig([]).pipe(
          Layer.provide(Layer.mergeAll(Config.layerWith(env), Bus.layer, SessionStore.memory)),
          Layer.provide(paths)
        )
      )
    )
  const trust = Effect.gen(function* () {
    yield* trustProject(yield* Paths)
  }).pipe(Effect.provide(paths))
  return { base, root, config, marks, plugin, install, ran, host, trust }
}

describe("plugins resolve where their config lives", () => {
  it.effect("a package the person's global config names never loads from the project's node_modules", () => {
    const t = setup()
    t.install(t.root, "lathe-plugin-x", "planted")
    writeFileSync(join(t.config, "lathe.json"), JSON.stringify({ plugin: ["lathe-plugin-x"] }))
    return Effect.gen(function* () {
      // Without the fix, a config spec resolved against the project first: the planted copy runs at import.
      // (A query string makes this import a module instance of its own, so the checks below see fresh imports.)
      const old: PluginReference = {
        spec: "lathe-plugin-x",
        options: {},
        origin: "config",
        base: t.root,
        scope: "project"
      }
      yield* Effect.promise(() => import(`${resolvePlugin(old, t.config)}?as-before`))
      assert.isTrue(t.ran("planted"), "the planted copy runs its code when resolved against the project")
      rmSync(join(t.marks, "planted"))
      const planted = () => t.ran("planted")

      // Not installed for the person: a failure saying where Lathe looked and how to install it there.
      const missing = yield* t.host()
      assert.isFalse(planted(), "the planted copy did not run")
      assert.deepStrictEqual(missing.list, [])
      const message = missing.failed[0]?.message ?? ""
      assert.include(message, `looked in ${join(t.config, "node_modules")}`)
      assert.include(message, `cd ${t.config} && npm i lathe-plugin-x`)
      assert.include(message, "never loaded for your own config")

      // Installed in the config folder: that copy loads; the planted one still never runs.
      t.install(t.config, "lathe-plugin-x", "users-copy")
      const loaded = yield* t.host()
      assert.deepStrictEqual(
        loaded.list.map((p) => p.name),
        ["lathe-plugin-x"]
      )
      assert.isTrue(t.ran("users-copy"))
      assert.isFalse(planted())
    })
  })

  it.effect("a relative path in the global config is relative to the global config's folder, not the project", () => {
    const t = setup()
    writeFileSync(join(t.root, "mine.mjs"), t.plugin("planted"))
    writeFileSync(join(t.config, "mine.mjs"), t.plugin("users-file"))
    writeFileSync(join(t.config, "lathe.json"), JSON.stringify({ plugin: ["./mine.mjs"] }))
    return Effect.gen(function* () {
      const plugins = yield* t.host()
      assert.deepStrictEqual(
        plugins.list.map((p) => p.name),
        ["mine"]
      )
      assert.isTrue(t.ran("users-file"))
      assert.isFalse(t.ran("planted"))
    })
  })

  it.effect("$LATHE_CONFIG resolves its plugins from its own folder", () => {
    const t = setup()
    const elsewhere = join(t.base, "elsewhere")
    mkdirSync(elsewhere)
    writeFileSync(join(elsewhere, "lathe.json"), JSON.stringify({ plugin: ["./near.mjs", "lathe-plugin-y"] }))
    writeFileSync(join(elsewhere, "near.mjs"), t.plugin("near"))
    t.install(elsewhere, "lathe-plugin-y", "elsewhere-y")
    t.install(t.root, "lathe-plugin-y", "planted-y")
    return Effect.gen(function* () {
      const plugins = yield* t.host({ LATHE_CONFIG: join(elsewhere, "lathe.json") })
      assert.deepStrictEqual(
        plugins.list.map((p) => p.name),
        ["near", "lathe-plugin-y"]
      )
      assert.isTrue(t.ran("near") && t.ran("elsewhere-y"))
      assert.isFalse(t.ran("planted-y"))
    })
  })

  it.effect("a project's plugin key and .lathe/plugins load only once the project is trusted", () => {
    const t = setup()
    t.install(t.root, "project-plugin", "project-package")
    writeFileSync(join(t.root, "lathe.json"), JSON.stringify({ plugin: ["project-plugin", "./local.mjs"] }))
    writeFileSync(join(t.root, "local.mjs"), t.plugin("project-file"))
    mkdirSync(join(t.root, ".lathe", "plugins"), { recursive: true })
    writeFileSync(join(t.root, ".lathe", "plugins", "folder.mjs"), t.plugin("project-folder"))
    return Effect.gen(function* () {
      const untrusted = yield* t.host()
      assert.deepStrictEqual(untrusted.list, [])
      assert.deepStrictEqual(untrusted.failed, [])
      for (const mark of ["project-package", "project-file", "project-folder"]) assert.isFalse(t.ran(mark), mark)
      yield* t.trust
      const trusted = yield* t.host()
      assert.deepStrictEqual(
        trusted.list.map((p) => p.name),
        ["project-plugin", "local", "folder"]
      )
      for (const mark of ["project-package", "project-file", "project-folder"]) assert.isTrue(t.ran(mark), mark)
    })
  })

  it("a config entry is attributed to the last trusted file that declares it; untrusted files never count", () => {
    const t = setup()
    const global = join(t.config, "lathe.json")
    const project = join(t.root, "lathe.json")
    writeFileSync(global, JSON.stringify({ plugin: ["a", ["b", {}]] }))
    writeFileSync(project, JSON.stringify({ plugin: ["a"] }))
    const refs = (trusted: boolean) =>
      pluginReferences(["a", "b", "c"], {
        root: t.root,
        config: t.config,
        sources: [
          { file: global, scope: "global", trusted: true },
          { file: project, scope: "project", trusted }
        ]
      }).map((r) => [r.spec, r.scope, r.base])
    assert.deepStrictEqual(refs(false), [
      ["a", "user", t.config],
      ["b", "user", t.config],
      ["c", "user", t.config]
    ])
    assert.deepStrictEqual(refs(true)[0], ["a", "project", t.root])
  })
})
