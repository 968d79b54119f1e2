/**
 * Long sessions: `lathe run` over 20, 200 and 500 steps of one kind (`read`: tiny files, `read5k`: ~5 KB files,
 * `edit`: one edit per step), each against a scripted OpenAI-compatible server on 127.0.0.1 that answers at once.
 * Next to each run, in the same run of the bench, a minimal baseline loop: a plain Node process that sends the same
 * streaming requests with the same growing history (the bodies Lathe sent, rebuilt step by step), parses the SSE
 * replies and does nothing else: no store, no permissions, no events. What Lathe costs beyond that is its own.
 *
 * Reported per run: the step gap (the server's last byte of one reply to the arrival of the next request) as p50 and
 * mean by window of 50 steps, CPU per step by the same windows (`/proc/<pid>/stat` at each request), peak RSS
 * (`process.resourceUsage().maxRSS`), peak and final heap used (sampled in the process by a preloaded module), and
 * the mean request body size (both loops should show the same).
 *
 *   npx tsx --conditions=@lathe/source bench/long-session.ts                         # every kind, 20/200/500 steps
 *   npx tsx --conditions=@lathe/source bench/long-session.ts --steps 200 --kind read5k
 *   npx tsx --conditions=@lathe/source bench/long-session.ts --build                 # bundle the current source first
 *
 * Which Lathe runs: `--bin <file>` (a `lathe.js` or a run build's `entry.mjs`); `--build` bundles the run command from
 * the current source into `packages/cli/dist/long-session/` (as `bench/loop-profile.ts` does, minified) and runs that;
 * else `packages/cli/dist/bundle/lathe.js` when it exists (`npx nx run @lathe/cli:bundle`), else the source via tsx.
 * The first line printed says which. `--base <file>`: another build, run just before it at each size (e.g. a copy of an
 * earlier `dist/long-session/`, kept inside `packages/cli/dist/` so its external packages resolve), to compare two
 * builds under the same load. `--latency <ms>`: the model waits that long before each answer, as a real one does (the
 * gap is still measured from the end of one answer, so work Lathe does while a request is out no longer counts, e.g.
 * an edit step's snapshot). `--node-flag <flag>` (repeatable) starts Lathe's node with it, e.g.
 * `--node-flag=--max-semi-space-size=8` to see what a smaller young generation does to RSS and step cost.
 * `--tree <n>`: n more files in the repository (in folders of 100), to see what a project's size costs a step.
 * `--rounds <n>`: each size n times (base, Lathe and the baseline loop alternated in each round); the target lines
 * then give the median of the rounds' ratios and each round's (one session's late window swings by ±0.5 ms on this
 * machine: a figure near its target needs several).
 * `--windows <prefix>`: each measured run also writes its gaps as `[start, end]` pairs in microseconds of the
 * monotonic clock (the clock of `--cpu-prof`'s `startTime` and `timeDeltas`) to `<prefix>.<pid>.json`; with
 * `--node-flag=--cpu-prof` that picks out the samples taken inside the gaps (what an edit step's gap is made of).
 * Each build first runs a 2-step session that is not reported, so every measured run starts with a warm code cache.
 * Linux only (it reads `/proc`).
 */
import { spawn } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { parseArgs } from "node:util"
import { type ScriptedReply, startScriptedServer } from "@lathe/core/testing"
import { commitAll, sessionEnv } from "./loop-session.js"

type Kind = "read" | "read5k" | "edit"
const KINDS: ReadonlyArray<Kind> = ["read", "read5k", "edit"]
const WINDOW = 50

const { values: flags } = parseArgs({
  options: {
    steps: { type: "string", multiple: true },
    kind: { type: "string", multiple: true },
    bin: { type: "string" },
    base: { type: "string" },
    "node-flag": { type: "string", multiple: true },
    latency: { type: "string" },
    tree: { type: "string" },
    rounds: { type: "string" },
    windows: { type: "string" },
    build: { type: "boolean" },
    source: { type: "boolean" }
  }
})
const rounds = Math.max(1, Number(flags.rounds ?? 1))
const stepCounts = (flags.steps ?? ["20", "200", "500"]).flatMap((s) => s.split(",")).map(Number)
const kinds = (flags.kind ?? [...KINDS]).flatMap((k) => k.split(",")) as Array<Kind>
for (const kind of kinds) if (!KINDS.includes(kind)) throw new Error(`--kind: one of ${KINDS.join(", ")}`)

