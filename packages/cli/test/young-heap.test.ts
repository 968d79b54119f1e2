import { execFileSync, spawn } from "node:child_process"
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { startScriptedServer } from "@lathe/core/testing"
import { assert, describe, it, onTestFinished } from "vitest"
import { sandbox } from "./helpers.js"

// The bundled CLI (what the published `lathe` and the single executable run); Nx builds it before this package's tests.
const bundle = fileURLToPath(new URL("../dist/bundle/lathe.js", import.meta.url))
const MIB = 1024 * 1024

/**
 * Preloaded into the launcher's process: at exit (after `lathe --version` ran, so after start-up), it keeps some
 * 40 MiB of small objects alive (survivors make V8 grow its young generation) and reports the largest size the
 * young generation reached.
 */
const PROBE = `
import v8 from "node:v8"
const newSpace = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === "new_space").space_size
process.on("exit", () => {
  let largest = newSpace()
  const kept = []
  for (let i = 0; i < 400000; i++) {
    kept.push({ i, text: "survivor " + i })
    if (i % 1000 === 0) largest = Math.max(largest, newSpace())
  }
  process.stderr.write("young-heap-probe " + JSON.stringify({ largest: Math.max(largest, newSpace()), kept: kept.length }) + "\\n")
})
`

/** Runs `node [nodeArgs] lathe.js --version` with the probe and returns the largest young generation, in bytes. */
/**
 * Runs `node [nodeArgs] --import <probe> lathe.js <args>` in `cwd` with `env` and returns what the probe wrote on
 * stderr after `marker` (JSON); a run that fails or writes no such line is an error with its stderr.
 */
const probed = <A>(
  probeSource: string,
  marker: string,
  args: ReadonlyArray<string>,
  options: { readonly cwd: string; readonly env: Record<string, string>; readonly nodeArgs?: ReadonlyArray<string> }
) =>
  new Promise<A>((resolve, reject) => {
    const probe = `data:text/javascript,${encodeURIComponent(probeSource)}`
    const child = spawn(process.execPath, [...(options.nodeArgs ?? []), "--import", probe, bundle, ...args], {
      cwd: options.cwd,
      env: options.env,
      stdio: ["ignore", "ignore", "pipe"]
    })
    let stderr = ""
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8")
    })
    child.on("error", reject)
    child.on("close", (code) => {
      const line = new RegExp(`${marker} (.*)`).exec(stderr)?.[1]
      if (code !== 0 || line === undefined) reject(new Error(`lathe ${args[0]} exited with ${code}:\n${stderr}`))
      else resolve(JSON.parse(line) as A)
    })
  })

/** Runs `node [nodeArgs] lathe.js --version` with the probe and returns the largest young generation, in bytes. */
const largestYoungHeap = async (env: Record<string, string>, nodeArgs: ReadonlyArray<string> = []) =>
  (
    await probed<{ largest: number }>(PROBE, "young-heap-probe", ["--version"], {
      cwd: tmpdir(),
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...env },
      nodeArgs
    })
  ).largest

describe("the young generation's cap in the bundled launcher", () => {
  it("holds the young generation at or under 16 MiB once started, with LATHE_NODE_HEAP=small", async () => {
    assert.isTrue(existsSync(bundle), `${bundle} is missing: run npx nx run @lathe/cli:bundle`)
    // `--version` loads so little that start-up may never grow it to the cap; the survivors the probe keeps would
    // (the next test), so staying at or under the cap is the cap holding.
    assert.isAtMost(await largestYoungHeap({ LATHE_NODE_HEAP: "small" }), 16 * MIB)
  })

  it("holds only at its checks by default: `--version` (no run build, no request) grows past the cap under the same load", async () => {
    assert.isAbove(await largestYoungHeap({}), 16 * MIB)
  })

  it("leaves a young generation the person sized themselves alone, on the command line or in NODE_OPTIONS", async () => {
    // 32 MiB semi-spaces: a young generation of up to 64 MiB, which the cap would have stopped at 16.
    assert.isAbove(await largestYoungHeap({ LATHE_NODE_HEAP: "small" }, ["--max-semi-space-size=32"]), 16 * MIB)
    assert.isAbove(
      await largestYoungHeap({ LATHE_NODE_HEAP: "small", NODE_OPTIONS: "--max-semi-space-size=32" }),
      16 * MIB
    )
  })
})

