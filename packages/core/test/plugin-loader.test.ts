import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { definePlugin } from "@lathe/plugin"
import { Effect, Layer } from "effect"
import { Config } from "../src/config/config.js"
import type { PluginSpec } from "../src/config/config-schema.js"
import { Paths } from "../src/config/paths.js"
import { Bus } from "../src/contracts/bus.js"
import { importPlugins, pluginReferences, sharePluginModules } from "../src/plugin-host/plugin-loader.js"
import { Plugins } from "../src/plugin-host/plugins.js"
import { SessionStore } from "../src/store/session-store.js"

const project = () => {
  const root = mkdtempSync(join(tmpdir(), "lathe-plugins-"))
  const config = join(root, ".config-dir")
  mkdirSync(join(root, ".lathe", "plugins"), { recursive: true })
  mkdirSync(join(config, "plugins"), { recursive: true })
  return { root, config }
}

// Plugins here import nothing: sharing @lathe/core with plugin files is exercised end to end in the CLI's tests.
const plainPlugin = (name: string) =>
  `export default { setup: async (ctx) => ({ "system.transform": async (_i, o) => { o.system.push("from ${name} " + JSON.stringify(ctx.options)) } }) }\n`

describe("plugin loading", () => {
  it("finds config entries first, then .lathe/plugins, then the config dir's plugins, each folder by name", () => {
    const dirs = project()
    writeFileSync(join(dirs.root, ".lathe", "plugins", "b.mjs"), "")
    writeFileSync(join(dirs.root, ".lathe", "plugins", "a.ts"), "")
    writeFileSync(join(dirs.root, ".lathe", "plugins", "types.d.ts"), "")
    writeFileSync(join(dirs.root, ".lathe", "plugins", "notes.md"), "")
    writeFileSync(join(dirs.config, "plugins", "g.js"), "")
    const refs = pluginReferences(["@acme/x", ["./local.mjs", { level: 2 }]], dirs)
    assert.deepStrictEqual(
      refs.map((r) => [r.spec.replace(dirs.root, "<root>"), r.options]),
      [
        ["@acme/x", {}],
        ["./local.mjs", { level: 2 }],
        ["<root>/.lathe/plugins/a.ts", {}],
        ["<root>/.lathe/plugins/b.mjs", {}],
        ["<root>/.config-dir/plugins/g.js", {}]
      ]
    )
  })

  it("imports path plugins and installed packages; reports missing ones, syntax errors and bad exports with a fix", async () => {
    const dirs = project()
    writeFileSync(join(dirs.root, "good.mjs"), plainPlugin("good"))
    writeFileSync(join(dirs.root, "broken.mjs"), "export default {\n  setup: async () => ({ oops: ) })\n}\n")
    writeFileSync(join(dirs.root, "nothing.mjs"), "export const x = 1\n")
    const pkg = join(dirs.root, "node_modules", "@acme", "hello")
    mkdirSync(pkg, { recursive: true })
    writeFileSync(
      join(pkg, "package.json"),
      JSON.stringify({ name: "@acme/hello", type: "module", exports: { ".": { import: "./main.mjs" } } })
    )
    writeFileSync(join(pkg, "main.mjs"), plainPlugin("hello"))
    const specs: Array<PluginSpec> = [
      ["./good.mjs", { level: 1 }],
      "@acme/hello",
      "@acme/missing",
      "./broken.mjs",
      "./nothing.mjs",
      "./gone.mjs"
    ]
    // Declared by the (trusted) project's own lathe.json: paths from its root, packages from its node_modules.
    const file = join(dirs.root, "lathe.json")
    writeFileSync(file, JSON.stringify({ plugin: specs }))
    const refs = pluginReferences(specs, { ...dirs, sources: [{ file, scope: "project", trusted: true }] })
    const { entries, failures } = await importPlugins(refs, dirs.config, dirs.root)
    assert.deepStrictEqual(
      entries.map((e) => [e.name, e.options]),
      [
        ["good", { level: 1 }],
        ["@acme/hello", {}]
      ]
    )
    const messages = failures.map((f) => f.message)
    assert.strictEqual(messages.length, 4)
    assert.include(
      messages[0],
      `Plugin "@acme/missing" (@acme/missing (package)) was not loaded: the package @acme/missing is not installed where ${file} can load it from: looked in ${join(dirs.root, "node_modules")}`
    )
    assert.include(messages[0], "Install it in the project (npm i -D @acme/missing)")
    assert.include(messages[1], 'Plugin "broken" (./broken.mjs) was not loaded')
    assert.match(messages[1] ?? "", /broken\.mjs:\d+/)
    assert.include(messages[2], "its default export is not a plugin: export default definePlugin(")
    assert.include(messages[3], `gone.mjs does not exist. Fix the path in ${file}.`)
  })
})