const cli = fileURLToPath(new URL("../packages/cli/", import.meta.url))

/**
 * Bundles the run command from the current source, like the CLI's run build, with an entry that starts as `bin.ts`
 * does (the young generation's cap first, see `young-heap.ts`).
 */
const buildRun = async (): Promise<string> => {
  const { build } = await import("esbuild")
  const { bundleOptions } = (await import(pathToFileURL(join(cli, "scripts/bundle.mjs")).href)) as {
    bundleOptions: (options: { entryPoints: Record<string, string>; outdir: string }) => object
  }
  const outdir = join(cli, "dist/long-session")
  rmSync(outdir, { recursive: true, force: true })
  await build({
    ...bundleOptions({
      entryPoints: { run: join(cli, "src/commands/run.ts"), "young-heap": join(cli, "src/young-heap.ts") },
      outdir
    }),
    logLevel: "error"
  })
  writeFileSync(
    join(outdir, "entry.mjs"),
    'import module from "node:module"\nimport { capYoungHeap } from "./young-heap.js"\n' +
      "const youngHeap = capYoungHeap(process.env, process.execArgv)\nmodule.enableCompileCache?.()\n" +
      'const { runCommand } = await import("./run.js")\nyoungHeap.settle()\n' +
      "process.exitCode = await runCommand(process.argv.slice(3), { stdout: (t) => process.stdout.write(t), " +
      "stderr: (t) => process.stderr.write(t), env: process.env, cwd: process.cwd(), isTTY: false, " +
      "stdin: process.stdin, stdinIsTTY: false })\n"
  )
  return join(outdir, "entry.mjs")
}

/** The node arguments that start Lathe (followed by `run …`), and a name for the report. */
const lathe = async (): Promise<{ args: Array<string>; name: string }> => {
  if (flags.bin) return { args: [resolve(flags.bin)], name: resolve(flags.bin) }
  if (flags.build) {
    const entry = await buildRun()
    return { args: [entry], name: `${entry} (bundled from the current source)` }
  }
  const bundle = join(cli, "dist/bundle/lathe.js")
  if (existsSync(bundle) && !flags.source) return { args: [bundle], name: `${bundle} (the CLI bundle)` }
  const bin = join(cli, "src/bin.ts")
  return { args: ["--conditions=@lathe/source", "--import", import.meta.resolve("tsx"), bin], name: `${bin} via tsx` }
}

/**
 * Preloaded into both loops: samples heap used every 20 ms and, at exit, writes peak RSS, CPU and heap figures to
 * `$LATHE_BENCH_MEM`.
 */
const PRELOAD = `
import { writeFileSync } from "node:fs"
let peakHeap = 0
const sample = () => { peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed) }
setInterval(sample, 20).unref()
process.on("exit", () => {
  sample()
  const usage = process.resourceUsage()
  writeFileSync(process.env.LATHE_BENCH_MEM, JSON.stringify({ rssKiB: usage.maxRSS, cpuMs: (usage.userCPUTime + usage.systemCPUTime) / 1000, peakHeap, exitHeap: process.memoryUsage().heapUsed }))
})
`

/**
 * The baseline loop: one streaming chat.completions request per step, its body the first request's (system, tools,
 * prompt) plus, per step so far, the assistant message the reply parsed into and that step's tool result (taken
 * from Lathe's last request, so the bodies have Lathe's sizes). Arguments: url, steps, history file.
 */
const BASELINE = `
import { readFileSync } from "node:fs"
const [url, steps, file] = process.argv.slice(2)
const last = JSON.parse(readFileSync(file, "utf8"))
const results = last.messages.filter((m) => m.role === "tool")
const messages = last.messages.slice(0, last.messages.findIndex((m) => m.role === "assistant"))
for (let step = 0; step < Number(steps); step++) {
  const body = JSON.stringify({ ...last, messages })
  const response = await fetch(url + "/chat/completions", { method: "POST", headers: { "content-type": "application/json" }, body })
  const calls = []
  let text = ""
  let buffer = ""
  for await (const chunk of response.body.pipeThrough(new TextDecoderStream())) {
    buffer += chunk
    const lines = buffer.split("\\n")
    buffer = lines.pop()
    for (const line of lines) {
      if (!line.startsWith("data: ") || line === "data: [DONE]") continue
      const delta = JSON.parse(line.slice(6)).choices?.[0]?.delta ?? {}
      text += delta.content ?? ""
      for (const call of delta.tool_calls ?? []) {
        calls[call.index] ??= { id: call.id, type: "function", function: { name: call.function.name, arguments: "" } }
        calls[call.index].function.arguments += call.function.arguments ?? ""
      }
    }
  }
  if (calls.length === 0) break
  messages.push({ role: "assistant", content: text || null, tool_calls: calls })
  for (const call of calls) {
    JSON.parse(call.function.arguments)
    const result = results.shift()
    messages.push({ role: "tool", tool_call_id: call.id, content: result?.content ?? "" })
  }
}
`

