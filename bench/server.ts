/**
 * Server benchmark: the same scripted turn (a long answer of DELTAS text deltas from a scripted OpenAI-compatible
 * server on 127.0.0.1) run three ways, RUNS times each, medians reported:
 *
 * - baseline: in-process `lathe run --format json`, from spawning the process to its first event line on stdout,
 *   and events per second from its first to its last event line;
 * - `lathe run --attach` to a warm `lathe serve`, measured the same way (what a person at a terminal sees);
 * - the SDK's Promise client against the same warm server: from `POST /sessions/:id/prompt` to the turn's first
 *   event through SSE, and events per second through SSE.
 *
 * The CLI runs from its bundle (`packages/cli/dist/bundle/lathe.js`, what users run) on both sides. Ratios are
 * against the baseline of the same run: for latency lower is better, for events/s higher is better.
 *
 *   npx nx run @lathe/cli:bundle && npx tsx --conditions=@lathe/source bench/server.ts
 */
import { type ChildProcess, spawn } from "node:child_process"
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { type ScriptedReply, startScriptedServer } from "@lathe/core/testing"
import { createLatheClient } from "@lathe/sdk"

const DELTAS = 3_000
const RUNS = 5
const TOKEN = "bench"
const bin = fileURLToPath(new URL("../packages/cli/dist/bundle/lathe.js", import.meta.url))

const median = (values: ReadonlyArray<number>) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN
}

const longAnswer = (): ScriptedReply => ({ steps: Array.from({ length: DELTAS }, (_, i) => ({ text: `word${i} ` })) })

const project = () => {
  const dir = mkdtempSync(join(tmpdir(), "lathe-bench-server-"))
  const root = join(dir, "project")
  mkdirSync(root)
  writeFileSync(join(root, "a.txt"), "alpha\n")
  const env = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: join(dir, "home"),
    LATHE_DATA_DIR: join(dir, "data"),
    XDG_CONFIG_HOME: join(dir, "config"),
    XDG_DATA_HOME: join(dir, "xdg-data")
  }
  return { root, env }
}

const lathe = (args: ReadonlyArray<string>, cwd: string, env: Record<string, string>): ChildProcess =>
  spawn(process.execPath, [bin, ...args], {
    cwd,
    env,
    stdio: ["ignore", "pipe", "pipe"]
  })

/** Spawns `lathe run --format json …` and times its event lines: first one after spawn, then the rate. */
const timedRun = (args: ReadonlyArray<string>, cwd: string, env: Record<string, string>) =>
  new Promise<{ firstMs: number; eventsPerSecond: number; events: number }>((resolve, reject) => {
    const start = performance.now()
    const child = lathe(["run", "--format", "json", ...args], cwd, env)
    let first = 0
    let last = 0
    let events = 0
    let partial = ""
    let stderr = ""
    child.stdout?.on("data", (chunk: Buffer) => {
      const lines = (partial + chunk.toString("utf8")).split("\n")
      partial = lines.pop() ?? ""
      const now = performance.now()
      for (const line of lines) {
        if (!line.startsWith("{")) continue
        if (events++ === 0) first = now
        last = now
      }
    })
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8")
    })
    child.on("error", reject)
    child.on("close", (code) => {
      if (code !== 0) reject(new Error(`lathe ${args.join(" ")} exited ${code}: ${stderr}`))
      else resolve({ firstMs: first - start, eventsPerSecond: (events - 1) / ((last - first) / 1000), events })
    })
  })

const startServe = (cwd: string, env: Record<string, string>) =>
  new Promise<{ url: string; child: ChildProcess }>((resolve, reject) => {
    const child = lathe(["serve", "--port", "0", "--token", TOKEN], cwd, env)
    let out = ""
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8")
      const match = /^listening on (\S+)\n/.exec(out)
      if (match?.[1]) resolve({ url: match[1], child })
    })
    child.on("error", reject)
    child.on("exit", (code) => reject(new Error(`lathe serve exited ${code}`)))
  })

/** One turn through the SDK: prompt to first event of the turn, and the SSE event rate. */
const sdkTurn = async (url: string) => {
  const client = createLatheClient({ baseUrl: url, token: TOKEN })
  const session = await client.sessions.create()
  const stop = new AbortController()
  const events = client.events({ sessionID: session.id, signal: stop.signal })
  await events.ready
  const start = performance.now()
  await client.sessions.prompt(session.id, "write a long answer")
  let first = 0
  let last = 0
  let count = 0
  for await (const event of events) {
    const now = performance.now()
    if (count++ === 0) first = now
    last = now
    if (event.type === "session.idle") break
  }
  stop.abort()
  return { firstMs: first - start, eventsPerSecond: (count - 1) / ((last - first) / 1000), events: count }
}

const model = await startScriptedServer(() => longAnswer())
const local = project()
const remote = project()
const modelEnv = { LATHE_BASE_URL: model.url, LATHE_MODEL: "m" }
const server = await startServe(remote.root, { ...remote.env, ...modelEnv })

const localRuns: Array<Awaited<ReturnType<typeof timedRun>>> = []
const attachRuns: Array<Awaited<ReturnType<typeof timedRun>>> = []
const sdkRuns: Array<Awaited<ReturnType<typeof sdkTurn>>> = []
for (let i = 0; i < RUNS; i++) {
  localRuns.push(await timedRun(["write a long answer"], local.root, { ...local.env, ...modelEnv }))
  attachRuns.push(
    await timedRun(["--attach", server.url, "--token", TOKEN, "write a long answer"], remote.root, remote.env)
  )
  sdkRuns.push(await sdkTurn(server.url))
}
server.child.kill("SIGTERM")
await model.close()

const row = (name: string, runs: ReadonlyArray<{ firstMs: number; eventsPerSecond: number; events: number }>) => {
  const first = median(runs.map((r) => r.firstMs))
  const rate = median(runs.map((r) => r.eventsPerSecond))
  return { name, first, rate, events: median(runs.map((r) => r.events)) }
}
const base = row("lathe run (in process, baseline)", localRuns)
const rows = [
  base,
  row("lathe run --attach (spawn → first event)", attachRuns),
  row("SDK client (prompt → first event)", sdkRuns)
]
console.log(`server benchmark: ${DELTAS} text deltas per turn, ${RUNS} runs, medians (${process.version})`)
for (const r of rows)
  console.log(
    `${r.name.padEnd(42)} first event ${r.first.toFixed(0).padStart(6)} ms (×${(r.first / base.first).toFixed(2)})` +
      `   ${r.rate.toFixed(0).padStart(7)} events/s (×${(r.rate / base.rate).toFixed(2)})   ${r.events} events`
  )
