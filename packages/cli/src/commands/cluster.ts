import { parseArgs } from "node:util"
import type { CliIO, Command } from "../io.js"
import { redactUrl, storeUrl } from "./cluster-options.js"

const usage = `Usage: lathe cluster status --store <postgres-url> [--json]

Shows a Lathe cluster as its shared Postgres records it: each runner (address, health, last heartbeat), the
shards it holds, and the sessions with a turn in flight on it; and the sessions waiting for a runner (their
shard has no owner: a runner just died, or none is up).

Options:
  --store <url>     The shared Postgres (default: $LATHE_STORE)
  --json            One JSON object instead of the table
  -h, --help        Show this help

Exit codes: 0 shown, 1 could not read the database, 2 bad usage.
`

const parse = (args: ReadonlyArray<string>) =>
  parseArgs({
    args: [...args],
    options: {
      store: { type: "string" },
      json: { type: "boolean" },
      help: { type: "boolean", short: "h" }
    },
    allowPositionals: true,
    strict: true
  })

const ago = (ms: number) => (ms < 1_000 ? `${ms} ms ago` : `${(ms / 1_000).toFixed(1)} s ago`)

/** `lathe cluster status`. */
export const clusterCommand: Command = async (args, io: CliIO) => {
  let parsed: ReturnType<typeof parse>
  try {
    parsed = parse(args)
  } catch (error) {
    io.stderr(`lathe cluster: ${error instanceof Error ? error.message : String(error)}\n`)
    return 2
  }
  const { values, positionals } = parsed
  if (values.help || positionals.length === 0) {
    io.stdout(usage)
    return values.help ? 0 : 2
  }
  if (positionals[0] !== "status" || positionals.length > 1) {
    io.stderr(`lathe cluster: unknown subcommand "${positionals.join(" ")}"; the one there is: status.\n`)
    return 2
  }
  const store = storeUrl("cluster status", values.store, io)
  if ("error" in store) {
    io.stderr(`${store.error}\n`)
    return 2
  }
  const { clusterStatus, pgLayer } = await import("@lathe/cluster")
  const { Effect } = await import("effect")
  const exit = await Effect.runPromiseExit(clusterStatus.pipe(Effect.provide(pgLayer(store.url, 1))))
  if (exit._tag === "Failure") {
    const reason = exit.cause.reasons[0]
    const error = reason?._tag === "Fail" ? reason.error : reason?._tag === "Die" ? reason.defect : "interrupted"
    const text = error instanceof Error ? error.message : String(error)
    io.stderr(`lathe cluster: could not read ${redactUrl(store.url)}: ${text}. Is Postgres running there?\n`)
    return 1
  }
  const status = exit.value
  if (values.json) {
    io.stdout(`${JSON.stringify(status)}\n`)
    return 0
  }
  if (status.runners.length === 0) io.stdout("No runner has joined this cluster (start one with `lathe runner`).\n")
  else {
    io.stdout("RUNNER                 HEALTHY  HEARTBEAT      SHARDS  ACTIVE SESSIONS\n")
    for (const runner of status.runners)
      io.stdout(
        `${runner.address.padEnd(22)} ${(runner.healthy ? "yes" : "no").padEnd(8)} ${ago(runner.heartbeatAgeMs).padEnd(14)} ${String(runner.shards).padEnd(7)} ${runner.activeSessions}\n`
      )
  }
  if (status.waitingSessions > 0)
    io.stdout(
      `${status.waitingSessions} session(s) wait for a runner (${status.unownedShardsWithWork} shard(s) without an owner).\n`
    )
  return 0
}
