import { defineCommand, parseCommand, pickSubcommand } from "../command-kit.js"
import type { CliIO, Command } from "../io.js"
import { redactUrl, storeUrl } from "./cluster-options.js"

const statusSpec = defineCommand({
  name: "cluster status",
  summary: "Runners (address, health, heartbeat), their shards and sessions, and the sessions waiting for one",
  usage: ["--store <postgres-url> [--json]"],
  description: `Shows a Lathe cluster as its shared Postgres records it: each runner (address, health, last heartbeat), the
shards it holds, and the sessions with a turn in flight on it; and the sessions waiting for a runner (their
shard has no owner: a runner just died, or none is up).`,
  options: {
    store: { type: "string", value: "<url>", description: "The shared Postgres (default: $LATHE_STORE)" },
    json: { type: "boolean", description: "One JSON object instead of the table" }
  },
  footer: "Exit codes: 0 shown, 1 could not read the database, 2 bad usage."
})

/** `lathe cluster`, declared once for the command kit. */
export const clusterSpec = defineCommand({
  name: "cluster",
  usage: ["status --store <postgres-url> [--json]"],
  subcommands: [statusSpec]
})

const ago = (ms: number) => (ms < 1_000 ? `${ms} ms ago` : `${(ms / 1_000).toFixed(1)} s ago`)

/** `lathe cluster status`. */
export const clusterCommand: Command = async (args, io: CliIO) => {
  const sub = pickSubcommand(clusterSpec, args, io)
  if (typeof sub === "number") return sub
  const parsed = parseCommand(statusSpec, sub.rest, io)
  if (typeof parsed === "number") return parsed
  const { values } = parsed
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
