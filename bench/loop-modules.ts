/**
 * Which bundled modules `lathe run` evaluates before its first model request, and what each costs: a companion to
 * `bench/loop.ts` for finding what to make lazy.
 *
 * Builds the CLI as it ships (the CommonJS run build, loaded with its V8 code cache) but unminified, into
 * `packages/cli/dist/modules/`, then instruments `run/run.cjs`: a mark at each module esbuild hoisted to the top level,
 * and a timer around each lazily initialised one (esbuild's `__esm` and `__commonJS` wrappers). Time between two
 * events goes to the module being evaluated (exclusive time: a nested initialisation counts for itself), until the
 * first `http.request` leaves. It then runs the `bench/loop.ts` session several times (the first only writes the
 * code cache) and prints the evaluation time before the first request by package and by module, as means over the
 * runs with their spread. A garbage collection lands in whichever module happens to allocate: a module with a large
 * spread is usually one that caught a scavenge, not an expensive one. Read every figure as an upper bound on what
 * making that module lazy would save: it includes the first execution of the library code the module calls (cold
 * inline caches), which moves to the next caller (config's zod schemas measured 6.7 ms; building them lazily saved
 * ~1 ms of the first request and cost ×1.07 on the step gap). Only an A/B on `bench/loop.ts` tells what a change saves.
 *
 * The unminified file is twice the size of the shipped one; the first stack trace of the process (effect's `Utils.js`
 * probes one at load) makes V8 find the line ends of the whole script, so that module's figure is inflated here.
 *
 *   npx tsx --conditions=@lathe/source bench/loop-modules.ts
 *   LATHE_MODULES_RUNS=9 LATHE_MODULES_TOP=60 npx tsx --conditions=@lathe/source bench/loop-modules.ts
 *   LATHE_PROFILE_REPO=/path/to/big/repo npx tsx --conditions=@lathe/source bench/loop-modules.ts
 */
import { execFileSync, spawn } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { startScriptedServer } from "@lathe/core/testing"
import { commitAll, sessionEnv, sessionScript, writeSessionFiles } from "./loop-session.js"

const STEPS = 20
/** Measured runs after the one that writes the code cache (`LATHE_MODULES_RUNS`, default 5). */
const RUNS = Number(process.env.LATHE_MODULES_RUNS ?? 5)
/** How many modules the report lists (`LATHE_MODULES_TOP`, default 40). */
const TOP = Number(process.env.LATHE_MODULES_TOP ?? 40)
/** An existing git repository to run in (the session's files are written into it), as for `bench/loop-profile.ts`. */
const givenRepo = process.env.LATHE_PROFILE_REPO || undefined
const cli = fileURLToPath(new URL("../packages/cli/", import.meta.url))
const outdir = join(cli, "dist/modules")

/** What one instrumented run writes at exit: exclusive ms per module, and when the first request left. */
interface Times {
  readonly exclusive: ReadonlyArray<readonly [string, number]>
  readonly request: number
}

// Runs first in the script: the bookkeeping, and a hook on `http.request` (model requests go through `node:http`,
// looked up when called) that stops the clock when the first request leaves.
const prelude = (timesDir: string) => `
var __benchNow = performance.now.bind(performance), __benchStack = ["(bundle prelude)"], __benchTime = new Map(),
  __benchLast = __benchNow(), __benchRequest = 0;
function __benchTick() {
  const now = __benchNow();
  if (!__benchRequest) { const at = __benchStack[__benchStack.length - 1]; __benchTime.set(at, (__benchTime.get(at) ?? 0) + now - __benchLast) }
  __benchLast = now;
}
function __benchTop(name) { __benchTick(); __benchStack[0] = name }
function __benchEnter(name) { __benchTick(); __benchStack.push(name) }
function __benchLeave() { __benchTick(); __benchStack.pop() }
{
  const http = require("node:http"), request = http.request;
  http.request = function (...args) { if (!__benchRequest) { __benchTick(); __benchRequest = __benchLast } return request.apply(this, args) };
}
process.on("exit", () => require("node:fs").writeFileSync(${JSON.stringify(timesDir)} + "/" + process.pid + ".json",
  JSON.stringify({ exclusive: [...__benchTime], request: __benchRequest })));
`