/** `--tree <n>`: the repository also holds n other files, 100 to a folder (a project the size of a real one). */
const treeFiles = Number(flags.tree ?? 0)

/** A repository with the files the session reads or edits (and `--tree`'s others). */
const makeRepo = (kind: Kind, steps: number): string => {
  const dir = mkdtempSync(join(tmpdir(), `lathe-long-${kind}-`))
  for (let i = 0; i < treeFiles; i++) {
    const folder = join(dir, "src", `m${Math.floor(i / 5_000)}`, `d${Math.floor(i / 100)}`)
    if (i % 100 === 0) mkdirSync(folder, { recursive: true })
    writeFileSync(join(folder, `f${i % 100}.ts`), `export const x = ${i}\n`)
  }
  const line = (i: number, n: number) => `line ${n} of file ${i}: ${"lorem ipsum dolor sit amet ".repeat(2)}\n`
  for (let i = 0; i < steps; i++) {
    const text =
      kind === "read"
        ? `read ${i}\n`
        : kind === "read5k"
          ? Array.from({ length: 72 }, (_, n) => line(i, n)).join("")
          : `first line\nbefore ${i}\nlast line\n`
    writeFileSync(join(dir, `f${i}.txt`), text)
  }
  commitAll(dir)
  return dir
}

/** `--latency <ms>`: the scripted model waits this long before each answer (a real model's time to first token). */
const latency = Number(flags.latency ?? 0)

/** The scripted model: one call per step on `f<i>.txt`, an answer at the last step. */
const reply = (kind: Kind, steps: number, index: number): ScriptedReply | undefined => {
  const wait = latency > 0 ? { firstByteMs: latency } : {}
  if (index === steps - 1) return { steps: [{ text: "done" }], ...wait }
  if (index >= steps) return undefined
  const filePath = `f${index}.txt`
  if (kind === "edit")
    return {
      steps: [{ tool: "edit", input: { filePath, oldString: `before ${index}`, newString: `after ${index}` } }],
      ...wait
    }
  return { steps: [{ tool: "read", input: { filePath } }], ...wait }
}

/** User + system CPU time (ms) of a live process, from `/proc/<pid>/stat`. */
const cpuOf = (pid: number | undefined): number => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100 // clock ticks, USER_HZ = 100 on Linux
  } catch {
    return Number.NaN
  }
}

interface Figures {
  readonly gaps: ReadonlyArray<number>
  readonly cpuAt: ReadonlyArray<number>
  readonly bodyBytes: number
  readonly rssKiB: number
  readonly cpuMs: number
  readonly peakHeap: number
  readonly exitHeap: number
  readonly last: unknown
}

/** How to start a loop against the server at `url`: its node arguments and environment. */
type Start = (url: string) => { readonly args: Array<string>; readonly env: Record<string, string | undefined> }

