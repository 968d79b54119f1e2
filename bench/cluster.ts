/**
 * Cluster benchmark: sessions completed per minute with 1, 2 and 3 `lathe runner` processes behind one
 * `lathe serve --cluster`, all sharing a throwaway Postgres on loopback, against a scripted model; and failover time
 * (SIGKILL of the runner holding a session mid-step → the session's next event through the server's SSE), measured
 * FAILOVER_RUNS times on one cluster (each run kills the holder and starts a fresh runner in its place), reported as
 * the median and the worst.
 *
 * Each session is a three-step turn (a `write` tool call, a `read` tool call, a text answer); the model answers each
 * request after MODEL_MS, like a fast hosted model. Throughput is sessions finished per minute from the first prompt
 * to the last idle, ratios against one runner measured in the same run. Every process shares this machine's cores,
 * so more runners here measure the cluster's overhead and balance, not more hardware.
 *
 *   npx nx run @lathe/cli:bundle && npx tsx --conditions=@lathe/source bench/cluster.ts
 *
 * BENCH_SKIP_THROUGHPUT=1 measures failover only; BENCH_FROM_SOURCE=1 runs the CLI from source (tsx) instead of the
 * bundle (slower to start, same failover path).
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { type RecordedRequest, type ScriptedReply, startScriptedServer } from "@lathe/core/testing"
import { createLatheClient, type LatheEvent } from "@lathe/sdk"
import { startPostgres } from "../scripts/test-postgres.mjs"

const SESSIONS = 30
const MODEL_MS = 150
const FAILOVER_RUNS = 10
const SHARDS = "60"
const TOKEN = "bench-cluster-token"
const bin = process.env.BENCH_FROM_SOURCE
  ? fileURLToPath(new URL("../packages/cli/src/bin.ts", import.meta.url))
  : fileURLToPath(new URL("../packages/cli/dist/bundle/lathe.js", import.meta.url))
/** Node's arguments before the CLI's own. */
const node = process.env.BENCH_FROM_SOURCE ? ["--conditions=@lathe/source", "--import", import.meta.resolve("tsx")] : []

const median = (values: ReadonlyArray<number>) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN
}

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createServer()
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })

const toolResults = (request: RecordedRequest) => {
  const messages = (request.body as { messages?: Array<{ role: string }> }).messages ?? []
  const lastUser = messages.findLastIndex((m) => m.role === "user")
  return messages.slice(lastUser + 1).filter((m) => m.role === "tool").length
}

const marker = (request: RecordedRequest) => /\[(s\d+)\]/.exec(JSON.stringify(request.body))?.[1] ?? "s"

/** Three steps per session; `slow` sessions stream their second step for a few seconds (the failover window). */
const script = (request: RecordedRequest): ScriptedReply => {
  const step = toolResults(request)
  const name = marker(request)
  const slow = JSON.stringify(request.body).includes("[slow]")
  if (step === 0)
    return { steps: [{ tool: "write", input: { filePath: `${name}.txt`, content: `${name}\n` } }], delayMs: MODEL_MS }
  if (step === 1)
    return slow
      ? {
          steps: [
            ...Array.from({ length: 40 }, (_, i) => ({ text: `t${i} ` })),
            { tool: "read", input: { filePath: `${name}.txt` } }
          ],
          delayMs: 100
        }
      : { steps: [{ tool: "read", input: { filePath: `${name}.txt` } }], delayMs: MODEL_MS }
  return { steps: [{ text: "done" }], delayMs: MODEL_MS }
}

const waitLine = (child: ChildProcess, pattern: RegExp, what: string) =>
  new Promise<RegExpExecArray>((resolve, reject) => {
    let out = ""
    let err = ""
    const timer = setTimeout(() => reject(new Error(`${what} did not start:\n${err}`)), 60_000)
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8")
      const match = pattern.exec(out)
      if (match) {
        clearTimeout(timer)
        resolve(match)
      }
    })
    child.stderr?.on("data", (chunk: Buffer) => {
      err += chunk.toString("utf8")
    })
  })