/**
 * The start of the programs below: Node's modules and `young-heap.ts` (its `capYoungHeap` and `withCacheFlags`), the
 * hold armed as `bin.ts` arms it by default (`settle()`), survivors until the young generation has grown to `mib` MiB
 * (as Lathe's start-up grows it: 16 MiB left alone, 4 when the run build's load checks it), and an HTTP server on
 * 127.0.0.1 (`server`) for the requests a session's steps make.
 */
const startedUp = (youngHeap: string, mib = 16) => `
import http from "node:http"
import v8 from "node:v8"
import vm from "node:vm"
import { capYoungHeap, withCacheFlags } from ${JSON.stringify(youngHeap)}
capYoungHeap(process.env, process.execArgv).settle()
const newSpace = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === "new_space").space_size
const startUp = []
for (let i = 0; newSpace() < ${mib} * 1024 * 1024 && i < 2000000; i++) startUp.push({ i, text: "start-up " + i })
const server = http.createServer((_, res) => res.end("ok")).listen(0, "127.0.0.1")
await new Promise((resolve) => server.once("listening", resolve))
`

/**
 * A program that holds the young generation as `bin.ts` does by default (`capYoungHeap`, then `settle()`), grows it
 * to 4 MiB as start-up does up to a check, sends HTTP requests to a server of its own as a session's steps do while
 * it keeps ~40 MiB of small objects alive, and writes a V8 code cache at exit (as `code-cache.ts` does, from an exit
 * listener registered after the request). It prints the largest young generation.
 */
const HOLDER = (youngHeap: string, cacheFile: string) => `
import { writeFileSync } from "node:fs"
${startedUp(youngHeap, 4)}
// One request per "step", as a session makes them: the hold is (re)checked at each (V8 may shrink the young
// generation while the process waits, under load, and the hold then waits for it to grow back to 16 MiB).
const request = async () => {
  await new Promise((resolve) => http.get({ host: "127.0.0.1", port: server.address().port }, (res) => res.resume().on("end", resolve)))
  await new Promise((resolve) => setImmediate(resolve))
}
await request()
let largest = newSpace()
const kept = []
for (let i = 0; i < 400000; i++) {
  kept.push({ i, text: "survivor " + i })
  if (i % 1000 === 0) largest = Math.max(largest, newSpace())
  if (i % 20000 === 0) await request()
}
server.close()
const script = new vm.Script("(function () { return 1 })", { filename: "cached.js" })
process.once("exit", () => writeFileSync(${JSON.stringify(cacheFile)}, script.createCachedData()))
console.log(JSON.stringify({ largest, kept: kept.length }))
`

describe("the young generation held from start-up (the default)", () => {
  it("stops growing at 8 MiB, checked at each request, and leaves the code cache's flags as they were read", async () => {
    const dir = mkdtempSync(join(tmpdir(), "lathe-young-heap-"))
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }))
    const cacheFile = join(dir, "cache.bin")
    const program = join(dir, "holder.mts")
    const source = fileURLToPath(new URL("../src/young-heap.ts", import.meta.url))
    writeFileSync(program, HOLDER(source, cacheFile))
    const run = (env: Record<string, string>) =>
      new Promise<number>((resolve, reject) => {
        const child = spawn(process.execPath, ["--import", import.meta.resolve("tsx"), program], {
          env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...env },
          stdio: ["ignore", "pipe", "pipe"]
        })
        let out = ""
        let err = ""
        child.stdout.on("data", (chunk: Buffer) => {
          out += chunk.toString("utf8")
        })
        child.stderr.on("data", (chunk: Buffer) => {
          err += chunk.toString("utf8")
        })
        child.on("close", (code) =>
          code === 0 ? resolve((JSON.parse(out) as { largest: number }).largest) : reject(new Error(err))
        )
      })
    const held = await run({})
    const free = await run({ LATHE_NODE_HEAP: "default" })
    // At the cap: V8 may shrink the young generation while the process waits and grow it back past 8 MiB by one
    // step, but never on to what it reaches left alone (64 MiB here).
    assert.isAtLeast(held, 8 * MIB)
    assert.isBelow(held, 16 * MIB)
    assert.isAtLeast(free, 48 * MIB)
    // The cache written at exit of a held run is accepted by a process whose flags were never touched.
    await run({})
    const check =
      `const vm = require("node:vm"); const data = require("node:fs").readFileSync(${JSON.stringify(cacheFile)}); ` +
      `process.stdout.write(String(new vm.Script("(function () { return 1 })", { filename: "cached.js", cachedData: data }).cachedDataRejected))`
    assert.strictEqual(execFileSync(process.execPath, ["-e", check], { encoding: "utf8" }), "false")
  })
})

