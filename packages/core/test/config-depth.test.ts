/**
 * Config nesting depth: a file nested 200,000 deep crashed every run with a stack overflow and no file named. It is
 * now a `ConfigError` that names the file and the place, found by one linear scan before anything recurses.
 */
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { parse } from "jsonc-parser"
import { Config, ConfigError } from "../src/config/config.js"
import { MAX_CONFIG_DEPTH, parseJsonc, tooDeepAt } from "../src/config/config-load.js"
import { Paths } from "../src/config/paths.js"

const DEEP = 200_000
const deepArray = `{"instructions": ${"[".repeat(DEEP)}${"]".repeat(DEEP)}}`

describe("config nesting depth", () => {
  it("the payload bites without the check: the JSONC parser overflows the stack", () => {
    assert.throws(() => parse(deepArray, [], { allowTrailingComma: true }), RangeError)
  })

  it.effect("a file nested 200,000 deep is an error naming the file, line and column", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(parseJsonc("/repo/lathe.json", deepArray))
      assert.instanceOf(error, ConfigError)
      assert.strictEqual(error.file, "/repo/lathe.json")
      assert.strictEqual(error.reason, "InvalidJson")
      assert.match(error.message, /^\/repo\/lathe\.json:1:\d+: objects and arrays are nested more than 64 levels/)
    })
  )

  it("brackets in strings and comments do not count; the limit itself is allowed", () => {
    const atLimit = `${"[".repeat(MAX_CONFIG_DEPTH)}${"]".repeat(MAX_CONFIG_DEPTH)}`
    assert.isUndefined(tooDeepAt(atLimit, MAX_CONFIG_DEPTH))
    assert.strictEqual(tooDeepAt(`[${atLimit}]`, MAX_CONFIG_DEPTH), MAX_CONFIG_DEPTH)
    const noisy = `{"a": "${"[{".repeat(500)}\\"[[", // ${"[".repeat(500)}\n /* ${"{".repeat(500)} */ "b": [1]}`
    assert.isUndefined(tooDeepAt(noisy, MAX_CONFIG_DEPTH))
    assert.deepStrictEqual(parse(noisy, [], { allowTrailingComma: true }).b, [1])
  })

  it.effect("a deeply nested project lathe.json fails loading with the file named", () => {
    const base = realpathSync(mkdtempSync(join(tmpdir(), "lathe-config-depth-")))
    for (const dir of ["project", "global", "data"]) mkdirSync(join(base, dir))
    const file = join(base, "project", "lathe.json")
    writeFileSync(file, deepArray)
    const paths = Paths.layerTest(join(base, "project"), {
      config: join(base, "global"),
      data: join(base, "data"),
      home: base
    })
    return Effect.gen(function* () {
      const load = Effect.gen(function* () {
        return yield* Config
      }).pipe(Effect.provide(Config.layerWith({}).pipe(Layer.provide(paths))))
      const error = yield* Effect.flip(load)
      assert.strictEqual(error.file, file)
      assert.include(error.message, `${file}:1:`)
      assert.include(error.message, "nested more than 64 levels")
    })
  })
})
