import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { assert, describe, it, onTestFinished } from "vitest"

/** The shape of `scripts/bundle.mjs`'s export (a plain .mjs script, so typed here). */
interface BundleScript {
  readonly withNamespaceLiterals: (source: string, name?: string) => string
}

interface Namespaces {
  readonly keys: Array<string>
  readonly before: Array<unknown>
  readonly after: Array<unknown>
  readonly dynamic: Record<string, unknown>
}

// The run build's namespace objects (`__export`) are rewritten into object literals with getters: the same names, the
// same live bindings, for minified and readable esbuild output alike.
describe("the run build's namespace objects as literals", () => {
  it("keeps every name and live binding of esbuild's namespaces, minified or not", async () => {
    const { build } = await import("esbuild")
    const script = fileURLToPath(new URL("../scripts/bundle.mjs", import.meta.url))
    const { withNamespaceLiterals } = (await import(script)) as BundleScript
    const dir = mkdtempSync(join(tmpdir(), "lathe-namespaces-"))
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }))
    writeFileSync(
      join(dir, "counter.mjs"),
      "export let count = 0\nexport const bump = () => { count++ }\nexport default 'the default'\n" +
        "const odd = 1\nexport { odd as 'odd-name' }\n"
    )
    writeFileSync(join(dir, "late.mjs"), "export const late = 'loaded on demand'\n")
    writeFileSync(
      join(dir, "entry.mjs"),
      "import * as counter from './counter.mjs'\n" +
        "const read = (ns) => [ns.count, ns.default, ns['odd-name']]\n" +
        "export const run = async () => {\n" +
        "  const before = read(counter)\n  counter.bump()\n  const after = read(counter)\n" +
        "  return { keys: Object.keys(counter).sort(), before, after, dynamic: { ...(await import('./late.mjs')) } }\n" +
        "}\n"
    )
    for (const minify of [false, true]) {
      const result = await build({
        entryPoints: [join(dir, "entry.mjs")],
        bundle: true,
        format: "cjs",
        platform: "node",
        minify,
        write: false,
        logLevel: "silent"
      })
      const source = result.outputFiles[0]?.text ?? ""
      const rewritten = withNamespaceLiterals(source)
      assert.notStrictEqual(rewritten, source)
      assert.include(rewritten, "get count(){return ")
      const file = join(dir, `out-${minify}.cjs`)
      writeFileSync(file, rewritten)
      const { run } = createRequire(import.meta.url)(file) as { run: () => Promise<Namespaces> }
      const out = await run()
      assert.deepStrictEqual(out.keys, ["bump", "count", "default", "odd-name"])
      assert.deepStrictEqual(out.before, [0, "the default", 1])
      assert.deepStrictEqual(out.after, [1, "the default", 1], "a namespace reads the binding as it is now")
      assert.deepStrictEqual(out.dynamic, { late: "loaded on demand" })
    }
  }, 60_000)

  it("stops the build when esbuild prints its helper otherwise", async () => {
    const script = fileURLToPath(new URL("../scripts/bundle.mjs", import.meta.url))
    const { withNamespaceLiterals } = (await import(script)) as BundleScript
    assert.throws(() => withNamespaceLiterals("var x = {};"), /__export helper not found/)
  })
})