/**
 * A program that starts as `startedUp` says and sends one HTTP request (the first model request), so the hold sets
 * the growth factor to 1. It then
 * reads two code caches another process wrote with V8's own flags, one through `withCacheFlags` and one not, and prints
 * whether each was rejected.
 */
const READER = (youngHeap: string, cacheDir: string) => `
import { readFileSync } from "node:fs"
${startedUp(youngHeap)}
await new Promise((resolve) => http.get({ host: "127.0.0.1", port: server.address().port }, (res) => res.resume().on("end", resolve)))
await new Promise((resolve) => setImmediate(resolve))
server.close()
const read = (name) => new vm.Script(readFileSync(${JSON.stringify(cacheDir)} + "/" + name + ".js", "utf8"), {
  filename: name + ".js",
  cachedData: readFileSync(${JSON.stringify(cacheDir)} + "/" + name + ".bin")
}).cachedDataRejected
const inside = withCacheFlags(() => read("inside"))
const outside = read("outside")
console.log(JSON.stringify({ inside, outside }))
`

/** Writes `<name>.js` and the code cache a process with V8's own flags takes of it (`<name>.bin`), for each name. */
const WRITER = (cacheDir: string) => `
const vm = require("node:vm")
const { writeFileSync } = require("node:fs")
for (const name of ["inside", "outside"]) {
  const source = "(function () { return " + JSON.stringify(name) + ".length })"
  writeFileSync(${JSON.stringify(cacheDir)} + "/" + name + ".js", source)
  const script = new vm.Script(source, { filename: name + ".js" })
  script.runInThisContext()()
  writeFileSync(${JSON.stringify(cacheDir)} + "/" + name + ".bin", script.createCachedData())
}
`

describe("code caches read while the young generation is held", () => {
  it("are read with the flags they were written with through withCacheFlags, and rejected without it", () => {
    const dir = mkdtempSync(join(tmpdir(), "lathe-young-cache-"))
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }))
    execFileSync(process.execPath, ["-e", WRITER(dir)])
    const program = join(dir, "reader.mts")
    writeFileSync(program, READER(fileURLToPath(new URL("../src/young-heap.ts", import.meta.url)), dir))
    const out = execFileSync(process.execPath, ["--import", import.meta.resolve("tsx"), program], {
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
      encoding: "utf8"
    })
    const result = JSON.parse(out) as { inside: boolean; outside: boolean }
    assert.isFalse(result.inside)
    assert.isTrue(result.outside)
  })
})

/**
 * Preloaded into a `lathe run`: reports the young generation's size when the first model request starts and at exit.
 * At the first request it also makes ~40 MB of small objects that stay (what a long session's history and caches
 * become): with every scavenge keeping all it copies, V8 on its own grows the young generation.
 */
const RUN_PROBE = `
import v8 from "node:v8"
import channels from "node:diagnostics_channel"
const newSpace = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === "new_space").space_size
const sizes = []
const kept = []
channels.subscribe("http.client.request.start", () => {
  sizes.push(newSpace())
  if (kept.length === 0) for (let i = 0; i < 400_000; i++) kept.push({ i, text: "line " + i })
})
process.on("exit", () => process.stderr.write("young-heap-run " + JSON.stringify({ first: sizes[0], exit: newSpace() }) + "\\n"))
`

describe("the young generation of a real `lathe run` (the bundled launcher)", () => {
  it("is at most 8 MiB from the first model request on; left alone (LATHE_NODE_HEAP=default) it is past that", async () => {
    const server = await startScriptedServer((_, index) =>
      index < 3 ? { steps: [{ tool: "read", input: { filePath: "a.txt" } }] } : { steps: [{ text: "done" }] }
    )
    onTestFinished(() => server.close())
    const box = sandbox()
    writeFileSync(join(box.project, "a.txt"), "a\n")
    const run = (heap: Record<string, string>) =>
      probed<{ first: number; exit: number }>(
        RUN_PROBE,
        "young-heap-run",
        ["run", "--format", "json", "--yes", "read a"],
        {
          cwd: box.project,
          env: { ...box.env, LATHE_BASE_URL: server.url, LATHE_MODEL: "test-model", ...heap }
        }
      )
    const held = await run({})
    assert.isAtMost(held.first, 8 * MIB, "at the first request")
    assert.isAtMost(held.exit, 8 * MIB, "at exit")
    const free = await run({ LATHE_NODE_HEAP: "default" })
    assert.isAbove(free.exit, 8 * MIB, "V8's own growth (the load the checks stop)")
  })
})