describe("shared modules", () => {
  it("builds the shared namespaces from a loader only when the first plugin file is imported, once", async () => {
    let loads = 0
    sharePluginModules(async () => {
      loads += 1
      return { "lathe-test-shared": { word: "shared-word" } }
    })
    const dirs = project()
    const file = join(dirs.root, "lathe.json")
    // No plugin file to import: the loader is not called.
    const none = await importPlugins([], dirs.config, dirs.root)
    assert.deepStrictEqual([none.entries.length, loads], [0, 0])
    // Under vitest a plugin file's imports go through vite's resolver, not Node's hooks: what the shared namespaces
    // resolve to is exercised end to end (the CLI's plugins.e2e and bundle.e2e tests); here, when they are built.
    writeFileSync(join(dirs.root, "uses.mjs"), plainPlugin("uses"))
    writeFileSync(join(dirs.root, "again.mjs"), plainPlugin("again"))
    writeFileSync(file, JSON.stringify({ plugin: ["./uses.mjs", "./again.mjs"] }))
    const refs = pluginReferences(["./uses.mjs", "./again.mjs"], {
      ...dirs,
      sources: [{ file, scope: "project", trusted: true }]
    })
    const { entries, failures } = await importPlugins(refs, dirs.config, dirs.root)
    assert.deepStrictEqual(failures, [])
    assert.deepStrictEqual(
      entries.map((entry) => entry.name),
      ["uses", "again"]
    )
    assert.strictEqual(loads, 1)
  })
})

describe("Plugins host limits", () => {
  const layer = (plugins: Parameters<typeof Plugins.layer>[0], config = {}) => {
    const root = mkdtempSync(join(tmpdir(), "lathe-host-"))
    return Plugins.layer(plugins).pipe(
      Layer.provideMerge(
        Layer.mergeAll(Paths.layerTest(root), Config.layerTest(config), Bus.layer, SessionStore.memory)
      )
    )
  }

  it.live("a hook past the time limit is reported and skipped; the hooks after it still run", () =>
    Effect.gen(function* () {
      const plugins = yield* Plugins
      const output = yield* plugins.trigger(
        "system.transform",
        { sessionID: "s", agent: "build", model: { providerID: "p", modelID: "m" }, permission: [] },
        { system: [] }
      )
      assert.deepStrictEqual(output.system, ["fast"])
    }).pipe(
      Effect.provide(
        layer(
          [
            definePlugin({
              name: "slow",
              setup: () => ({ "system.transform": () => new Promise<void>(() => {}) })
            }),
            definePlugin({
              name: "fast",
              setup: () => ({
                "system.transform": (_input, out) => {
                  out.system.push("fast")
                }
              })
            })
          ],
          { plugin_timeout_ms: 50 }
        )
      )
    )
  )

  it.effect("a plugin whose setup throws is listed as failed with its source", () =>
    Effect.gen(function* () {
      const plugins = yield* Plugins
      assert.deepStrictEqual(
        plugins.failed.map((f) => f.message),
        ['Plugin "bad" failed in load: no config']
      )
      assert.deepStrictEqual(
        plugins.list.map((p) => p.name),
        []
      )
    }).pipe(
      Effect.provide(
        layer([
          {
            name: "bad",
            source: "./bad.mjs",
            plugin: () => {
              throw new Error("no config")
            }
          }
        ])
      )
    )
  )
})
