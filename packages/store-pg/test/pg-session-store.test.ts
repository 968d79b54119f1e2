import { assert, describe, it } from "@effect/vitest"
import { SessionStore } from "@lathe/core"
import { assistant, session, text, user } from "@lathe/core/testing/store-contract"
import type { Part } from "@lathe/plugin/schema"
import { Context, Effect, Fiber, Layer } from "effect"
import { PgSessionStore, type PgStoreOptions } from "../src/index.js"
import { freshDatabase, withClient } from "./pg.js"

/** A store with its own pool on `url`, for the current scope. */
const open = (url: string, options: PgStoreOptions = {}) =>
  Layer.build(PgSessionStore.layer({ url, maxConnections: 2, ...options })).pipe(
    Effect.map((context) => Context.get(context, SessionStore))
  )

const textOf = (parts: ReadonlyArray<Part>) => parts.map((part) => (part.type === "text" ? part.text : part.type))

const partRows = (url: string) =>
  withClient(
    (sql) => sql<{ readonly id: string; readonly data: string }>`SELECT id, data FROM lathe_part ORDER BY id`,
    url
  )

describe("PgSessionStore", () => {
  it.live("a part whose message another process deleted is dropped; the rest of the batch is saved", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const url = yield* freshDatabase
        const [a, b] = [yield* open(url), yield* open(url)]
        yield* a.putSession(session("ses_a", 1))
        yield* a.putMessage(user("ses_a", "msg_1"))
        yield* a.putMessage(user("ses_a", "msg_2"))
        yield* a.flush
        yield* a.putPart(text("ses_a", "msg_1", "prt_1", "orphaned"))
        yield* a.putPart(text("ses_a", "msg_2", "prt_2", "kept"))
        yield* b.removeMessage("ses_a", "msg_1")
        yield* a.flush
        const messages = yield* b.messages("ses_a")
        assert.deepStrictEqual(
          messages.map((m) => [m.info.id, textOf(m.parts)]),
          [["msg_2", ["kept"]]]
        )
        assert.deepStrictEqual(
          (yield* partRows(url)).map((row) => row.id),
          ["prt_2"]
        )
      })
    )
  )

  it.live("1,000 text deltas of one part are coalesced into a single row write with the final text", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const url = yield* freshDatabase
        const store = yield* open(url, { flushDelay: "1 hour" })
        // A trigger added from outside counts every row the store really writes to lathe_part.
        yield* withClient(
          (sql) =>
            Effect.all([
              sql`CREATE TABLE write_log (id text)`,
              sql.unsafe(`CREATE FUNCTION log_part() RETURNS trigger AS $$
                BEGIN INSERT INTO write_log VALUES (NEW.id); RETURN NEW; END $$ LANGUAGE plpgsql`),
              sql`CREATE TRIGGER part_write AFTER INSERT OR UPDATE ON lathe_part FOR EACH ROW EXECUTE FUNCTION log_part()`
            ]),
          url
        )
        yield* store.putSession(session("ses_a", 1))
        yield* store.putMessage(assistant("ses_a", "msg_1", "msg_0"))
        let value = ""
        for (let i = 0; i < 1_000; i++) {
          value += `d${i} `
          yield* store.putPart(text("ses_a", "msg_1", "prt_1", value))
        }
        yield* store.flush
        const log = yield* withClient((sql) => sql<{ readonly id: string }>`SELECT id FROM write_log`, url)
        assert.deepStrictEqual(log, [{ id: "prt_1" }])
        const [row] = yield* partRows(url)
        assert.strictEqual(JSON.parse(String(row?.data)).text, value)
      })
    )
  )

  it.live("writes a batch on its own after flushDelay, and when the store shuts down", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const url = yield* freshDatabase
        yield* Effect.scoped(
          Effect.gen(function* () {
            // A delay well above what reading the rows back takes on a loaded machine (30 ms flaked in CI).
            const store = yield* open(url, { flushDelay: "1 second" })
            yield* store.putSession(session("ses_a", 1))
            yield* store.putMessage(user("ses_a", "msg_1"))
            yield* store.putPart(text("ses_a", "msg_1", "prt_1", "timer"))
            assert.deepStrictEqual(yield* partRows(url), [], "nothing is written before the delay")
            yield* Effect.sleep("1500 millis")
            assert.deepStrictEqual(
              (yield* partRows(url)).map((row) => row.id),
              ["prt_1"]
            )
            yield* store.putPart(text("ses_a", "msg_1", "prt_2", "at shutdown"))
          })
        )
        assert.deepStrictEqual(
          (yield* partRows(url)).map((row) => row.id),
          ["prt_1", "prt_2"]
        )
      })
    )
  )

  it.live("a timed write cut short by shutdown is not lost: the shutdown flush writes the batch", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const url = yield* freshDatabase
        yield* Effect.scoped(open(url))
        // Another connection holds the session table for 600 ms, so the store's timed write blocks on it.
        const holder = yield* Effect.forkChild(
          withClient(
            (sql) =>
              sql.withTransaction(
                sql`LOCK TABLE lathe_session IN EXCLUSIVE MODE`.pipe(Effect.andThen(Effect.sleep("600 millis")))
              ),
            url
          )
        )
        yield* Effect.sleep("100 millis")
        yield* Effect.scoped(
          Effect.gen(function* () {
            const store = yield* open(url, { flushDelay: "10 millis" })
            yield* store.putSession(session("ses_a", 1, { title: "survives" }))
            yield* Effect.sleep("150 millis")
          })
        )
        yield* Fiber.join(holder)
        const rows = yield* withClient((sql) => sql<{ readonly id: string }>`SELECT id FROM lathe_session`, url)
        assert.deepStrictEqual(rows, [{ id: "ses_a" }])
      })
    )
  )

  it.live("keeps text the jsonb type would refuse (NUL escapes, lone surrogates) exactly", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const store = yield* open(yield* freshDatabase)
        const odd = "nul:\u0000 lone:\ud800 emoji:👋 quote:' backslash:\\"
        yield* store.putSession(session("ses_a", 1, { title: odd }))
        yield* store.putMessage(user("ses_a", "msg_1"))
        yield* store.putPart(text("ses_a", "msg_1", "prt_1", odd))
        assert.strictEqual((yield* store.getSession("ses_a")).title, odd)
        assert.deepStrictEqual(textOf((yield* store.getMessage("ses_a", "msg_1")).parts), [odd])
      })
    )
  )

  it.live("a corrupt row is a StoreError naming the table, the id and the database", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const url = yield* freshDatabase
        const store = yield* open(url)
        yield* store.putSession(session("ses_a", 1))
        yield* store.putMessage(user("ses_a", "msg_1"))
        yield* store.putPart(text("ses_a", "msg_1", "prt_1", "fine"))
        yield* store.flush
        yield* withClient((sql) => sql`UPDATE lathe_part SET data = '{"type":"text","text":3}'`, url)
        const wrongShape = yield* store.messages("ses_a").pipe(Effect.flip)
        assert.strictEqual(wrongShape._tag, "StoreError")
        assert.match(
          wrongShape.message,
          /^The part "prt_1" in the Postgres store at 127\.0\.0\.1:\d+\/t_\w+ is corrupt/
        )
        yield* withClient((sql) => sql`UPDATE lathe_session SET data = 'not json{'`, url)
        const notJson = yield* store.getSession("ses_a").pipe(Effect.flip)
        assert.match(notJson.message, /^The session "ses_a" in the Postgres store .* is corrupt \(.*JSON.*\)/)
      })
    )
  )
})
