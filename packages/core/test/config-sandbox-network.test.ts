/**
 * "A sandbox that says why, and a network you can open narrowly": `sandbox.network` takes `true`, `false` or a list
 * of hosts; the person's config (or a trusted project) may open hosts, an untrusted project may not.
 */
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { Config, type ConfigTestInput, trustProject } from "../src/config/config.js"
import { SandboxConfig } from "../src/config/config-schema.js"
import { Paths } from "../src/config/paths.js"

const load = (global: ConfigTestInput, project: ConfigTestInput, trust = false) => {
  const base = realpathSync(mkdtempSync(join(tmpdir(), "lathe-sandbox-net-")))
  const root = join(base, "repo")
  mkdirSync(join(base, "global"), { recursive: true })
  mkdirSync(root)
  writeFileSync(join(base, "global", "lathe.json"), JSON.stringify(global))
  writeFileSync(join(root, "lathe.json"), JSON.stringify(project))
  const paths = Paths.layerTest(root, { config: join(base, "global"), data: join(base, "data"), home: base })
  return Effect.gen(function* () {
    if (trust)
      yield* trustProject(
        yield* Effect.gen(function* () {
          return yield* Paths
        }).pipe(Effect.provide(paths))
      )
    return yield* Effect.gen(function* () {
      return yield* Config
    }).pipe(Effect.provide(Config.layerWith({}).pipe(Layer.provide(paths))))
  })
}

describe("sandbox.network", () => {
  it("takes true, false or a list of hosts, and refuses an entry that is not a host with an example", () => {
    assert.deepStrictEqual(SandboxConfig.parse({ network: ["registry.npmjs.org", "*.github.com", "127.0.0.1:8080"] }), {
      network: ["registry.npmjs.org", "*.github.com", "127.0.0.1:8080"]
    })
    assert.deepStrictEqual(SandboxConfig.parse({ network: ["[::1]:8080"] }), { network: ["[::1]:8080"] })
  })

  it.effect("the loader refuses an entry that is not a host, naming the file, the key and what to write", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(load({ sandbox: { network: ["https://registry.npmjs.org/"] } }, {}))
      assert.match(error.message, /global[\\/]lathe\.json:\d+:\d+: sandbox\.network/)
      assert.match(error.message, /registry\.npmjs\.org/)
    })
  )

  it.effect("the person's list applies; an untrusted project's list is dropped with a notice, its false applies", () =>
    Effect.gen(function* () {
      const opened = yield* load(
        { sandbox: { network: ["registry.npmjs.org"] } },
        { sandbox: { network: ["*.evil.test"] } }
      )
      assert.deepStrictEqual(opened.info.sandbox, { network: ["registry.npmjs.org"] })
      assert.match(opened.notices[0] ?? "", /sandbox\.network \["\*\.evil\.test"\]/)
      const closed = yield* load({ sandbox: { network: ["registry.npmjs.org"] } }, { sandbox: { network: false } })
      assert.deepStrictEqual(closed.info.sandbox, { network: false })
      const fromNothing = yield* load({}, { sandbox: { network: ["registry.npmjs.org"] } })
      assert.isUndefined(fromNothing.info.sandbox?.network)
    })
  )

  it.effect("a trusted project's list applies", () =>
    Effect.gen(function* () {
      const config = yield* load({}, { sandbox: { network: ["registry.npmjs.org"] } }, true)
      assert.deepStrictEqual(config.info.sandbox, { network: ["registry.npmjs.org"] })
    })
  )
})
