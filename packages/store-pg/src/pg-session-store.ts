import { PgClient } from "@effect/sql-pg"
import { SessionStore, StoreError } from "@lathe/core"
import { type Duration, Effect, Layer, Option, Redacted } from "effect"
import * as Reactivity from "effect/reactivity/Reactivity"
import { SqlClient } from "effect/sql"
import { makePgStore, type PgStoreOptions } from "./make-pg-store.js"
import { connectFailure, parsePgUrl } from "./pg-location.js"

/** Where the store is and how it connects. */
export interface PgStoreConnection extends PgStoreOptions {
  /** `postgres://user:password@host:5432/database`. */
  readonly url: string
  /** Most connections the store's pool opens (default 10). */
  readonly maxConnections?: number
  /** How long to wait for a connection at start (default 10 s). */
  readonly connectTimeout?: Duration.Input
}

/** `host:port/database` of the client when it is a `PgClient`, else a generic name. */
const clientLabel = Effect.map(Effect.serviceOption(PgClient.PgClient), (client) =>
  Option.match(client, {
    onNone: () => "(shared SQL client)",
    onSome: ({ config }) => {
      if (config.url !== undefined) {
        const location = parsePgUrl(Redacted.value(config.url))
        if (!(location instanceof StoreError)) return location.label
      }
      return `${config.host ?? "localhost"}:${config.port ?? 5432}/${config.database ?? config.username ?? "postgres"}`
    }
  })
)

/** `error` with the URL's password masked, should a server or driver message ever echo it. */
const withoutPassword = (error: StoreError, url: string): StoreError => {
  let password = ""
  try {
    password = decodeURIComponent(new URL(url).password)
  } catch {}
  if (password === "" || !error.message.includes(password)) return error
  return new StoreError({ operation: error.operation, message: error.message.replaceAll(password, "***") })
}

/** `SessionStore` layers on PostgreSQL (through Effect's `SqlClient` and `@effect/sql-pg`). */
export const PgSessionStore = {
  /**
   * A store with its own connection pool to `url`. Connecting and migrating happen when the layer is built: a
   * database that cannot be reached, or was migrated by a newer Lathe, fails the build with a `StoreError` that
   * names host:port/database (never the password) and says what to check.
   */
  layer: (options: PgStoreConnection): Layer.Layer<SessionStore, StoreError> =>
    Layer.effect(
      SessionStore,
      Effect.gen(function* () {
        const location = parsePgUrl(options.url)
        if (location instanceof StoreError) return yield* Effect.fail(location)
        const client = yield* PgClient.make({
          url: Redacted.make(options.url),
          connectTimeout: options.connectTimeout ?? "10 seconds",
          applicationName: "lathe",
          ...(options.maxConnections === undefined ? {} : { maxConnections: options.maxConnections })
        }).pipe(Effect.mapError((error) => connectFailure(location.label, error)))
        return yield* makePgStore(client, location.label, options)
      }).pipe(Effect.mapError((error) => withoutPassword(error, options.url)))
    ).pipe(Layer.provide(Reactivity.layer)),
  /**
   * A store over a `SqlClient` the caller provides (for example the pool Effect Cluster already uses), so one
   * pool serves both. The client must speak PostgreSQL.
   */
  layerFromClient: (options: PgStoreOptions = {}): Layer.Layer<SessionStore, StoreError, SqlClient.SqlClient> =>
    Layer.effect(
      SessionStore,
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const label = yield* clientLabel
        const isPg = sql.onDialectOrElse({ pg: () => true, orElse: () => false })
        if (!isPg) {
          return yield* Effect.fail(
            new StoreError({
              operation: "open",
              message: "PgSessionStore needs a PostgreSQL SqlClient (@effect/sql-pg)."
            })
          )
        }
        return yield* makePgStore(sql, label, options)
      })
    )
} as const