/** esbuild's wrappers for lazily initialised modules, as it prints them unminified; the bench fails if they change. */
const wrappers = [
  {
    from: "    return fn && (res = (0, fn[__getOwnPropNames(fn)[0]])(fn = 0)), res;",
    to: "    if (!fn) return res; const __name = __getOwnPropNames(fn)[0]; __benchEnter(__name); try { return (res = (0, fn[__name])(fn = 0)), res } finally { __benchLeave() }"
  },
  {
    from: "    return mod || (0, cb[__getOwnPropNames(cb)[0]])((mod = { exports: {} }).exports, mod), mod.exports;",
    to: "    if (mod) return mod.exports; const __name = __getOwnPropNames(cb)[0]; __benchEnter(__name); try { (0, cb[__name])((mod = { exports: {} }).exports, mod); return mod.exports } finally { __benchLeave() }"
  }
]

/** Where the time spent defining lazily initialised modules' wrappers goes (their evaluation is timed apart). */
const LAZY_DEFINITIONS = "(definitions of lazily initialised modules)"

/**
 * Whether the module whose path comment precedes `lines[from]` is lazily initialised: its first statement at the top
 * level, after the function declarations and bare `var a, b;` that esbuild hoists out of the wrapper, defines it.
 */
const definesWrapper = (lines: ReadonlyArray<string>, from: number): boolean => {
  for (let i = from; i < lines.length; i++) {
    const line = lines[i] ?? ""
    if (line === "" || /^[\s}]/.test(line) || /^(?:async )?function\*? /.test(line) || /^var [\w$, ]+;$/.test(line))
      continue
    return /^var [\w$]+ = __(?:esm|commonJS)\(/.test(line)
  }
  return false
}

/** The instrumented source of an unminified run build. */
const instrument = (source: string, timesDir: string): string => {
  const lines = source.split("\n")
  const out: Array<string> = []
  let preluded = false
  const seen = new Set<string>()
  for (const [index, line] of lines.entries()) {
    // esbuild renames helpers' parameters when they clash (fn → fn2 …): match on the shape, keep the names.
    const wrapper = wrappers.find((w) => line.replace(/\b(fn|cb|res|mod)\d+\b/g, "$1") === w.from)
    if (wrapper) {
      const names = [...line.matchAll(/\b(fn|cb|res|mod)(\d+)\b/g)]
      let to = wrapper.to
      for (const [, base, digits] of names) to = to.replace(new RegExp(`\\b${base}\\b`, "g"), `${base}${digits}`)
      out.push(to)
      seen.add(wrapper.from)
      continue
    }
    if (!preluded && line.startsWith("var __create = ")) {
      out.push(prelude(timesDir))
      preluded = true
    }
    out.push(line)
    // A module hoisted to the top level starts at its path comment (column 0). A lazily initialised one is timed by
    // its wrapper: its comment only precedes the wrapper's definition, which is not the module's evaluation (before,
    // defining the wrappers of never-loaded packages such as yaml showed as their evaluation).
    // Paths are relative to the CLI package: `src/…`, `../core/src/…`, `../../plugins/…`, `../../node_modules/…`.
    const path = /^\/\/ ((?:\.\.\/)*[\w@.-]+\/\S+\.(?:[cm]?js|ts|tsx|json))$/.exec(line)?.[1]
    if (path === undefined) continue
    const wrapped = definesWrapper(lines, index + 1)
    out.push(`__benchTop(${JSON.stringify(wrapped ? LAZY_DEFINITIONS : path)});`)
  }
  if (!preluded || seen.size !== wrappers.length)
    throw new Error("run.cjs does not have the shape this bench instruments (esbuild's helpers changed?)")
  // The run build is its own CommonJS wrapper (`RUN_WRAPPER_OPEN` in scripts/bundle.mjs): the mark goes inside it.
  const close = out.findLastIndex((line) => line !== "")
  if (out[0]?.startsWith("(function (exports, require, module, __filename, __dirname) {") && out[close] === "})")
    out.splice(close, 0, '__benchTop("(after the top level)");')
  else out.push('__benchTop("(after the top level)");')
  return out.join("\n")
}

const session = async (lathe: string, repo: string, codeCache: string) => {
  const server = await startScriptedServer(sessionScript(STEPS))
  const home = mkdtempSync(join(tmpdir(), "lathe-modules-home-"))
  const child = spawn(process.execPath, [lathe, "run", "--format", "json", "--yes", "read the files"], {
    cwd: repo,
    env: {
      ...sessionEnv(home, server.url, join(tmpdir(), "lathe-modules-compile-cache")),
      LATHE_CODE_CACHE: codeCache
    },
    stdio: ["ignore", "ignore", "inherit"]
  })
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve))
  await server.close()
  rmSync(home, { recursive: true, force: true })
  if (code !== 0 || server.requests.length !== STEPS) throw new Error(`run failed: code ${code}`)
}

