/**
 * Agent-loop benchmark: a 20-step session of `read` calls (each of another file) through the built CLI (`packages/cli/dist/bin.js`)
 * against a scripted OpenAI-compatible server on 127.0.0.1 that answers at once, on a 5-file repo and on a
 * 50,000-file repo. Reports time from process start to the first model request, the median gap between steps
 * (request i+1 arrival − request i arrival; the server answers instantly, so this is the loop's own cost per
 * step), and peak RSS — each next to `node -e 0` measured in the same run. The step gap is the time from the
 * server's last byte of one reply to the arrival of the next request: the loop's own cost per step (stream
 * parsing, tool call, store flush, building the next request). CPU is the whole process's user + system time.
 *
 *   npx nx run @lathe/cli:bundle && npx tsx --conditions=@lathe/source bench/loop.ts
 *
 * To compare two builds in the same run: copy `packages/cli/dist/bundle` to e.g. `packages/cli/dist/base`, rebuild,
 * then `LATHE_BENCH_BASE=packages/cli/dist/base/lathe.js npx tsx --conditions=@lathe/source bench/loop.ts`.
 * A build may also be a startup snapshot, by absolute path: `LATHE_BENCH_BIN=$PWD/packages/cli/dist/snapshot/lathe-run.blob`.
 */
import { execFileSync, spawn } from "node:child_process"
import { createHash } from "node:crypto"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { startScriptedServer } from "@lathe/core/testing"
import { commitAll, sessionEnv, sessionScript, writeSessionFiles } from "./loop-session.js"

const STEPS = 20
/** Measured runs per build and repo (`LATHE_BENCH_RUNS`, default 3), after one warm-up run. */
const RUNS = Number(process.env.LATHE_BENCH_RUNS ?? 3)
/** The bundled CLI; `LATHE_BENCH_BIN` points at another build of it. */
const bin =
  process.env.LATHE_BENCH_BIN ?? fileURLToPath(new URL("../packages/cli/dist/bundle/lathe.js", import.meta.url))
/**
 * `LATHE_BENCH_BASE`: a second build's `lathe.js` (a copy of an earlier `dist/bundle/`, kept inside the repo so its
 * external packages resolve). Its runs alternate with `bin`'s and the report adds their ratios.
 */
const compareWith = process.env.LATHE_BENCH_BASE
/** Each step reads another file, as a session does; `LATHE_BENCH_SAME_INPUT=1` reads `a.txt` every time instead. */
const sameInput = process.env.LATHE_BENCH_SAME_INPUT === "1"

const median = (values: ReadonlyArray<number>) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN
}

const makeRepo = (files: number): string => {
  const dir = mkdtempSync(join(tmpdir(), `lathe-bench-${files}-`))
  for (let i = 0; i < files; i++) {
    const sub = join(dir, `d${Math.floor(i / 500)}`, `e${Math.floor(i / 50) % 10}`)
    if (i % 50 === 0) mkdirSync(sub, { recursive: true })
    writeFileSync(join(sub, `f${i}.txt`), `file ${i}\n`)
  }
  writeSessionFiles(dir, STEPS)
  commitAll(dir)
  // Let the machine digest the new files before measuring: refresh git's index once the files' second has passed
  // (entries written in the index's own second are re-read, and the index rewritten, by every status until then),
  // then write everything back and wait for the kernel's dirty pages to drain.
  execFileSync("sleep", ["1.1"])
  execFileSync("git", ["status", "--porcelain"], { cwd: dir })
  execFileSync("sync")
  settle()
  return dir
}

/**
 * Waits (up to 30 s) until the kernel holds less than 16 MiB of dirty pages and the CPUs were at least 90 % idle for a
 * whole second: after creating 50,000 files (and as many git objects) the kernel goes on working for a while, which
 * showed as slower steps on the large repository only. Linux; elsewhere it returns at once.
 */
const settle = () => {
  if (!existsSync("/proc/meminfo") || !existsSync("/proc/stat")) return
  const cpu = () => {
    const fields = (readFileSync("/proc/stat", "utf8").split("\n")[0] ?? "").trim().split(/\s+/).slice(1).map(Number)
    return { idle: (fields[3] ?? 0) + (fields[4] ?? 0), total: fields.reduce((sum, n) => sum + n, 0) }
  }
  const deadline = Date.now() + 30_000
  while (Date.now() < deadline) {
    const dirty = Number(/Dirty:\s+(\d+) kB/.exec(readFileSync("/proc/meminfo", "utf8"))?.[1] ?? 0)
    const before = cpu()
    execFileSync("sleep", ["1"])
    const after = cpu()
    const idle = (after.idle - before.idle) / Math.max(1, after.total - before.total)
    if (dirty < 16 * 1024 && idle >= 0.9) return
  }
}

/** Peak RSS in KiB and CPU time (user + system, ms) of a command, through GNU time. */
const timed = (args: ReadonlyArray<string>, cwd: string, env: NodeJS.ProcessEnv, onStart?: (t: number) => void) =>
  new Promise<{ rssKiB: number; cpuMs: number; code: number | null }>((resolve, reject) => {
    const child = spawn("/usr/bin/time", ["-f", "RSS %M CPU %U %S", ...args], {
      cwd,
      env,
      stdio: ["ignore", "ignore", "pipe"]
    })
    onStart?.(performance.now())
    let stderr = ""
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString()
    })
    child.on("error", reject)
    child.on("close", (code) => {
      const rss = /RSS (\d+) CPU ([\d.]+) ([\d.]+)/.exec(stderr)
      if (code !== 0) process.stderr.write(stderr)
      const cpuMs = rss ? (Number(rss[2]) + Number(rss[3])) * 1000 : Number.NaN
      resolve({ rssKiB: rss ? Number(rss[1]) : Number.NaN, cpuMs, code })
    })
  })

