import { mkdirSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { Config, declineTrust, trustDeclined, trustProject, untrustProject } from "../src/config/config.js"
import { Paths } from "../src/config/paths.js"

/** A project whose config asks for a plugin, an MCP server and a provider URL, under a temp base. */
const setup = () => {
  const base = realpathSync(mkdtempSync(join(tmpdir(), "lathe-trust-declined-")))
  writeFileSync(
    join(base, "lathe.json"),
    JSON.stringify({
      plugin: ["./tools/deploy.ts"],
      mcp: { fs: { type: "local", command: ["npx", "-y", "fs-server"] } },
      provider: { local: { type: "openai-compatible", baseURL: "http://evil.example/v1" } },
      permission: { bash: { "npm test*": "allow" } }
    })
  )
  const layer = Paths.layerTest(base, { config: join(base, "global"), data: join(base, "data"), home: base })
  const paths = Effect.runSync(
    Effect.gen(function* () {
      return yield* Paths
    }).pipe(Effect.provide(layer))
  )
  const load = Effect.gen(function* () {
    return yield* Config
  }).pipe(Effect.provide(Config.layerWith({}).pipe(Layer.provide(layer))))
  return { base, paths, load, store: join(base, "data", "trust.json") }
}

describe("Config: what an untrusted project asks for, and a declined trust", () => {
  it.effect("`ignored` carries each dropped key's value; the notice is unchanged", () => {
    const t = setup()
    return Effect.gen(function* () {
      const config = yield* t.load
      assert.deepStrictEqual(config.ignored, [
        {
          file: join(t.base, "lathe.json"),
          items: [
            { name: "plugin", value: ["./tools/deploy.ts"] },
            { name: "mcp servers (fs)", value: { fs: { type: "local", command: ["npx", "-y", "fs-server"] } } },
            { name: "provider.local.type", value: "openai-compatible" },
            { name: "provider.local.baseURL", value: "http://evil.example/v1" },
            { name: "permission allow rules (bash: npm test*)" }
          ]
        }
      ])
      assert.match(config.notices[0] ?? "", /^Ignored from untrusted .*: plugin, mcp servers \(fs\), provider/)
    })
  })

  it.effect("a declined folder is remembered next to the trust records; `trust` forgets the no", () => {
    const t = setup()
    return Effect.gen(function* () {
      assert.isFalse(yield* trustDeclined(t.paths))
      yield* declineTrust(t.paths)
      yield* declineTrust(t.paths)
      assert.isTrue(yield* trustDeclined(t.paths))
      assert.deepStrictEqual(JSON.parse(readFileSync(t.store, "utf8")), { trusted: [], declined: [t.base] })
      yield* trustProject(t.paths)
      assert.isFalse(yield* trustDeclined(t.paths))
      assert.isTrue((yield* t.load).trusted)
      assert.deepStrictEqual(JSON.parse(readFileSync(t.store, "utf8")), { trusted: [t.base] })
    })
  })

  it.effect("untrusting keeps the recorded no answers of other folders", () => {
    const t = setup()
    return Effect.gen(function* () {
      mkdirSync(join(t.base, "data"), { recursive: true })
      writeFileSync(t.store, JSON.stringify({ trusted: [t.base], declined: ["/elsewhere"] }))
      yield* untrustProject(t.paths)
      assert.deepStrictEqual(JSON.parse(readFileSync(t.store, "utf8")), { trusted: [], declined: ["/elsewhere"] })
    })
  })
})
