/**
 * Test databases on the throwaway Postgres server of the run (`scripts/test-postgres.mjs`, the vitest
 * globalSetup). Each store a test builds gets a database of its own (`t_<random>`), dropped when it is released, so
 * test files and tests never see each other's rows.
 */
import { randomBytes } from "node:crypto"
import { PgClient } from "@effect/sql-pg"
import type { SessionStore, StoreError } from "@lathe/core"
import { Effect, Layer, Redacted, type Scope } from "effect"
import * as Reactivity from "effect/reactivity/Reactivity"
import type { SqlClient } from "effect/sql/SqlClient"
import { PgSessionStore, type PgStoreOptions } from "../src/index.js"

/** The server's URL, as the globalSetup left it in the environment. */
export const serverUrl = (): string => {
  const url = process.env.LATHE_TEST_PG_URL
  if (!url)
    throw new Error("LATHE_TEST_PG_URL is not set: run these tests through vitest (its globalSetup starts Postgres).")
  return url
}

/** Runs `body` on a one-connection client to `url` (the server's own database by default). */
export const withClient = <A, E>(body: (sql: SqlClient) => Effect.Effect<A, E>, url = serverUrl()) =>
  Effect.scoped(PgClient.make({ url: Redacted.make(url), maxConnections: 1 }).pipe(Effect.flatMap(body))).pipe(
    Effect.provide(Reactivity.layer),
    Effect.orDie
  )

/** The URL of `database` on the test server. */
export const databaseUrl = (database: string): string => {
  const url = new URL(serverUrl())
  url.pathname = `/${database}`
  return url.toString()
}

/** A new empty database for the current scope, dropped (with its connections) when the scope closes. */
export const freshDatabase: Effect.Effect<string, never, Scope.Scope> = Effect.acquireRelease(
  Effect.gen(function* () {
    const name = `t_${randomBytes(6).toString("hex")}`
    yield* withClient((sql) => sql.unsafe(`CREATE DATABASE ${name}`))
    return name
  }),
  (name) => withClient((sql) => sql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))
).pipe(Effect.map(databaseUrl))

/** A store on a fresh database of its own (for the contract: every build starts empty). */
export const freshStore = (options: PgStoreOptions = {}): Layer.Layer<SessionStore, StoreError> =>
  Layer.unwrap(Effect.map(freshDatabase, (url) => PgSessionStore.layer({ url, ...options })))