/** Runs a loop in `cwd` against a fresh scripted server; `steps` requests are expected. */
const measure = async (start: Start, kind: Kind, steps: number, cwd: string): Promise<Figures> => {
  const cpuAt: Array<number> = []
  const bodyBytes: Array<number> = []
  let pid: number | undefined
  let last: unknown
  const server = await startScriptedServer((request, index) => {
    cpuAt.push(cpuOf(pid))
    bodyBytes.push(Number(request.headers["content-length"] ?? Number.NaN))
    if (index === steps - 1) last = request.body
    // Keep the bench's own memory flat: only the last body is needed (by the baseline).
    const held: { body: unknown } = request
    held.body = undefined
    return reply(kind, steps, index)
  })
  const mem = join(mkdtempSync(join(tmpdir(), "lathe-long-mem-")), "mem.json")
  const preload = `data:text/javascript,${encodeURIComponent(PRELOAD)}`
  const { args, env } = start(server.url)
  const child = spawn(process.execPath, ["--import", preload, ...args], {
    cwd,
    env: { ...env, LATHE_BENCH_MEM: mem },
    stdio: ["ignore", "ignore", "pipe"]
  })
  pid = child.pid
  let stderr = ""
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString()
  })
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve))
  await server.close()
  const requests = server.requests
  if (code !== 0 || requests.length !== steps)
    throw new Error(`run failed: code ${code}, ${requests.length} of ${steps} requests\n${stderr.slice(-2000)}`)
  const figures = JSON.parse(readFileSync(mem, "utf8")) as Omit<Figures, "gaps" | "cpuAt" | "bodyBytes" | "last">
  rmSync(join(mem, ".."), { recursive: true, force: true })
  if (flags.windows !== undefined) {
    // performance.now() is ms since this process started; the profile's clock is the monotonic one, in µs.
    const offset = process.hrtime.bigint() - BigInt(Math.round(performance.now() * 1e6))
    const micros = (ms: number) => Number((BigInt(Math.round(ms * 1e6)) + offset) / 1000n)
    const gaps = requests.slice(1).map((r, i) => [micros(requests[i]?.answeredAt ?? 0), micros(r.receivedAt)])
    writeFileSync(`${flags.windows}.${pid}.json`, JSON.stringify(gaps))
  }
  return {
    ...figures,
    gaps: requests.slice(1).map((r, i) => r.receivedAt - (requests[i]?.answeredAt ?? Number.NaN)),
    cpuAt,
    bodyBytes: bodyBytes.reduce((a, b) => a + b, 0) / bodyBytes.length,
    last
  }
}

const p50 = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0
const mean = (values: ReadonlyArray<number>) => values.reduce((a, b) => a + b, 0) / Math.max(1, values.length)

/** Gap p50 / mean and CPU per step for each window of 50 steps (gap i is the one before request i + 1). */
const windows = (f: Figures) => {
  const out: Array<{ label: string; p50: number; mean: number; cpu: number }> = []
  for (let start = 0; start < f.gaps.length; start += WINDOW) {
    const end = Math.min(f.gaps.length, start + WINDOW)
    const gaps = f.gaps.slice(start, end)
    const cpu = ((f.cpuAt[end] ?? Number.NaN) - (f.cpuAt[start] ?? Number.NaN)) / (end - start)
    out.push({ label: `${start + 2}–${end + 1}`, p50: p50(gaps), mean: mean(gaps), cpu })
  }
  return out
}

const mib = (bytes: number) => (bytes / 1024 / 1024).toFixed(1)

const report = (name: string, f: Figures) => {
  console.log(
    `  ${name}: peak RSS ${(f.rssKiB / 1024).toFixed(1)} MiB, heap used peak ${mib(f.peakHeap)} MiB / at exit ` +
      `${mib(f.exitHeap)} MiB, CPU ${f.cpuMs.toFixed(0)} ms, mean body ${(f.bodyBytes / 1024).toFixed(1)} KiB`
  )
  for (const w of windows(f))
    console.log(
      `    steps ${w.label.padEnd(9)} gap p50 ${w.p50.toFixed(2).padStart(7)} ms, mean ${w.mean.toFixed(2).padStart(7)} ms,` +
        ` CPU/step ${w.cpu.toFixed(1).padStart(6)} ms`
    )
}

/** One Lathe run of `steps` steps of `kind`, in a fresh repository and home. */
const latheRun = async (args: ReadonlyArray<string>, kind: Kind, steps: number): Promise<Figures> => {
  const repo = makeRepo(kind, steps)
  const home = mkdtempSync(join(tmpdir(), "lathe-long-home-"))
  mkdirSync(join(home, "config", "lathe"), { recursive: true })
  // Past the default cap of 200 steps per turn.
  writeFileSync(join(home, "config", "lathe", "lathe.json"), JSON.stringify({ max_steps: 0 }))
  try {
    return await measure(
      (url) => ({
        args: [...args, "run", "--format", "json", "--yes", `work through ${steps} files`],
        env: sessionEnv(home, url, join(tmpdir(), "lathe-long-compile-cache"))
      }),
      kind,
      steps,
      repo
    )
  } finally {
    rmSync(repo, { recursive: true, force: true })
    rmSync(home, { recursive: true, force: true })
  }
}

