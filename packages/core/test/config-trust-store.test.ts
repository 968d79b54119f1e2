import { mkdirSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { Config, isTrusted, trustedFolders, trustProject, untrustProject } from "../src/config/config.js"
import { Paths, type PathsShape } from "../src/config/paths.js"

/** A project with two config files (`lathe.json` and `.lathe/lathe.jsonc`) under a temp base. */
const setup = () => {
  const base = realpathSync(mkdtempSync(join(tmpdir(), "lathe-trust-store-")))
  const root = join(base, "repo")
  mkdirSync(join(root, ".lathe"), { recursive: true })
  writeFileSync(
    join(root, "lathe.json"),
    JSON.stringify({ permission: { bash: { "git *": "allow", "rm *": "deny" } } })
  )
  writeFileSync(
    join(root, ".lathe", "lathe.jsonc"),
    `// agents that would grant themselves more\n${JSON.stringify({
      permission: "allow",
      agent: { plan: { permission: { edit: "allow" } } },
      plugin: ["x"]
    })}`
  )
  const layer = Paths.layerTest(root, { config: join(base, "global"), data: join(base, "data"), home: base })
  const paths = Effect.runSync(
    Effect.gen(function* () {
      return yield* Paths
    }).pipe(Effect.provide(layer))
  )
  const load = Effect.gen(function* () {
    return yield* Config
  }).pipe(Effect.provide(Config.layerWith({}).pipe(Layer.provide(layer))))
  return { base, root, paths, load, store: join(base, "data", "trust.json") }
}

describe("Config trust store and notices", () => {
  it.effect("every file an untrusted project loses from is named in one notice; dropped rules are listed", () => {
    const t = setup()
    return Effect.gen(function* () {
      const config = yield* t.load
      const [notice, ...more] = config.notices
      assert.deepStrictEqual(more, [])
      assert.strictEqual(
        notice,
        `Ignored from untrusted ${join(t.root, "lathe.json")}: permission allow rules (bash: git *); ` +
          `${join(t.root, ".lathe", "lathe.jsonc")}: permission allow rules (*: *), ` +
          `agent.plan.permission allow rules (edit: *), plugin. Run \`lathe trust\` in ${t.root} to trust this folder.`
      )
      assert.deepStrictEqual(config.dropped, [
        { permission: "bash", pattern: "git *", source: join(t.root, "lathe.json") },
        { permission: "*", pattern: "*", source: join(t.root, ".lathe", "lathe.jsonc") },
        { permission: "edit", pattern: "*", source: join(t.root, ".lathe", "lathe.jsonc"), agent: "plan" }
      ])
      assert.deepStrictEqual(
        config.info.permission.map((r) => `${r.permission} ${r.pattern} ${r.action}`),
        ["bash rm * deny"]
      )
    })
  })

  it.effect("untrust removes the project, says which folder above still trusts it, and reverts the config", () => {
    const t = setup()
    return Effect.gen(function* () {
      yield* trustProject(t.paths)
      assert.isTrue((yield* t.load).trusted)
      assert.deepStrictEqual((yield* t.load).dropped, [])
      assert.deepStrictEqual(yield* untrustProject(t.paths), { removed: true, coveredBy: [] })
      assert.isFalse(yield* isTrusted(t.paths))
      assert.strictEqual((yield* t.load).dropped.length, 3)
      assert.deepStrictEqual(yield* untrustProject(t.paths), { removed: false, coveredBy: [] })

      const parent: PathsShape = { ...t.paths, root: t.base }
      yield* trustProject(parent)
      yield* trustProject(t.paths)
      assert.deepStrictEqual(yield* trustedFolders(t.paths), [t.base, t.root])
      assert.deepStrictEqual(yield* untrustProject(t.paths), { removed: true, coveredBy: [t.base] })
      assert.isTrue(yield* isTrusted(t.paths))
      assert.deepStrictEqual(JSON.parse(readFileSync(t.store, "utf8")), { trusted: [t.base] })
    })
  })
})
