/**
 * Agent-loop benchmark: a 20-step session of `read` calls through the built CLI (`packages/cli/dist/bin.js`)
 * against a scripted OpenAI-compatible server on 127.0.0.1 that answers at once, on a 5-file repo and on a
 * 50,000-file repo. Reports time from process start to the first model request, the median gap between steps
 * (request i+1 arrival − request i arrival; the server answers instantly, so this is the loop's own cost per
 * step), and peak RSS — each next to `node -e 0` measured in the same run. The step gap is the time from the
 * server's last byte of one reply to the arrival of the next request: the loop's own cost per step (stream
 * parsing, tool call, store flush, building the next request).
 *
 *   npx nx run @lathe/cli:bundle && npx tsx --conditions=@lathe/source bench/loop.ts
 */
import { execFileSync, spawn } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { type ScriptedReply, startScriptedServer } from "@lathe/core/testing"

const STEPS = 20
const RUNS = 3
/** The bundled CLI; `LATHE_BENCH_BIN` points at another build of it (for comparing two builds side by side). */
const bin =
  process.env.LATHE_BENCH_BIN ?? fileURLToPath(new URL("../packages/cli/dist/bundle/lathe.js", import.meta.url))

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
  writeFileSync(join(dir, "a.txt"), "alpha\n")
  execFileSync("git", ["init", "-q"], { cwd: dir })
  execFileSync("git", ["add", "-A"], { cwd: dir })
  execFileSync("git", ["-c", "user.email=b@b", "-c", "user.name=b", "commit", "-qm", "init"], { cwd: dir })
  return dir
}

/** Peak RSS in KiB and wall time of a command, through GNU time. */
const timed = (args: ReadonlyArray<string>, cwd: string, env: NodeJS.ProcessEnv, onStart?: (t: number) => void) =>
  new Promise<{ rssKiB: number; code: number | null }>((resolve, reject) => {
    const child = spawn("/usr/bin/time", ["-f", "RSS %M", ...args], { cwd, env, stdio: ["ignore", "ignore", "pipe"] })
    onStart?.(performance.now())
    let stderr = ""
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString()
    })
    child.on("error", reject)
    child.on("close", (code) => {
      const rss = /RSS (\d+)/.exec(stderr)
      if (code !== 0) process.stderr.write(stderr)
      resolve({ rssKiB: rss ? Number(rss[1]) : Number.NaN, code })
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

const session = async (repo: string) => {
  const script = (_request: unknown, index: number): ScriptedReply | undefined => {
    if (index < STEPS - 1) return { steps: [{ tool: "read", input: { filePath: "a.txt" } }] }
    if (index === STEPS - 1) return { steps: [{ text: "done" }] }
    return undefined
  }
  const server = await startScriptedServer(script)
  const home = mkdtempSync(join(tmpdir(), "lathe-bench-home-"))
  const env = {
    PATH: process.env.PATH,
    HOME: home,
    LATHE_DATA_DIR: join(home, "data"),
    XDG_CONFIG_HOME: join(home, "config"),
    LATHE_BASE_URL: server.url,
    LATHE_MODEL: "bench",
    NODE_COMPILE_CACHE: join(tmpdir(), "lathe-bench-compile-cache")
  }
  let start = 0
  const result = await timed(
    [process.execPath, bin, "run", "--format", "json", "--yes", "read a.txt 19 times"],
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
  return { first: (requests[0]?.receivedAt ?? Number.NaN) - start, gap: median(gaps), rssKiB: result.rssKiB }
}

const main = async () => {
  const base = await baseline()
  console.log(`baseline node -e 0: ${base.ms.toFixed(1)} ms, RSS ${(base.rssKiB / 1024).toFixed(1)} MiB`)
  for (const files of [5, 50_000]) {
    const repo = makeRepo(files)
    await session(repo) // warm the compile cache
    const runs = []
    for (let i = 0; i < RUNS; i++) runs.push(await session(repo))
    const first = median(runs.map((r) => r.first))
    const gap = median(runs.map((r) => r.gap))
    const rss = Math.max(...runs.map((r) => r.rssKiB)) / 1024
    console.log(
      `${files} files: first request ${first.toFixed(1)} ms (${(first / base.ms).toFixed(2)}× node -e 0), ` +
        `median step gap ${gap.toFixed(2)} ms, peak RSS ${rss.toFixed(1)} MiB (${(rss / (base.rssKiB / 1024)).toFixed(2)}× node -e 0)`
    )
    rmSync(repo, { recursive: true, force: true })
  }
}

await main()
