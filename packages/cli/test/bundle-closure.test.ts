import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import type { Metafile } from "esbuild"
import { assert, describe, it, onTestFinished } from "vitest"

/** The shape of `scripts/bundle.mjs`'s export (a plain .mjs script, so typed here). */
interface BundleScript {
  readonly mainBuildOptions: (outdir: string) => object
}

/** Packages none of which `lathe --version` or `lathe --help` may load: each costs milliseconds to evaluate. */
const HEAVY = ["effect", "@effect", "zod", "ai", "@ai-sdk", "react", "ink", "marked", "highlight.js"]

/**
 * What `lathe --version` and `lathe --help` load, minified: `lathe.js`, the launch chunk, the command table, and their
 * static imports. About 20 KiB now; the effect chunk they once loaded was some 900 KiB more.
 */
const MAX_BYTES = 64 * 1024

/** The package a bundled input belongs to (`…/node_modules/@scope/name/…` → `@scope/name`), or undefined for ours. */
const packageOf = (input: string): string | undefined => {
  const parts = input.split("node_modules/")
  if (parts.length < 2) return undefined
  const [first = "", second = ""] = (parts.at(-1) ?? "").split("/")
  return first.startsWith("@") ? `${first}/${second}` : first
}

/**
 * Node built-ins `lathe --version` and `lathe --help` may not load: `child_process` brings `net`, `dgram` and Node's
 * streams (~12 M instructions); `v8` brings the streams too (~6 M). The start-up git prefetch is imported only for a
 * run, and the young generation's hold (young-heap.ts) takes `v8` when it first needs it.
 */
const HEAVY_BUILTINS = ["node:child_process", "child_process", "node:v8", "v8"]

/**
 * Built-ins whose ES module namespace loads far more than the module (`node:fs` reads `fs.promises` and the stream
 * classes, `node:process` builds stdin, stdout and stderr): the bundle takes them as CommonJS
 * (`builtins-without-namespace` in scripts/bundle.mjs), so no output may import them as ES modules.
 */
const NAMESPACE_HEAVY = ["node:fs", "fs", "node:process", "process", "node:util", "util"]

/** The outputs reached from `roots` by static `import` statements only (what loading them evaluates). */
const staticClosure = (metafile: Metafile, roots: ReadonlyArray<string>): ReadonlyArray<string> => {
  const reached = new Set<string>()
  const pending = [...roots]
  while (pending.length > 0) {
    const file = pending.pop()
    if (file === undefined || reached.has(file)) continue
    reached.add(file)
    for (const imported of metafile.outputs[file]?.imports ?? [])
      if (!imported.external && imported.kind === "import-statement") pending.push(imported.path)
  }
  return [...reached]
}

// Every `lathe` start loads `lathe.js`, the launch chunk and their static imports before it looks at its arguments;
// `--version` and `--help` then load the command table (`main.ts`) and nothing else. Effect (2 MiB) once came along
// through one error class in the start-up git prefetch's modules: `--version` cost 2.8 times its instructions.
describe("what every lathe start loads before a command is chosen", () => {
  it("holds nothing from effect or another heavy package, and stays small", async () => {
    const { build } = await import("esbuild")
    const cli = fileURLToPath(new URL("..", import.meta.url))
    const script = fileURLToPath(new URL("../scripts/bundle.mjs", import.meta.url))
    const { mainBuildOptions } = (await import(script)) as BundleScript
    const dir = mkdtempSync(join(tmpdir(), "lathe-closure-bundle-"))
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }))
    const result = await build({
      ...mainBuildOptions(join(dir, "out")),
      absWorkingDir: cli,
      minify: true,
      write: false,
      logLevel: "silent"
    })
    const metafile = result.metafile
    assert.isDefined(metafile)
    if (metafile === undefined) return
    const entry = (source: string) => {
      const found = Object.keys(metafile.outputs).filter((file) => metafile.outputs[file]?.entryPoint === source)
      assert.lengthOf(found, 1, `one output for ${source}`)
      return found[0] ?? ""
    }
    const start = staticClosure(metafile, [entry("src/bin.ts"), entry("src/launch.ts")])
    const versionAndHelp = staticClosure(metafile, [...start, entry("src/main.ts")])
    assert.isAbove(start.length, 1, "lathe.js and the launch chunk")
    const inputs = versionAndHelp.flatMap((file) => Object.keys(metafile.outputs[file]?.inputs ?? {}))
    assert.include(inputs, "../core/src/process/launcher-keys.ts", "the closure is read from the real build")
    assert.notInclude(inputs, "../core/src/process/git-prefetch.ts", "the git prefetch loads only for a run")
    const heavy = inputs.filter((input) => HEAVY.includes(packageOf(input) ?? ""))
    assert.deepStrictEqual(heavy, [], "modules from heavy packages before a command is chosen")
    const imported = versionAndHelp.flatMap((file) =>
      (metafile.outputs[file]?.imports ?? [])
        .filter((i) => i.external && i.kind === "import-statement")
        .map((i) => i.path)
    )
    const builtins = imported.filter((path) => HEAVY_BUILTINS.includes(path) || NAMESPACE_HEAVY.includes(path))
    assert.deepStrictEqual(builtins, [], "built-ins that load Node's streams before a command is chosen")
    const bytes = versionAndHelp.reduce((sum, file) => sum + (metafile.outputs[file]?.bytes ?? 0), 0)
    assert.isAtMost(bytes, MAX_BYTES, `lathe --version loads ${bytes} bytes: ${versionAndHelp.join(", ")}`)
  }, 120_000)

  it("imports no built-in as an ES module whose namespace loads more than the module", async () => {
    const { build } = await import("esbuild")
    const cli = fileURLToPath(new URL("..", import.meta.url))
    const script = fileURLToPath(new URL("../scripts/bundle.mjs", import.meta.url))
    const { mainBuildOptions } = (await import(script)) as BundleScript
    const dir = mkdtempSync(join(tmpdir(), "lathe-closure-bundle-"))
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }))
    const result = await build({
      ...mainBuildOptions(join(dir, "out")),
      absWorkingDir: cli,
      write: false,
      logLevel: "silent"
    })
    const metafile = result.metafile
    assert.isDefined(metafile)
    if (metafile === undefined) return
    const esm = Object.entries(metafile.outputs).flatMap(([file, output]) =>
      output.imports
        .filter((i) => i.external && i.kind === "import-statement" && NAMESPACE_HEAVY.includes(i.path))
        .map((i) => `${file}: ${i.path}`)
    )
    assert.deepStrictEqual(esm, [])
    // The main build still uses them: as CommonJS (`process.getBuiltinModule`), read when the code reads a name.
    const text = result.outputFiles.map((file) => file.text).join("\n")
    assert.include(text, 'process.getBuiltinModule("node:fs")')
  }, 120_000)
})