interface Cluster {
  readonly url: string
  readonly runners: Array<{ child: ChildProcess; answered: () => Set<string> }>
  /** Starts one more runner and resolves once it joined. */
  readonly addRunner: () => Promise<void>
  readonly stop: () => Promise<void>
}

const startCluster = async (runnerCount: number, env: Record<string, string>, cwd: string): Promise<Cluster> => {
  const children: Array<ChildProcess> = []
  const runners: Cluster["runners"] = []
  const addRunner = async () => {
    const port = await freePort()
    const child = spawn(process.execPath, [...node, bin, "runner", "--port", String(port), "--shards", SHARDS], {
      cwd,
      env,
      stdio: ["ignore", "pipe", "pipe"]
    })
    let err = ""
    child.stderr?.on("data", (chunk: Buffer) => {
      err += chunk.toString("utf8")
      if (process.env.BENCH_VERBOSE) process.stderr.write(`[runner ${port}] ${chunk.toString("utf8")}`)
    })
    child.on("exit", (code, signal) => {
      if (signal !== "SIGKILL")
        process.stderr.write(`runner ${port} exited (${code ?? signal}):\n${err.slice(-1500)}\n`)
    })
    children.push(child)
    await waitLine(child, /runner \S+ joined/, "runner")
    runners.push({
      child,
      answered: () => new Set([...err.matchAll(/session (\S+): answering/g)].map((m) => m[1] ?? ""))
    })
  }
  for (let i = 0; i < runnerCount; i++) await addRunner()
  const serve = spawn(process.execPath, [...node, bin, "serve", "--port", "0", "--cluster", "--shards", SHARDS], {
    cwd,
    env,
    stdio: ["ignore", "pipe", "pipe"]
  })
  children.push(serve)
  serve.on("exit", (code, signal) => {
    if (signal !== "SIGKILL") process.stderr.write(`server exited (${code ?? signal})\n`)
  })
  const url = (await waitLine(serve, /listening on (http:\/\/\S+)/, "server"))[1] ?? ""
  // Let the runners settle their shards before timing anything.
  await new Promise((resolve) => setTimeout(resolve, 2_000))
  return {
    url,
    runners,
    addRunner,
    stop: async () => {
      await Promise.all(
        children.map(
          (child) =>
            new Promise<void>((resolve) => {
              if (child.exitCode !== null || child.signalCode !== null) return resolve()
              child.on("exit", () => resolve())
              child.kill("SIGKILL")
            })
        )
      )
    }
  }
}

const freshDb = (server: string, name: string) => {
  execFileSync("psql", [server, "-q", "-c", `CREATE DATABASE ${name}`])
  const url = new URL(server)
  url.pathname = `/${name}`
  return url.toString()
}

