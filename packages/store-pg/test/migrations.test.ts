import { assert, describe, it } from "@effect/vitest"
import { SessionStore } from "@lathe/core"
import { Context, Effect, Layer } from "effect"
import { MIGRATIONS_TABLE, migrate, PgSessionStore, pgMigrations } from "../src/index.js"
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
const all = pgMigrations.map((m) => m.version)

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
        assert.deepStrictEqual(yield* versions(url), all)
      })
    )
  )

  it.live("a database from before work trees migrates: old sessions keep their data and list by directory", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const url = yield* freshDatabase
        // The database as the previous Lathe left it: the first migration only, rows without a tree.
        yield* withClient((sql) => migrate(sql, "old", pgMigrations.slice(0, 1)), url)
        yield* withClient(
          (sql) =>
            Effect.forEach(
              [
                ["ses_root", "/w/a", 1],
                ["ses_sub", "/w/a/src", 2],
                ["ses_clone", "/w/b", 3]
              ] as const,
              ([id, directory, updated]) =>
                sql`INSERT INTO lathe_session (id, project_id, parent_id, time_updated, data) VALUES (${id}, 'prj',
                  NULL, ${updated}, ${JSON.stringify({ id, projectID: "prj", directory, title: id, time: { created: updated, updated } })})`
            ),
          url
        )
        const store = yield* open(url)
        assert.deepStrictEqual(yield* versions(url), all)
        const ids = (sessions: ReadonlyArray<{ readonly id: string }>) => sessions.map((s) => s.id)
        assert.deepStrictEqual(ids(yield* store.listSessions({ projectID: "prj", tree: "/w/a" })), [
          "ses_sub",
          "ses_root"
        ])
        assert.deepStrictEqual(ids(yield* store.listSessions({ projectID: "prj", tree: "/w/b" })), ["ses_clone"])
        const before = yield* store.getSession("ses_sub")
        assert.strictEqual(before.tree, undefined)
        yield* store.putSession({ ...before, tree: "/w/other" })
        yield* store.flush
        assert.deepStrictEqual(ids(yield* store.listSessions({ tree: "/w/a" })), ["ses_root"])
        const rows = yield* withClient(
          (sql) => sql<{ readonly id: string; readonly tree: string | null; readonly directory: string }>`
            SELECT id, tree, directory FROM lathe_session ORDER BY id`,
          url
        )
        assert.deepStrictEqual(
          rows.map((row) => ({ ...row })),
          [
            { id: "ses_clone", tree: null, directory: "/w/b" },
            { id: "ses_root", tree: null, directory: "/w/a" },
            { id: "ses_sub", tree: "/w/other", directory: "/w/a/src" }
          ]
        )
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
        assert.deepStrictEqual(yield* versions(url), [...all, 99])
      })
    )
  )
})
