import { StoreError } from "@lathe/core"
import { Effect } from "effect"
import type { SqlClient } from "effect/sql/SqlClient"
import { describeError } from "./pg-location.js"

/** One schema change: `version` counts up from 1 and never changes meaning once released. */
export interface PgMigration {
  readonly version: number
  readonly name: string
  /** Statements run in order, in the migration's transaction. */
  readonly statements: ReadonlyArray<string>
}

/** The table recording which migrations ran (one row per version). */
export const MIGRATIONS_TABLE = "lathe_store_migrations"

/**
 * The store's schema, oldest first. Every table starts with `lathe_` so the store can share a database with
 * Effect Cluster's `cluster_*` tables. Payloads are JSON kept as `text`, not `jsonb`: `jsonb` refuses the
 * `\u0000` escape a tool's output may hold, and text gives back exactly what was written.
 */
export const pgMigrations: ReadonlyArray<PgMigration> = [
  {
    version: 1,
    name: "sessions, messages and parts",
    statements: [
      `CREATE TABLE lathe_session (
        id text PRIMARY KEY,
        project_id text NOT NULL,
        parent_id text,
        time_updated double precision NOT NULL,
        data text NOT NULL
      )`,
      "CREATE INDEX lathe_session_by_update ON lathe_session (time_updated DESC, id DESC)",
      "CREATE INDEX lathe_session_by_parent ON lathe_session (parent_id)",
      `CREATE TABLE lathe_message (
        session_id text NOT NULL,
        id text NOT NULL,
        data text NOT NULL,
        PRIMARY KEY (session_id, id)
      )`,
      `CREATE TABLE lathe_part (
        session_id text NOT NULL,
        message_id text NOT NULL,
        id text NOT NULL,
        data text NOT NULL,
        PRIMARY KEY (session_id, message_id, id),
        FOREIGN KEY (session_id, message_id) REFERENCES lathe_message (session_id, id) ON DELETE CASCADE
      )`
    ]
  },
  {
    version: 2,
    // A row stored before keeps `tree` NULL (SQL cannot ask git for the root) and gets its directory copied out, so
    // a listing per tree needs no git call: a NULL-tree row belongs to the tree its directory is in (`inTree`).
    name: "each session's work tree and directory",
    statements: [
      "ALTER TABLE lathe_session ADD COLUMN tree text",
      "ALTER TABLE lathe_session ADD COLUMN directory text",
      "UPDATE lathe_session SET directory = data::json ->> 'directory', tree = data::json ->> 'tree'",
      "CREATE INDEX lathe_session_by_tree ON lathe_session (project_id, tree, time_updated DESC)"
    ]
  }
]

/**
 * Brings the database up to the last of `migrations`, in one transaction under a transaction-scoped advisory
 * lock, so processes starting at once take turns and each sees the others' work (a second run is a no-op). A
 * database already past the last known version (migrated by a newer Lathe) is refused and left untouched.
 * Returns the versions it applied.
 */
export const migrate = (
  sql: SqlClient,
  label: string,
  migrations: ReadonlyArray<PgMigration> = pgMigrations
): Effect.Effect<ReadonlyArray<number>, StoreError> => {
  const latest = migrations.at(-1)?.version ?? 0
  const run = Effect.gen(function* () {
    yield* sql.unsafe("SELECT pg_advisory_xact_lock(hashtext($1))", [MIGRATIONS_TABLE])
    yield* sql.unsafe(
      `CREATE TABLE IF NOT EXISTS ${MIGRATIONS_TABLE} (
        version integer PRIMARY KEY,
        name text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`
    )
    const rows = yield* sql.unsafe<{ readonly version: number | null }>(
      `SELECT max(version) AS version FROM ${MIGRATIONS_TABLE}`
    )
    const current = rows[0]?.version ?? 0
    if (current > latest) {
      return yield* Effect.fail(
        new StoreError({
          operation: "migrate",
          message:
            `The Postgres session store at ${label} has schema version ${current}, but this Lathe knows versions up ` +
            `to ${latest}: it was migrated by a newer Lathe. Upgrade Lathe, or point LATHE_STORE at another database.`
        })
      )
    }
    const pending = migrations.filter((migration) => migration.version > current)
    for (const migration of pending) {
      for (const statement of migration.statements) yield* sql.unsafe(statement)
      yield* sql.unsafe(`INSERT INTO ${MIGRATIONS_TABLE} (version, name) VALUES ($1, $2)`, [
        migration.version,
        migration.name
      ])
    }
    return pending.map((migration) => migration.version)
  })
  return sql.withTransaction(run).pipe(
    Effect.catchTag("SqlError", (error) =>
      Effect.fail(
        new StoreError({
          operation: "migrate",
          message:
            `Cannot create or update the session tables in the Postgres store at ${label}: ${describeError(error)}. ` +
            "The user in the URL needs to be allowed to create tables in that database."
        })
      )
    ),
    Effect.withSpan("PgSessionStore.migrate")
  )
}
