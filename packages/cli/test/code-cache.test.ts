import { spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, readdirSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "vitest"
import {
  COMMONJS_WRAPPER_OPEN,
  codeCacheDir,
  fnv1a64,
  frameWithoutPosition,
  INSTALLED_CACHE_DIR,
  loadWithCodeCache,
  withoutPositionsInProbes
} from "../src/code-cache.js"

/**
 * Loads `file` with `loadWithCodeCache(file, cacheDir)` in a Node process of its own, asks for its cache to be kept
 * (written at that process's exit), then runs `print` (with `exports` in scope): the child's result.
 */
const loadInChild = (file: string, cacheDir: string, print: string) =>
  spawnSync(
    process.execPath,
    [
      "--import",
      "tsx",
      "-e",
      `import { loadWithCodeCache } from ${JSON.stringify(join(import.meta.dirname, "../src/code-cache.ts"))}\n` +
        `const { exports, keepCache } = loadWithCodeCache(${JSON.stringify(file)}, ${JSON.stringify(cacheDir)})\n` +
        `keepCache()\n${print}`
    ],
    { encoding: "utf8" }
  )

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

  it("compiles a file that holds its own CommonJS wrapper as it is (the run build), not wrapped a second time", () => {
    const dir = mkdtempSync(join(tmpdir(), "lathe-code-cache-"))
    const file = join(dir, "run.cjs")
    writeFileSync(
      file,
      `${COMMONJS_WRAPPER_OPEN}exports.where = __filename\nexports.answer = require('node:path').sep\n})`
    )
    const loaded = loadWithCodeCache(file, join(dir, "cache"))
    // Wrapped again, the file would be a function expression nobody calls: no exports.
    assert.strictEqual(loaded.exports.where, file)
    assert.strictEqual(loaded.exports.answer, "/")
  })

  it("reads an ASCII source and one with other text alike, with the cache larger or smaller than the source", () => {
    const dir = mkdtempSync(join(tmpdir(), "lathe-code-cache-"))
    const cacheDir = join(dir, "cache")
    const ascii = join(dir, "ascii.cjs")
    // Larger than its cache, and past the size from which Node makes a Latin-1 string external.
    writeFileSync(ascii, `exports.text = "plain \\u00e9"\n${"// padding\n".repeat(120_000)}exports.last = 1\n`)
    const other = join(dir, "other.cjs")
    writeFileSync(other, `exports.text = "café ✓ 字"\nexports.fn = function named() { return "ü" }\n`)
    for (const [file, text] of [
      [ascii, "plain é"],
      [other, "café ✓ 字"]
    ] as const) {
      const first = loadInChild(
        file,
        cacheDir,
        "console.log(JSON.stringify([exports.text, exports.last ?? exports.fn()]))"
      )
      assert.strictEqual(first.status, 0, first.stderr)
      // Again, from the cache the first run wrote.
      const again = loadInChild(
        file,
        cacheDir,
        "console.log(JSON.stringify([exports.text, exports.last ?? exports.fn()]))"
      )
      assert.strictEqual(again.status, 0, again.stderr)
      assert.deepStrictEqual(JSON.parse(again.stdout), JSON.parse(first.stdout))
      assert.strictEqual(JSON.parse(again.stdout)[0], text)
    }
    assert.strictEqual(loadWithCodeCache(other, undefined).exports.text, "café ✓ 字")
  })

  it("loads a side package (./side-<name>.cjs) once, with a cache of its own that keepCache() writes at exit", () => {
    const dir = mkdtempSync(join(tmpdir(), "lathe-code-cache-"))
    const cache = join(dir, "cache")
    writeFileSync(
      join(dir, "side-sdk.cjs"),
      "globalThis.__latheSideLoads = (globalThis.__latheSideLoads ?? 0) + 1\nexports.kind = 'side'\n"
    )
    writeFileSync(join(dir, "vendor-lib.cjs"), "exports.kind = 'vendor'\n")
    const main = join(dir, "main.cjs")
    writeFileSync(
      main,
      "exports.first = require('./side-sdk.cjs')\nexports.again = require('./side-sdk.cjs')\n" +
        "exports.vendor = require('./vendor-lib.cjs')\nexports.cached = Object.keys(require.cache)\n"
    )
    const child = loadInChild(
      main,
      cache,
      "console.log(JSON.stringify({ ...exports, same: exports.first === exports.again, loads: globalThis.__latheSideLoads }))"
    )
    assert.strictEqual(child.status, 0, child.stderr)
    const out = JSON.parse(child.stdout) as {
      first: { kind: string }
      vendor: { kind: string }
      cached: Array<string>
      same: boolean
      loads: number
    }
    assert.strictEqual(out.first.kind, "side")
    assert.isTrue(out.same, "required twice, evaluated once")
    assert.strictEqual(out.loads, 1)
    // Other files go through Node's require (and its module cache), as before.
    assert.strictEqual(out.vendor.kind, "vendor")
    assert.include(out.cached, join(dir, "vendor-lib.cjs"))
    assert.notInclude(out.cached, join(dir, "side-sdk.cjs"))
    const caches = readdirSync(cache).sort()
    assert.strictEqual(caches.length, 2, caches.join(", "))
    assert.match(caches[0] ?? "", /^main\.cjs-.*\.v8cache$/)
    assert.match(caches[1] ?? "", /^side-sdk\.cjs-.*\.v8cache$/)
  })

  it("reads the cache the install wrote beside the build until the user has one, and writes its own when V8 rejects it", () => {
    const dir = mkdtempSync(join(tmpdir(), "lathe-code-cache-"))
    const main = join(dir, "main.cjs")
    writeFileSync(main, "exports.answer = [1, 2, 3].map((n) => n * 2)\n")
    const installed = join(dir, INSTALLED_CACHE_DIR)
    const user = join(dir, "user-cache")
    const load = (cacheDir: string) => {
      const child = loadInChild(main, cacheDir, "console.log(JSON.stringify(exports))")
      assert.strictEqual(child.status, 0, child.stderr)
      assert.deepStrictEqual(JSON.parse(child.stdout), { answer: [2, 4, 6] })
    }
    const files = (folder: string) => (existsSync(folder) ? readdirSync(folder) : [])
    // What bin/warm-cache.js does: a run with the folder beside the build as its cache folder.
    load(installed)
    assert.strictEqual(files(installed).length, 1)
    // The user's first run: the installed cache is accepted, so nothing is copied to the user's folder.
    load(user)
    assert.deepStrictEqual(files(user), [])
    // A cache V8 rejects (another Node wrote it, say): the run compiles and keeps a cache of the user's own.
    writeFileSync(join(installed, files(installed)[0] ?? ""), "not a code cache")
    load(user)
    assert.strictEqual(files(user).length, 1)
    assert.match(files(user)[0] ?? "", /^main\.cjs-.*\.v8cache$/)
  })

  // effect's two load-time probes, as written in effect/dist/Utils.js and internal/effect.js: each reads one stack.
  const probes = () => {
    const limit = Error.stackTraceLimit
    const internal = "~effect/Utils/internal"
    const standard = { [internal]: (body: () => Error) => body() }
    Error.stackTraceLimit = 2
    const utils = standard[internal](() => new Error()).stack ?? ""
    const marker = "~effect/Effect/stackProbe"
    const probe = {
      [marker]: function stackProbe() {
        return new Error()
      }
    }
    Error.stackTraceLimit = 1
    const effect = probe[marker]().stack ?? ""
    Error.stackTraceLimit = limit
    return { utils, effect, decisions: [utils.includes(internal), effect.includes(`[as ${marker}]`)] }
  }
  // A frame with no name is its position alone in V8's text, `<anonymous>` in the probes'.
  const withoutPositions = (stack: string) =>
    stack.replace(/ \(\S*:\d+:\d+\)$/gm, "").replace(/^( {4}at )\S+:\d+:\d+$/gm, "$1<anonymous>")
  // V8's own printing (CallSite's toString), whatever printer the test runner installed for source maps.
  const asV8Prints = <A>(run: () => A): A => {
    const previous = Error.prepareStackTrace
    Error.prepareStackTrace = (error, frames) => `${error}${frames.map((frame) => `\n    at ${frame}`).join("")}`
    try {
      return run()
    } finally {
      Error.prepareStackTrace = previous
    }
  }

  it("answers effect's stack probes as V8's own printing does, without asking V8 for a position", () => {
    const plain = asV8Prints(probes)
    const probed = asV8Prints(() => withoutPositionsInProbes(probes))
    assert.deepStrictEqual(probed.decisions, plain.decisions)
    assert.deepStrictEqual(probed.decisions, [true, true])
    assert.notMatch(probed.utils + probed.effect, /:\d+:\d+/)
    // Frame by frame the same names; the probe text may also name the receiver's type where V8 leaves it out (an
    // arrow function called as a property: its receiver does not count for V8).
    for (const [ours, v8] of [
      [probed.utils, plain.utils],
      [probed.effect, plain.effect]
    ] as const) {
      const theirs = withoutPositions(v8).split("\n")
      for (const [i, line] of ours.split("\n").entries())
        assert.include(line, (theirs[i] ?? "").replace(/^ {4}at /, ""))
    }
  })

  it("prints frames of methods, aliases, constructors and plain functions as V8 does, minus positions", () => {
    // The caller's frame, as a CallSite and as V8 prints it in an error's stack.
    const capture = () => {
      const previous = Error.prepareStackTrace
      Error.prepareStackTrace = (_error, sites) => sites
      const sites = (new Error() as unknown as { stack: Array<NodeJS.CallSite> }).stack
      Error.prepareStackTrace = previous
      const frame = sites[1] as NodeJS.CallSite
      return { frame, printed: `    at ${frame}` }
    }
    class Widget {
      made: ReturnType<typeof capture>
      constructor() {
        this.made = capture()
      }
      method() {
        return capture()
      }
    }
    const holder = {
      alias: function named() {
        return capture()
      },
      plain: () => capture()
    }
    const widget = new Widget()
    const seen = [
      widget.made,
      widget.method(),
      holder.alias(),
      holder.plain(),
      (function lone() {
        return capture()
      })()
    ]
    for (const [i, { frame, printed }] of seen.entries())
      assert.strictEqual(`    at ${frameWithoutPosition(frame)}`, withoutPositions(printed), `frame ${i}`)
    assert.deepStrictEqual(
      seen.map(({ frame }) => frameWithoutPosition(frame)),
      ["new Widget", "Widget.method", "Object.named [as alias]", "Object.plain", "lone"]
    )
  })

  it("leaves every other error's stack as V8 prints it, and restores the stack printer", () => {
    const before = Error.prepareStackTrace
    const stack = withoutPositionsInProbes(() => new Error("real trouble").stack ?? "")
    assert.match(stack, /^Error: real trouble\n {4}at .*:\d+:\d+\)?$/m)
    assert.strictEqual(Error.prepareStackTrace, before)
    assert.throws(
      () =>
        withoutPositionsInProbes(() => {
          throw new Error("thrown")
        }),
      "thrown"
    )
    assert.strictEqual(Error.prepareStackTrace, before)
  })
})