const main = async () => {
  const pg = await startPostgres()
  const model = await startScriptedServer(script)
  const dir = mkdtempSync(join(tmpdir(), "lathe-bench-cluster-"))
  const cwd = join(dir, "project")
  mkdirSync(cwd)
  writeFileSync(join(cwd, "README.md"), "bench\n")
  const baseEnv = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: join(dir, "home"),
    LATHE_DATA_DIR: join(dir, "data"),
    XDG_CONFIG_HOME: join(dir, "config"),
    XDG_DATA_HOME: join(dir, "xdg-data"),
    LATHE_BASE_URL: model.url,
    LATHE_MODEL: "m",
    LATHE_SERVER_TOKEN: TOKEN
  }
  const rows: Array<{ runners: number; perMinute: number; spread: string }> = []
  try {
    for (const count of process.env.BENCH_SKIP_THROUGHPUT ? [] : [1, 2, 3]) {
      const env = { ...baseEnv, LATHE_STORE: freshDb(pg.url, `bench_${count}`) }
      const cluster = await startCluster(count, env, cwd)
      process.stderr.write(`throughput: ${count} runner(s) up\n`)
      const client = createLatheClient({ baseUrl: cluster.url, token: TOKEN })
      const events = client.events()
      await events.ready
      const ids = await Promise.all(Array.from({ length: SESSIONS }, () => client.sessions.create({})))
      const pending = new Set(ids.map((s) => s.id))
      const finished = (async () => {
        for await (const event of events) {
          if (event.type === "session.idle") pending.delete(event.sessionID)
          if (pending.size === 0) break
        }
      })()
      const start = performance.now()
      await Promise.all(ids.map((s, i) => client.sessions.prompt(s.id, `[s${count}${i}] go`)))
      await finished
      const seconds = (performance.now() - start) / 1_000
      const spread = cluster.runners.map((r) => [...r.answered()].filter((id) => ids.some((s) => s.id === id)).length)
      rows.push({ runners: count, perMinute: (SESSIONS / seconds) * 60, spread: spread.join("/") })
      await cluster.stop()
    }

    const failovers: Array<number> = []
    const env = { ...baseEnv, LATHE_STORE: freshDb(pg.url, "bench_failover") }
    const cluster = await startCluster(2, env, cwd)
    const client = createLatheClient({ baseUrl: cluster.url, token: TOKEN })
    try {
      for (let run = 0; run < FAILOVER_RUNS; run++) {
        process.stderr.write(`failover run ${run + 1}\n`)
        const session = await client.sessions.create({})
        const events = client.events({ sessionID: session.id })
        await events.ready
        const seen: Array<{ at: number; event: LatheEvent }> = []
        let killedAt = Number.POSITIVE_INFINITY
        // Reads on after the first event past the kill (the run waits for the moved session to finish).
        const after = new Promise<number>((resolve) => {
          void (async () => {
            for await (const event of events) {
              const at = performance.now()
              seen.push({ at, event })
              if (at > killedAt) resolve(at - killedAt)
              if (at > killedAt && event.type === "session.idle") break
            }
          })()
        })
        await client.sessions.prompt(session.id, `[s9${run}] [slow] go`)
        // Wait until the slow second step streams, then kill the runner holding the session.
        const deadline = performance.now() + 60_000
        while (!seen.some((s) => s.event.type === "part.delta")) {
          if (performance.now() > deadline)
            throw new Error(`the session never streamed; events: ${seen.map((s) => s.event.type).join(", ")}`)
          await new Promise((resolve) => setTimeout(resolve, 20))
        }
        const holder = cluster.runners.find((r) => r.answered().has(session.id))
        if (!holder) throw new Error("no runner holds the session")
        killedAt = performance.now()
        holder.child.kill("SIGKILL")
        cluster.runners.splice(cluster.runners.indexOf(holder), 1)
        const took = await after
        process.stderr.write(`failover: the session's next event came ${Math.round(took)} ms after the kill\n`)
        failovers.push(took)
        // Let the session finish and a fresh runner take the dead one's place before the next run.
        while (!seen.some((s) => s.at > killedAt && s.event.type === "session.idle")) {
          if (performance.now() > deadline + 60_000)
            throw new Error(
              `the moved session never finished; events since the kill: ${seen
                .filter((s) => s.at > killedAt)
                .map((s) => s.event.type)
                .join(", ")}`
            )
          await new Promise((resolve) => setTimeout(resolve, 50))
        }
        await cluster.addRunner()
        await new Promise((resolve) => setTimeout(resolve, 2_000))
      }
    } finally {
      await cluster.stop()
    }

    const base = rows[0]?.perMinute ?? Number.NaN
    console.log(`cluster bench: ${SESSIONS} three-step sessions, model answers in ${MODEL_MS} ms, ${SHARDS} shards`)
    if (rows.length > 0) console.log("runners  sessions/min  ratio   sessions per runner")
    for (const row of rows)
      console.log(
        `${String(row.runners).padEnd(8)} ${row.perMinute.toFixed(0).padStart(12)}  ×${(row.perMinute / base).toFixed(2)}   ${row.spread}`
      )
    const sorted = [...failovers].sort((a, b) => a - b)
    console.log(
      `failover (SIGKILL → the moved session's next event), ${FAILOVER_RUNS} runs: median ${(median(failovers) / 1_000).toFixed(2)} s, ` +
        `worst ${((sorted.at(-1) ?? Number.NaN) / 1_000).toFixed(2)} s (runs: ${failovers.map((ms) => (ms / 1_000).toFixed(2)).join(", ")} s)`
    )
  } finally {
    await model.close()
    await pg.stop()
  }
}

await main()
