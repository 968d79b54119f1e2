import { assert, describe, it } from "@effect/vitest"
import { SessionStore } from "@lathe/core"
import { Context, Effect, Layer } from "effect"
import { MIGRATIONS_TABLE, PgSessionStore, pgMigrations } from "../src/index.js"
import { freshDatabase, withClient } from "./pg.js"

const open = (url: string) =>
  Layer.build(PgSessionStore.layer({ url })).pipe(Effect.map((context) => Context.get(context, SessionStore)))

const versions = (url: string) =>
  withClient(
    (sql) => sql<{ readonly version: number }>`SELECT version FROM lathe_store_migrations ORDER BY version`,
    url
  ).pipe(Effect.map((rows) => rows.map((row) => row.version)))

const tables = (url: string) =>
  withClient(
    (sql) =>
      sql<{ readonly name: string }>`SELECT table_name AS name FROM information_schema.tables
        WHERE table_schema = 'public' ORDER BY table_name`,
    url
  ).pipe(Effect.map((rows) => rows.map((row) => row.name)))

const latest = pgMigrations.at(-1)?.version ?? 0

describe("PgSessionStore migrations", () => {
  it.live("a fresh database gets every lathe_ table and one row per migration", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const url = yield* freshDatabase
        yield* open(url)
        assert.deepStrictEqual(yield* tables(url), ["lathe_message", "lathe_part", "lathe_session", MIGRATIONS_TABLE])
        assert.deepStrictEqual(
          yield* versions(url),
          pgMigrations.map((m) => m.version)
        )
      })
    )
  )

  it.live("building the store again on a migrated database changes nothing and keeps the data", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const url = yield* freshDatabase
        yield* Effect.scoped(
          Effect.gen(function* () {
            const store = yield* open(url)
            yield* store.putSession({
              id: "ses_a",
              projectID: "p",
              directory: "/w",
              title: "kept",
              time: { created: 1, updated: 1 }
            })
          })
        )
        const before = yield* withClient((sql) => sql`SELECT version, applied_at FROM lathe_store_migrations`, url)
        const store = yield* open(url)
        assert.strictEqual((yield* store.getSession("ses_a")).title, "kept")
        const after = yield* withClient((sql) => sql`SELECT version, applied_at FROM lathe_store_migrations`, url)
        assert.deepStrictEqual(after, before)
      })
    )
  )

  it.live("four stores starting at once on one fresh database all succeed (the advisory lock serializes them)", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const url = yield* freshDatabase
        const stores = yield* Effect.all([open(url), open(url), open(url), open(url)], { concurrency: "unbounded" })
        assert.strictEqual(stores.length, 4)
        assert.deepStrictEqual(yield* versions(url), [latest])
      })
    )
  )

  it.live("a database migrated by a newer Lathe is refused with advice, and left untouched", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const url = yield* freshDatabase
        yield* Effect.scoped(open(url))
        yield* withClient((sql) => sql`INSERT INTO lathe_store_migrations (version, name) VALUES (99, 'future')`, url)
        const error = yield* Effect.scoped(open(url)).pipe(Effect.flip)
        assert.strictEqual(error._tag, "StoreError")
        assert.match(
          error.message,
          new RegExp(
            `^The Postgres session store at 127\\.0\\.0\\.1:\\d+/t_\\w+ has schema version 99, but this Lathe knows ` +
              `versions up to ${latest}: it was migrated by a newer Lathe\\. Upgrade Lathe, or point LATHE_STORE`
          )
        )
        assert.deepStrictEqual(yield* versions(url), [latest, 99])
      })
    )
  )
})