const baseline = async () => {
  const times: Array<number> = []
  let rss = 0
  for (let i = 0; i < 5; i++) {
    let start = 0
    const result = await timed([process.execPath, "-e", "0"], tmpdir(), process.env, (t) => {
      start = t
    })
    times.push(performance.now() - start)
    rss = result.rssKiB
  }
  return { ms: median(times), rssKiB: rss }
}

/**
 * How node starts a build: `node <lathe.js>`, or for a V8 startup snapshot (a `.blob`, see
 * docs/startup-snapshot.md) `node --snapshot-blob <blob> --`, as a wrapper script would start it.
 */
const nodeArgs = (lathe: string): Array<string> =>
  lathe.endsWith(".blob") ? [process.execPath, "--snapshot-blob", lathe, "--"] : [process.execPath, lathe]

const session = async (repo: string, lathe: string) => {
  const server = await startScriptedServer(sessionScript(STEPS, sameInput))
  const home = mkdtempSync(join(tmpdir(), "lathe-bench-home-"))
  const env = {
    ...sessionEnv(home, server.url, join(tmpdir(), "lathe-bench-compile-cache")),
    // Each build its own V8 code cache: an older build's CLI removes every other cache of `run.cjs` it finds.
    LATHE_CODE_CACHE: join(
      tmpdir(),
      "lathe-bench-code-cache",
      createHash("sha256").update(lathe).digest("hex").slice(0, 12)
    )
  }
  let start = 0
  const result = await timed(
    [...nodeArgs(lathe), "run", "--format", "json", "--yes", "read a.txt 19 times"],
    repo,
    env,
    (t) => {
      start = t
    }
  )
  await server.close()
  rmSync(home, { recursive: true, force: true })
  const requests = server.requests
  if (result.code !== 0 || requests.length !== STEPS)
    throw new Error(`run failed: code ${result.code}, ${requests.length} requests`)
  const gaps = requests.slice(1).map((r, i) => r.receivedAt - (requests[i]?.answeredAt ?? Number.NaN))
  return {
    first: (requests[0]?.receivedAt ?? Number.NaN) - start,
    gap: median(gaps),
    // After the JIT has warmed up: the first steps of a session run mostly unoptimised code.
    steady: median(gaps.slice(8)),
    rssKiB: result.rssKiB,
    cpuMs: result.cpuMs
  }
}

/** One build's figures over several runs: medians of first request, step gaps and CPU time, the worst peak RSS. */
const summarise = (runs: ReadonlyArray<Awaited<ReturnType<typeof session>>>) => ({
  first: median(runs.map((r) => r.first)),
  gap: median(runs.map((r) => r.gap)),
  steady: median(runs.map((r) => r.steady)),
  rss: Math.max(...runs.map((r) => r.rssKiB)) / 1024,
  cpu: median(runs.map((r) => r.cpuMs))
})

const main = async () => {
  const base = await baseline()
  console.log(`baseline node -e 0: ${base.ms.toFixed(1)} ms, RSS ${(base.rssKiB / 1024).toFixed(1)} MiB`)
  // With a second build, runs alternate between the two so that both see the same load on the machine.
  const builds =
    compareWith === undefined
      ? [{ name: "build", bin }]
      : [
          { name: "base", bin: compareWith },
          { name: "build", bin }
        ]
  for (const files of [5, 50_000]) {
    const repo = makeRepo(files)
    for (const build of builds) await session(repo, build.bin) // warm the compile cache
    const runs = builds.map(() => [] as Array<Awaited<ReturnType<typeof session>>>)
    for (let i = 0; i < RUNS; i++) {
      for (const [b, build] of builds.entries()) runs[b]?.push(await session(repo, build.bin))
    }
    const figures = runs.map(summarise)
    for (const [b, build] of builds.entries()) {
      const f = figures[b]
      if (f === undefined) continue
      console.log(
        `${files} files, ${build.name}: first request ${f.first.toFixed(1)} ms (${(f.first / base.ms).toFixed(2)}× node -e 0), ` +
          `median step gap ${f.gap.toFixed(2)} ms (after step 8: ${f.steady.toFixed(2)} ms), ` +
          `peak RSS ${f.rss.toFixed(1)} MiB (${(f.rss / (base.rssKiB / 1024)).toFixed(2)}× node -e 0), CPU ${f.cpu.toFixed(0)} ms`
      )
    }
    const [a, b] = figures
    if (a !== undefined && b !== undefined) {
      console.log(
        `${files} files, build / base: first request ${(b.first / a.first).toFixed(2)}, step gap ${(b.gap / a.gap).toFixed(2)} ` +
          `(after step 8: ${(b.steady / a.steady).toFixed(2)}), peak RSS ${(b.rss / a.rss).toFixed(2)}, CPU ${(b.cpu / a.cpu).toFixed(2)} ` +
          `(${RUNS} runs each, alternated)`
      )
    }
    rmSync(repo, { recursive: true, force: true })
  }
}

await main()