/** The package a bundled module path belongs to (paths as esbuild prints them, relative to the CLI package). */
const packageOf = (path: string): string => {
  const dependency = /node_modules\/((@[^/]+\/)?[^/]+)/.exec(path)?.[1]
  if (dependency) return dependency
  const own = /^(?:\.\.\/)*(?:packages\/|plugins\/)?([a-z-]+)\/src\//.exec(path)?.[1]
  if (own) return `@lathe/${own}`
  return path.startsWith("src/") ? "@lathe/cli" : path
}

const stats = (values: ReadonlyArray<number>, runs: number) => {
  const all = [...values, ...Array.from({ length: runs - values.length }, () => 0)]
  const mean = all.reduce((sum, v) => sum + v, 0) / runs
  const spread = Math.sqrt(all.reduce((sum, v) => sum + (v - mean) ** 2, 0) / runs)
  return { mean, spread }
}

const main = async () => {
  execFileSync(process.execPath, [join(cli, "scripts/bundle.mjs")], {
    env: { ...process.env, LATHE_BUNDLE_MINIFY: "0", LATHE_BUNDLE_OUTDIR: "dist/modules" },
    cwd: cli,
    stdio: ["ignore", "ignore", "inherit"]
  })
  const timesDir = mkdtempSync(join(tmpdir(), "lathe-modules-times-"))
  const codeCache = mkdtempSync(join(tmpdir(), "lathe-modules-code-cache-"))
  const runFile = join(outdir, "run/run.cjs")
  writeFileSync(runFile, instrument(readFileSync(runFile, "utf8"), timesDir))
  const repo = givenRepo ?? mkdtempSync(join(tmpdir(), "lathe-modules-repo-"))
  writeSessionFiles(repo, STEPS)
  if (givenRepo === undefined) {
    commitAll(repo)
  }
  try {
    const lathe = join(outdir, "lathe.js")
    await session(lathe, repo, codeCache) // writes the code cache, as the first run after an install does
    for (const file of readdirSync(timesDir)) rmSync(join(timesDir, file))
    for (let i = 0; i < RUNS; i++) await session(lathe, repo, codeCache)
    const runs = readdirSync(timesDir).map((file) => JSON.parse(readFileSync(join(timesDir, file), "utf8")) as Times)
    const byModule = new Map<string, Array<number>>()
    const byPackage = new Map<string, Array<number>>()
    const totals: Array<number> = []
    for (const run of runs) {
      const packages = new Map<string, number>()
      let total = 0
      for (const [path, ms] of run.exclusive) {
        if (path.startsWith("(after")) continue
        byModule.set(path, [...(byModule.get(path) ?? []), ms])
        packages.set(packageOf(path), (packages.get(packageOf(path)) ?? 0) + ms)
        total += ms
      }
      for (const [name, ms] of packages) byPackage.set(name, [...(byPackage.get(name) ?? []), ms])
      totals.push(total)
    }
    const n = runs.length
    const row = (name: string, values: ReadonlyArray<number>) => {
      const { mean, spread } = stats(values, n)
      return `  ${mean.toFixed(2).padStart(7)} ms ±${spread.toFixed(2).padStart(5)}  ${name.replace(/^(\.\.\/)+/, "")}`
    }
    const sorted = (map: Map<string, Array<number>>) =>
      [...map].sort((a, b) => stats(b[1], n).mean - stats(a[1], n).mean)
    const total = stats(totals, n)
    const request = stats(
      runs.map((run) => run.request),
      n
    )
    console.log(
      `module evaluation before the first request: ${total.mean.toFixed(1)} ms ±${total.spread.toFixed(1)} ` +
        `(${n} runs, ${byModule.size} modules; the request left ${request.mean.toFixed(0)} ms after the process started)`
    )
    console.log("by package:")
    for (const [name, values] of sorted(byPackage).slice(0, 20)) console.log(row(name, values))
    console.log(`by module (top ${TOP}):`)
    for (const [name, values] of sorted(byModule).slice(0, TOP)) console.log(row(name, values))
  } finally {
    rmSync(timesDir, { recursive: true, force: true })
    rmSync(codeCache, { recursive: true, force: true })
    if (givenRepo === undefined) rmSync(repo, { recursive: true, force: true })
    rmSync(outdir, { recursive: true, force: true })
  }
}

await main()
