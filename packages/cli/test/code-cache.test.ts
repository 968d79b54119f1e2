import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "vitest"
import { codeCacheDir, fnv1a64, loadWithCodeCache } from "../src/code-cache.js"

describe("code cache", () => {
  it("lives in the user's cache dir unless told otherwise, and can be turned off", () => {
    assert.strictEqual(codeCacheDir({ HOME: "/h" }), "/h/.cache/lathe/code-cache")
    assert.strictEqual(codeCacheDir({ HOME: "/h", XDG_CACHE_HOME: "/x" }), "/x/lathe/code-cache")
    assert.strictEqual(codeCacheDir({ HOME: "/h", XDG_CACHE_HOME: "relative" }), "/h/.cache/lathe/code-cache")
    assert.strictEqual(codeCacheDir({ HOME: "/h", NODE_COMPILE_CACHE: "/n" }), "/n/lathe")
    assert.strictEqual(codeCacheDir({ HOME: "/h", LATHE_CODE_CACHE: "/c" }), "/c")
    assert.isUndefined(codeCacheDir({ HOME: "/h", LATHE_CODE_CACHE: "off" }))
  })

  it("names caches by a 64-bit FNV-1a hash (the published test vectors)", () => {
    assert.strictEqual(fnv1a64(""), "cbf29ce484222325")
    assert.strictEqual(fnv1a64("a"), "af63dc4c8601ec8c")
    assert.strictEqual(fnv1a64("foobar"), "85944171f73967e8")
  })

  it("runs a CommonJS file as Node would (exports, require, __filename) with import() still available", async () => {
    const dir = mkdtempSync(join(tmpdir(), "lathe-code-cache-"))
    writeFileSync(join(dir, "dep.cjs"), "module.exports = { answer: 42 }\n")
    writeFileSync(join(dir, "esm.mjs"), "export const kind = 'esm'\n")
    const file = join(dir, "main.cjs")
    writeFileSync(
      file,
      "const dep = require('./dep.cjs')\n" +
        "exports.answer = dep.answer\nexports.where = __filename\nexports.dir = __dirname\n" +
        "exports.load = () => import('./esm.mjs')\n"
    )
    const loaded = loadWithCodeCache(file, join(dir, "cache"))
    assert.strictEqual(loaded.exports.answer, 42)
    assert.strictEqual(loaded.exports.where, file)
    assert.strictEqual(loaded.exports.dir, dir)
    const load = loaded.exports.load as () => Promise<{ kind: string }>
    assert.strictEqual((await load()).kind, "esm")
    assert.isFunction(loaded.keepCache)
  })
})