/** The baseline loop replaying `last` (Lathe's last request body) over `steps` steps. */
const baselineRun = async (file: string, last: unknown, kind: Kind, steps: number): Promise<Figures> => {
  const dir = mkdtempSync(join(tmpdir(), "lathe-long-base-"))
  const history = join(dir, "last-request.json")
  writeFileSync(history, JSON.stringify(last))
  try {
    return await measure(
      (url) => ({ args: [file, url, String(steps), history], env: { PATH: process.env.PATH } }),
      kind,
      steps,
      dir
    )
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/**
 * The targets: RSS at 200 steps within 40 MiB of 20 steps, gap p50 of steps 151–200 and of steps 451–500 within 2×
 * the baseline's, under 256 MiB at 500 steps.
 */
type Round = { readonly lathe: Figures; readonly baseline: Figures }

/** The median of the rounds' values, then each round's when there are several. */
const overRounds = (values: ReadonlyArray<number>, digits: number) =>
  values.length === 1
    ? (values[0] ?? Number.NaN).toFixed(digits)
    : `${p50(values).toFixed(digits)} (median of ${values.length} rounds: ${values.map((v) => v.toFixed(digits)).join(", ")})`

const targets = (kind: Kind, runs: ReadonlyMap<number, ReadonlyArray<Round>>) => {
  const at20 = runs.get(20)
  const at200 = runs.get(200)
  const at500 = runs.get(500)
  const lines: Array<string> = []
  if (at20 && at200) {
    const rss = (rounds: ReadonlyArray<Round>) => p50(rounds.map((r) => r.lathe.rssKiB))
    lines.push(`peak RSS 200 − 20 steps: ${((rss(at200) - rss(at20)) / 1024).toFixed(1)} MiB (target ≤ 40)`)
  }
  const ratios = (rounds: ReadonlyArray<Round>, from: number) => {
    const window = (f: Figures) => p50(f.gaps.slice(from, from + 50))
    return rounds.map((r) => window(r.lathe) / window(r.baseline))
  }
  if (at200) lines.push(`gap p50 steps 151–200: ${overRounds(ratios(at200, 149), 2)}× the baseline's (target ≤ 2)`)
  if (at500) {
    const rss = overRounds(
      at500.map((r) => r.lathe.rssKiB / 1024),
      1
    )
    lines.push(`peak RSS at 500 steps: ${rss} MiB (target < 256)`)
    lines.push(`gap p50 steps 451–500: ${overRounds(ratios(at500, 449), 2)}× the baseline's (target ≤ 2)`)
  }
  if (lines.length > 0) console.log(`\n${kind} targets: ${lines.join("; ")}`)
}

const main = async () => {
  const found = await lathe()
  const nodeFlags = flags["node-flag"] ?? []
  const run = { ...found, args: [...nodeFlags, ...found.args] }
  console.log(`lathe: ${run.name}${nodeFlags.length > 0 ? ` with ${nodeFlags.join(" ")}` : ""}`)
  const base = flags.base ? resolve(flags.base) : undefined
  if (base) console.log(`base (run before lathe each time): ${base}`)
  const baselineFile = join(mkdtempSync(join(tmpdir(), "lathe-long-baseline-")), "baseline.mjs")
  writeFileSync(baselineFile, BASELINE)
  // One short run of each build first, not reported: it writes the build's code cache, so the first size measured
  // is warm too (a cold first run pays ~35 MiB more peak RSS and shows as negative growth from 20 to 200 steps).
  for (const args of [...(base ? [[base]] : []), run.args]) await latheRun(args, "read", 2)
  for (const kind of kinds) {
    const runs = new Map<number, Array<Round>>()
    for (const steps of stepCounts) {
      const done: Array<Round> = []
      for (let round = 1; round <= rounds; round++) {
        const started = performance.now()
        const baseFigures = base ? await latheRun([base], kind, steps) : undefined
        const latheFigures = await latheRun(run.args, kind, steps)
        const baselineFigures = await baselineRun(baselineFile, latheFigures.last, kind, steps)
        done.push({ lathe: latheFigures, baseline: baselineFigures })
        const which = rounds > 1 ? `, round ${round} of ${rounds}` : ""
        console.log(`\n${kind}, ${steps} steps${which} (${((performance.now() - started) / 1000).toFixed(0)} s)`)
        if (baseFigures) report("base", baseFigures)
        report("lathe", latheFigures)
        report("baseline", baselineFigures)
      }
      runs.set(steps, done)
    }
    targets(kind, runs)
  }
  rmSync(join(baselineFile, ".."), { recursive: true, force: true })
}

await main()
