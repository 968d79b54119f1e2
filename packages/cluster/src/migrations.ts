/**
 * The cluster package's own tables (the relay's event batches and per-session event numbers), beside Effect
 * Cluster's `cluster_*` tables and the store's `lathe_*` tables in one database. Versioned; applied under an advisory lock, so runners and servers that
 * start together do not race.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/** Each entry is one version; never edit a released one, append a new one. */
const MIGRATIONS: ReadonlyArray<ReadonlyArray<string>> = [
  [
    `CREATE TABLE IF NOT EXISTS lathe_event_batch (
       id bigserial PRIMARY KEY,
       created timestamptz NOT NULL DEFAULT now(),
       data jsonb NOT NULL
     )`,
    "CREATE INDEX IF NOT EXISTS lathe_event_batch_created ON lathe_event_batch (created)"
  ],
  // Event ids per session: the relay numbers each top-level session's events here, in its write transaction (the
  // row lock orders writers of one session). Sessions of older versions start at 1.
  ["CREATE TABLE IF NOT EXISTS lathe_event_seq (session_id text PRIMARY KEY, seq bigint NOT NULL)"]
]

/** An arbitrary constant that names this package's migration lock. */
const LOCK = 0x1a7e_c105

/** Brings the cluster tables up to date (idempotent). */
export const migrate = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.withTransaction(
    Effect.gen(function* () {
      yield* sql`SELECT pg_advisory_xact_lock(${LOCK})`
      yield* sql`CREATE TABLE IF NOT EXISTS lathe_cluster_migrations (version int PRIMARY KEY, applied timestamptz NOT NULL DEFAULT now())`
      const rows = yield* sql<{
        version: number
      }>`SELECT coalesce(max(version), 0) AS version FROM lathe_cluster_migrations`
      const current = Number(rows[0]?.version ?? 0)
      if (current > MIGRATIONS.length)
        return yield* Effect.die(
          new Error(
            `This database's Lathe cluster tables are at version ${current}, newer than this Lathe knows (${MIGRATIONS.length}); upgrade Lathe on this machine.`
          )
        )
      for (let version = current + 1; version <= MIGRATIONS.length; version++) {
        for (const statement of MIGRATIONS[version - 1] ?? []) yield* sql.unsafe(statement)
        yield* sql`INSERT INTO lathe_cluster_migrations (version) VALUES (${version})`
      }
    })
  )
})
