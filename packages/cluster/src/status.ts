/**
 * What `lathe cluster status` shows, read straight from the shared Postgres: the runners Effect Cluster knows, the
 * shards each holds, and the sessions with work in flight (a `Run` not yet answered) on each.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/** One runner as the cluster's tables describe it. */
export interface RunnerStatus {
  readonly address: string
  readonly healthy: boolean
  /** Milliseconds since its last heartbeat. */
  readonly heartbeatAgeMs: number
  /** Shards it holds the lock of. */
  readonly shards: number
  /** Sessions whose `Run` it holds and has not answered yet. */
  readonly activeSessions: number
}

/** The whole picture. */
export interface ClusterStatus {
  readonly runners: ReadonlyArray<RunnerStatus>
  /** Shards no runner holds now (a runner just died, or none is up). */
  readonly unownedShardsWithWork: number
  /** Sessions with a `Run` waiting and no runner holding their shard. */
  readonly waitingSessions: number
}

/**
 * Effect Cluster's advisory-lock namespace for the default `cluster` table prefix: the FNV-1a hash of
 * "effect-cluster:cluster" as an unsigned 32-bit number (a wire format the cluster promises never to change).
 */
const LOCK_NAMESPACE = (() => {
  let hash = 0x811c9dc5
  for (const byte of new TextEncoder().encode("effect-cluster:cluster")) hash = Math.imul(hash ^ byte, 0x01000193)
  return hash >>> 0
})()

const tableExists = (sql: SqlClient.SqlClient, name: string) =>
  Effect.map(sql<{ ok: boolean }>`SELECT to_regclass(${name}) IS NOT NULL AS ok`, (rows) => rows[0]?.ok === true)

/** Reads the cluster's state (empty when no runner ever joined this database). */
export const clusterStatus = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  if (!(yield* tableExists(sql, "cluster_runners")))
    return { runners: [], unownedShardsWithWork: 0, waitingSessions: 0 } satisfies ClusterStatus
  const runners = yield* sql<{ address: string; healthy: boolean; age: number }>`
    SELECT address, healthy, EXTRACT(EPOCH FROM (now() AT TIME ZONE 'UTC' - last_heartbeat)) * 1000 AS age
    FROM cluster_runners ORDER BY address`
  // Shard ownership is a Postgres advisory lock per shard (Effect Cluster's namespace for the `cluster` tables, lock
  // number 1,000,000 + shard for the first shard group), held by the runner's lock connection, whose
  // application_name names the runner.
  const locks = yield* sql<{ name: string; lock: number }>`
    SELECT a.application_name AS name, l.objid::bigint AS lock
    FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
    WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2 AND l.classid = ${LOCK_NAMESPACE}::bigint::oid
      AND a.application_name LIKE 'lathe-runner %'`.pipe(
    Effect.map((rows) =>
      rows.map((row) => ({
        shard_id: `default:${Number(row.lock) - 1_000_000}`,
        address: row.name.slice("lathe-runner ".length)
      }))
    )
  )
  const work = (yield* tableExists(sql, "cluster_messages"))
    ? yield* sql<{ shard_id: string; entity_id: string }>`
        SELECT DISTINCT shard_id, entity_id FROM cluster_messages
        WHERE entity_type = 'AgentSession' AND tag = 'Run' AND NOT processed`
    : []
  const owner = new Map(locks.map((lock) => [lock.shard_id, lock.address]))
  const shards = new Map<string, number>()
  for (const lock of locks) shards.set(lock.address, (shards.get(lock.address) ?? 0) + 1)
  const active = new Map<string, number>()
  const unowned = new Set<string>()
  let waiting = 0
  for (const item of work) {
    const address = owner.get(item.shard_id)
    if (address === undefined) {
      unowned.add(item.shard_id)
      waiting++
    } else active.set(address, (active.get(address) ?? 0) + 1)
  }
  return {
    runners: runners.map((runner) => ({
      address: runner.address,
      healthy: runner.healthy,
      heartbeatAgeMs: Math.max(0, Math.round(Number(runner.age))),
      shards: shards.get(runner.address) ?? 0,
      activeSessions: active.get(runner.address) ?? 0
    })),
    unownedShardsWithWork: unowned.size,
    waitingSessions: waiting
  } satisfies ClusterStatus
})
