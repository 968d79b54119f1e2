import { PgClient } from "@effect/sql-pg"
import { StoreError } from "@lathe/core"
import { type Duration, Effect, Redacted } from "effect"
import * as Reactivity from "effect/reactivity/Reactivity"
import { connectFailure, parsePgUrl } from "./pg-location.js"
import { MIGRATIONS_TABLE, pgMigrations } from "./pg-migrations.js"

/** What `checkPg` found: where the database is, and how far its schema is migrated. */
export interface PgCheck {
  /** `host:port/database` (no credentials). */
  readonly label: string
  /** The newest migration applied, or `undefined` when the store never ran there (it migrates on first use). */
  readonly schemaVersion: number | undefined
  /** The newest migration this Lathe knows. */
  readonly latest: number
}

/**
 * Connects to `url` once and reads the schema version, changing nothing (no migration, no table created): for
 * `lathe doctor`. Fails with the same `StoreError` as the store would when it cannot connect.
 */
export const checkPg = (
  url: string,
  options: { readonly connectTimeout?: Duration.Input } = {}
): Effect.Effect<PgCheck, StoreError> =>
  Effect.gen(function* () {
    const location = parsePgUrl(url)
    if (location instanceof StoreError) return yield* Effect.fail(location)
    const sql = yield* PgClient.make({
      url: Redacted.make(url),
      maxConnections: 1,
      connectTimeout: options.connectTimeout ?? "5 seconds",
      applicationName: "lathe doctor"
    }).pipe(Effect.mapError((error) => connectFailure(location.label, error)))
    const read = Effect.gen(function* () {
      const [table] = yield* sql<{
        readonly name: string | null
      }>`SELECT to_regclass(${MIGRATIONS_TABLE})::text AS name`
      if (!table?.name) return undefined
      const [row] = yield* sql<{
        readonly version: number | null
      }>`SELECT max(version) AS version FROM ${sql(MIGRATIONS_TABLE)}`
      return row?.version ?? undefined
    })
    const schemaVersion = yield* read.pipe(Effect.mapError((error) => connectFailure(location.label, error)))
    return { label: location.label, schemaVersion, latest: pgMigrations.at(-1)?.version ?? 0 } satisfies PgCheck
  }).pipe(Effect.scoped, Effect.provide(Reactivity.layer))
