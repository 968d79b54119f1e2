/**
 * The session store under a text stream: 100,000 deltas of one part through `putPart` (each call carries the whole
 * part, as the loop sends it), with a `flush` every 1,000 deltas (a step's end), into the SQLite store, against the
 * in-memory store as the baseline measured in the same run, and into the Postgres store (`@lathe/store-pg`, on a
 * throwaway server from Debian's PostgreSQL on loopback, each round on a fresh database; skipped with a note when no
 * server binaries are installed; that server runs with fsync off, so its figure leaves out disk syncs). Each run is a fresh child process, so its peak RSS is its own (medians of
 * three); a process that only loads the modules is measured too, as the floor.
 *
 *   npx tsx --conditions=@lathe/source bench/store.ts
 */
import { execFileSync } from "node:child_process"
import { mkdtempSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { SessionStore, SqliteSessionStore } from "@lathe/core"
import type { Part } from "@lathe/plugin/schema"
import { PgSessionStore } from "@lathe/store-pg"
import { Effect, type Layer } from "effect"
import { startPostgres } from "../scripts/test-postgres.mjs"

const DELTAS = 100_000
const FLUSH_EVERY = 1_000
const ROUNDS = 3

type Variant = "idle" | "memory" | "sqlite" | "postgres"
interface Result {
  readonly variant: Variant
  /** Median deltas per second over the rounds. */
  readonly rate: number
  /** Peak resident set of the whole process, MiB. */
  readonly peakRss: number
  /** Size of the database after the run, bytes (SQLite file + WAL, or the Postgres database). */
  readonly bytes?: number
}

const run = (store: Layer.Layer<SessionStore, unknown>) =>
  Effect.gen(function* () {
    const sessions = yield* SessionStore
    yield* sessions.putSession({
      id: "ses_bench",
      projectID: "prj",
      directory: "/work",
      title: "bench",
      time: { created: 0, updated: 0 }
    })
    yield* sessions.putMessage({
      id: "msg_1",
      sessionID: "ses_bench",
      role: "assistant",
      parentID: "msg_0",
      agent: "build",
      model: { providerID: "p", modelID: "m" },
      path: { cwd: "/work", root: "/work" },
      time: { created: 0 },
      tokens: { input: 0, output: 0, reasoning: 0, cache: { read: 0, write: 0 } },
      cost: 0
    })
    let text = ""
    const start = performance.now()
    for (let i = 0; i < DELTAS; i++) {
      text += `w${i % 10} `
      const part: Part = { id: "prt_1", sessionID: "ses_bench", messageID: "msg_1", type: "text", text }
      yield* sessions.putPart(part)
      if ((i + 1) % FLUSH_EVERY === 0) yield* sessions.flush
    }
    yield* sessions.flush
    const seconds = (performance.now() - start) / 1000
    const [message] = yield* sessions.messages("ses_bench")
    const stored = message?.parts[0]
    if (stored?.type !== "text" || stored.text !== text) throw new Error("the store lost deltas")
    return DELTAS / seconds
  }).pipe(Effect.scoped, Effect.provide(store))

/** Runs `sql` on the Postgres server of `BENCH_PG_URL` (its own database), with psql. */
const psql = (sql: string, url = process.env.BENCH_PG_URL ?? "") =>
  execFileSync("psql", [url, "-At", "-c", sql], { encoding: "utf8" }).trim()

/** A Postgres store on a fresh database of the bench server, dropped afterwards; its size in bytes at the end. */
const postgresRun = async (): Promise<{ rate: number; bytes: number }> => {
  const name = `bench_${process.pid}`
  psql(`CREATE DATABASE ${name}`)
  const url = new URL(process.env.BENCH_PG_URL ?? "")
  url.pathname = `/${name}`
  try {
    const rate = await Effect.runPromise(run(PgSessionStore.layer({ url: url.toString() })))
    return { rate, bytes: Number(psql(`SELECT pg_database_size('${name}')`)) }
  } finally {
    psql(`DROP DATABASE ${name} WITH (FORCE)`)
  }
}

/** One run of one variant, in this process. */
const child = async (variant: Variant): Promise<Result> => {
  if (variant === "idle") return { variant, rate: 0, peakRss: process.resourceUsage().maxRSS / 1024 }
  if (variant === "postgres") {
    const { rate, bytes } = await postgresRun()
    return { variant, rate, peakRss: process.resourceUsage().maxRSS / 1024, bytes }
  }
  const dir = mkdtempSync(join(tmpdir(), "lathe-bench-store-"))
  const file = join(dir, "lathe.db")
  try {
    const layer = variant === "memory" ? SessionStore.memory : SqliteSessionStore.layerFile(file)
    const rate = await Effect.runPromise(run(layer))
    const peakRss = process.resourceUsage().maxRSS / 1024
    if (variant === "memory") return { variant, rate, peakRss }
    const wal = statSync(`${file}-wal`, { throwIfNoEntry: false })?.size ?? 0
    return { variant, rate, peakRss, bytes: statSync(file).size + wal }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** Runs a variant in `ROUNDS` fresh processes; the median throughput and the median peak RSS. */
const spawnVariant = (variant: Variant, env: NodeJS.ProcessEnv = process.env): Result => {
  const results = Array.from({ length: ROUNDS }, (): Result => {
    const out = execFileSync(
      process.execPath,
      ["--conditions=@lathe/source", "--import", "tsx", fileURLToPath(import.meta.url), variant],
      { encoding: "utf8", env }
    )
    return JSON.parse(out.trim().split("\n").at(-1) ?? "{}") as Result
  })
  const median = (pick: (result: Result) => number) =>
    results.map(pick).sort((a, b) => a - b)[Math.floor(ROUNDS / 2)] ?? 0
  const bytes = results[0]?.bytes
  return { variant, rate: median((r) => r.rate), peakRss: median((r) => r.peakRss), ...(bytes ? { bytes } : {}) }
}

const variant = process.argv[2] as Variant | undefined
if (variant) {
  process.stdout.write(`${JSON.stringify(await child(variant))}\n`)
} else {
  const [idle, memory, sqlite] = (["idle", "memory", "sqlite"] as const).map((name) => spawnVariant(name))
  if (!idle || !memory || !sqlite) throw new Error("a variant did not report")
  let postgres: Result | string
  try {
    const server = await startPostgres()
    try {
      postgres = spawnVariant("postgres", { ...process.env, BENCH_PG_URL: server.url })
    } finally {
      await server.stop()
    }
  } catch (error) {
    postgres = `skipped (${error instanceof Error ? error.message.split("\n")[0] : String(error)})`
  }
  const rate = (n: number) => `${Math.round(n).toLocaleString("en-US")} deltas/s`
  const mib = (n: number) => `${n.toFixed(0)} MiB`
  const pgLines =
    typeof postgres === "string"
      ? [`Postgres store:          ${postgres}`]
      : [
          `Postgres store:          ${rate(postgres.rate)}, peak RSS ${mib(postgres.peakRss)}, database ${((postgres.bytes ?? 0) / 1024).toFixed(0)} KiB`,
          `ratio Postgres/SQLite:   ${(postgres.rate / sqlite.rate).toFixed(2)}× the throughput ` +
            `(Postgres/memory ${(postgres.rate / memory.rate).toFixed(2)}×)`
        ]
  process.stdout.write(
    `${[
      `${DELTAS.toLocaleString("en-US")} deltas of one part, flush every ${FLUSH_EVERY}, median of ${ROUNDS} processes each`,
      `memory store (baseline): ${rate(memory.rate)}, peak RSS ${mib(memory.peakRss)}`,
      `SQLite store:            ${rate(sqlite.rate)}, peak RSS ${mib(sqlite.peakRss)}, file ${((sqlite.bytes ?? 0) / 1024).toFixed(0)} KiB`,
      `ratio SQLite/memory:     ${(sqlite.rate / memory.rate).toFixed(2)}× the throughput, ` +
        `${(sqlite.peakRss - idle.peakRss).toFixed(0)} vs ${(memory.peakRss - idle.peakRss).toFixed(0)} MiB above a process that only loads the modules (${mib(idle.peakRss)})`,
      ...pgLines
    ].join("\n")}\n`
  )
}
