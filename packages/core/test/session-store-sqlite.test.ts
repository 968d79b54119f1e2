import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { DatabaseSync } from "node:sqlite"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { assistant, session, sessionStoreContract, text, user } from "@lathe/core/testing/store-contract"
import { Context, Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { Paths } from "../src/config/paths.js"
import { SessionStore } from "../src/store/session-store.js"
import { SqliteSessionStore } from "../src/store/session-store-sqlite.js"
import { openSqliteStore, sqliteMigrations } from "../src/store/sqlite-migrations.js"

sessionStoreContract("memory", () => SessionStore.memory)
sessionStoreContract(
  "SQLite",
  () => SqliteSessionStore.layerTemp(),
  () => Effect.sync(() => open(freshFile()))
)

const root = mkdtempSync(join(tmpdir(), "lathe-sqlite-test-"))
afterAll(() => rmSync(root, { recursive: true, force: true }))
let counter = 0
/** A fresh database path under this file's temp dir. */
const freshFile = () => join(root, `db-${++counter}`, "lathe.db")

/** Opens a store on `file` in the current scope (a second call gives a second, independent connection). */
const open = (file: string) =>
  Layer.build(SqliteSessionStore.layerFile(file)).pipe(Effect.map((context) => Context.get(context, SessionStore)))

/** A plain SQLite connection beside the store, to look at what is really on disk. */
const raw = (file: string) => new DatabaseSync(file)

const textOf = (parts: ReadonlyArray<{ readonly type: string }>) =>
  parts.map((part) => ("text" in part && typeof part.text === "string" ? part.text : part.type))

describe("SqliteSessionStore", () => {
  it.effect("creates <data>/lathe.db with the current schema in WAL mode", () => {
    const data = join(root, "data-dir", "nested")
    return Effect.gen(function* () {
      const store = yield* SessionStore
      yield* store.putSession(session("ses_a", 1))
      yield* store.flush
      const db = raw(join(data, "lathe.db"))
      assert.deepStrictEqual(db.prepare("PRAGMA user_version").get(), { user_version: sqliteMigrations.length })
      assert.deepStrictEqual(db.prepare("PRAGMA journal_mode").get(), { journal_mode: "wal" })
      assert.deepStrictEqual(db.prepare("SELECT id, project_id, time_updated FROM session").all(), [
        { id: "ses_a", project_id: "prj", time_updated: 1 }
      ])
      db.close()
    }).pipe(Effect.provide(SqliteSessionStore.layer.pipe(Layer.provide(Paths.layerTest(root, { data })))))
  })

  it.effect("coalesces 1,000 versions of one part into a single row write", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const file = freshFile()
        const store = yield* open(file)
        // A trigger added from outside counts every row the store really writes to `part`.
        const db = raw(file)
        db.exec(`CREATE TABLE write_log (id TEXT);
          CREATE TRIGGER part_insert AFTER INSERT ON part BEGIN INSERT INTO write_log VALUES (NEW.id); END;
          CREATE TRIGGER part_update AFTER UPDATE ON part BEGIN INSERT INTO write_log VALUES (NEW.id); END;`)
        yield* store.putSession(session("ses_a", 1))
        yield* store.putMessage(assistant("ses_a", "msg_1", "msg_0"))
        let value = ""
        for (let i = 0; i < 1_000; i++) {
          value += `d${i} `
          yield* store.putPart(text("ses_a", "msg_1", "prt_1", value))
        }
        yield* store.flush
        assert.deepStrictEqual(db.prepare("SELECT id FROM write_log").all(), [{ id: "prt_1" }])
        const row = db.prepare("SELECT data FROM part WHERE id = 'prt_1'").get()
        assert.strictEqual(JSON.parse(String(row?.data)).text, value)
        db.close()
      })
    )
  )

  it.effect("writes a batch on its own 50 ms after its first write (Clock-driven)", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const file = freshFile()
        const store = yield* open(file)
        const db = raw(file)
        const onDisk = () => db.prepare("SELECT count(*) AS n FROM part").get()?.n
        yield* store.putSession(session("ses_a", 1))
        yield* store.putMessage(user("ses_a", "msg_1"))
        yield* store.putPart(text("ses_a", "msg_1", "prt_1", "a"))
        yield* TestClock.adjust("49 millis")
        assert.strictEqual(onDisk(), 0, "nothing is written before the delay")
        yield* TestClock.adjust("1 millis")
        assert.strictEqual(onDisk(), 1)
        yield* store.putPart(text("ses_a", "msg_1", "prt_2", "b"))
        yield* TestClock.adjust("50 millis")
        assert.strictEqual(onDisk(), 2, "the next batch gets its own timer")
        db.close()
      })
    )
  )
})

/** A small deterministic generator (mulberry32), so a failing sequence can be replayed. */
const random = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

describe("SqliteSessionStore's history in memory", () => {
  it.effect("a read after another connection's commit sees it, though the session was read before", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const file = freshFile()
        const [a, b] = [yield* open(file), yield* open(file)]
        yield* a.putSession(session("ses_a", 1))
        yield* a.putMessage(user("ses_a", "msg_1"))
        yield* a.putPart(text("ses_a", "msg_1", "prt_1", "from a"))
        assert.deepStrictEqual(textOf((yield* a.messages("ses_a"))[0]?.parts ?? []), ["from a"])
        yield* a.flush // a read leaves the batch in memory: on disk now, for the other connection to add to it
        yield* b.putPart(text("ses_a", "msg_1", "prt_2", "from b"))
        yield* b.flush
        assert.deepStrictEqual(textOf((yield* a.messages("ses_a"))[0]?.parts ?? []), ["from a", "from b"])
        assert.deepStrictEqual(textOf((yield* a.getMessage("ses_a", "msg_1")).parts), ["from a", "from b"])
        yield* b.removeMessage("ses_a", "msg_1")
        assert.deepStrictEqual(yield* a.messages("ses_a"), [])
        // A plain connection outside Lathe counts too.
        yield* a.putMessage(user("ses_a", "msg_2"))
        yield* a.putPart(text("ses_a", "msg_2", "prt_1", "before"))
        assert.deepStrictEqual(textOf((yield* a.messages("ses_a"))[0]?.parts ?? []), ["before"])
        yield* a.flush
        const db = raw(file)
        db.prepare("UPDATE part SET data = ? WHERE id = 'prt_1'").run(
          JSON.stringify(text("ses_a", "msg_2", "prt_1", "edited outside"))
        )
        db.close()
        assert.deepStrictEqual(textOf((yield* a.messages("ses_a"))[0]?.parts ?? []), ["edited outside"])
      })
    )
  )

  it.effect("messages and parts written after a read, in id order or not, read back in id order", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const file = freshFile()
        const store = yield* open(file)
        yield* store.putSession(session("ses_a", 1))
        yield* store.putMessage(user("ses_a", "msg_2"))
        yield* store.putPart(text("ses_a", "msg_2", "prt_2", "b"))
        yield* store.messages("ses_a") // the history is held from here on
        // Appended after the last id (as the loop does), then one before it, then one in between.
        for (const id of ["msg_4", "msg_1", "msg_3"]) {
          yield* store.putMessage(user("ses_a", id))
          yield* store.putPart(text("ses_a", id, "prt_5", `${id} last`))
          yield* store.putPart(text("ses_a", id, "prt_1", `${id} first`))
          const ids = (yield* store.messages("ses_a")).map((m) => m.info.id)
          assert.deepStrictEqual(ids, [...ids].sort())
        }
        yield* store.putPart(text("ses_a", "msg_2", "prt_3", "c"))
        yield* store.putPart(text("ses_a", "msg_2", "prt_1", "a"))
        const held = yield* store.messages("ses_a")
        assert.deepStrictEqual(textOf(held[1]?.parts ?? []), ["a", "b", "c"])
        assert.deepStrictEqual(textOf(held[0]?.parts ?? []), ["msg_1 first", "msg_1 last"])
        yield* store.flush
        assert.deepStrictEqual(yield* store.messages("ses_a"), held)
        const fresh = yield* open(file).pipe(Effect.flatMap((other) => other.messages("ses_a")))
        assert.deepStrictEqual(held, fresh)
      })
    )
  )

  it.effect("what a read returns is the caller's: changing it does not change the next read", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const store = yield* open(freshFile())
        yield* store.putSession(session("ses_a", 1))
        yield* store.putMessage(user("ses_a", "msg_1"))
        yield* store.putPart(text("ses_a", "msg_1", "prt_1", "one"))
        const first = yield* store.messages("ses_a")
        const mutable = first as unknown as Array<{ parts: Array<unknown> }>
        mutable[0]?.parts.push("not a part")
        mutable.push({ parts: [] })
        const again = yield* store.messages("ses_a")
        assert.strictEqual(again.length, 1)
        assert.deepStrictEqual(textOf(again[0]?.parts ?? []), ["one"])
        const message = yield* store.getMessage("ses_a", "msg_1")
        ;(message.parts as Array<unknown>).length = 0
        assert.deepStrictEqual(textOf((yield* store.getMessage("ses_a", "msg_1")).parts), ["one"])
      })
    )
  )

  it.effect("keeps ids in SQLite's order (code points), also past the surrogates", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const file = freshFile()
        const store = yield* open(file)
        const ids = ["prt_a", "prt_\u{1F600}", "prt_\uFF5E", "prt_B", "prt_"]
        yield* store.putSession(session("ses_a", 1))
        yield* store.putMessage(user("ses_a", "msg_1"))
        yield* store.messages("ses_a") // held in memory from here on
        for (const id of ids) yield* store.putPart(text("ses_a", "msg_1", id, id))
        const fromMemory = ((yield* store.messages("ses_a"))[0]?.parts ?? []).map((part) => part.id)
        yield* store.flush
        const fromDisk = yield* Effect.scoped(
          open(file).pipe(Effect.flatMap((other) => other.getMessage("ses_a", "msg_1")))
        )
        assert.deepStrictEqual(fromMemory, ["prt_", "prt_B", "prt_a", "prt_\uFF5E", "prt_\u{1F600}"])
        assert.deepStrictEqual(
          fromMemory,
          fromDisk.parts.map((part) => part.id)
        )
      })
    )
  )

  it.effect("two connections and a plain one, 400 random writes: every read equals the database", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const file = freshFile()
        const stores = [yield* open(file), yield* open(file)] as const
        const db = raw(file)
        const next = random(20_251_123)
        const pick = <A>(list: ReadonlyArray<A>): A => list[Math.floor(next() * list.length)] as A
        const sessions = ["ses_1", "ses_2"]
        const messageIDs = ["msg_1", "msg_2", "msg_3"]
        const partIDs = ["prt_1", "prt_2", "prt_3"]
        for (const id of sessions) yield* stores[0].putSession(session(id, 1))
        // What a fresh connection would read, built from the database itself.
        const expected = (sessionID: string) =>
          Effect.scoped(open(file).pipe(Effect.flatMap((fresh) => fresh.messages(sessionID))))
        for (let i = 0; i < 400; i++) {
          const store = pick(stores)
          const [sessionID, messageID, partID] = [pick(sessions), pick(messageIDs), pick(partIDs)]
          const roll = next()
          if (roll < 0.25) yield* store.putMessage(user(sessionID, messageID))
          else if (roll < 0.6) {
            yield* store.putPart(text(sessionID, messageID, partID, `v${i}`)).pipe(Effect.ignore)
          } else if (roll < 0.7) yield* store.removePart(sessionID, messageID, partID)
          else if (roll < 0.77) yield* store.removeMessage(sessionID, messageID)
          else if (roll < 0.8) yield* store.deleteSession(sessionID)
          else if (roll < 0.88) {
            db.prepare("UPDATE part SET data = ? WHERE session_id = ? AND message_id = ? AND id = ?").run(
              JSON.stringify(text(sessionID, messageID, partID, `outside ${i}`)),
              sessionID,
              messageID,
              partID
            )
          } else yield* store.flush
          if (next() < 0.5) {
            const reader = pick(stores)
            const flushedByBoth = yield* Effect.all(stores.map((s) => s.flush))
            assert.strictEqual(flushedByBoth.length, 2)
            assert.deepStrictEqual(yield* reader.messages(sessionID), yield* expected(sessionID), `after write ${i}`)
            const got = yield* reader.getMessage(sessionID, messageID).pipe(Effect.option)
            const want = (yield* expected(sessionID)).find((m) => m.info.id === messageID)
            assert.deepStrictEqual(got._tag === "Some" ? got.value : undefined, want, `message after write ${i}`)
          }
        }
        db.close()
      })
    )
  )

  it.effect("a read before the batch is written equals the read after it, and a fresh connection's", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const file = freshFile()
        const store = yield* open(file)
        const next = random(20_261_130)
        const pick = <A>(list: ReadonlyArray<A>): A => list[Math.floor(next() * list.length)] as A
        const sessions = ["ses_1", "ses_2"]
        // Ids out of order too (a message made elsewhere), and one past the surrogates.
        const messageIDs = ["msg_2", "msg_1", "msg_3", "msg_\u{1F600}", "msg_\uFF5E"]
        const partIDs = ["prt_2", "prt_1", "prt_3"]
        for (const id of sessions) yield* store.putSession(session(id, 1))
        let unwrittenReads = 0
        for (let i = 0; i < 400; i++) {
          const [sessionID, messageID, partID] = [pick(sessions), pick(messageIDs), pick(partIDs)]
          const roll = next()
          if (roll < 0.3) yield* store.putMessage(user(sessionID, messageID))
          else if (roll < 0.8) yield* store.putPart(text(sessionID, messageID, partID, `v${i}`)).pipe(Effect.ignore)
          else if (roll < 0.85) yield* store.removePart(sessionID, messageID, partID)
          else if (roll < 0.88) yield* store.removeMessage(sessionID, messageID)
          else if (roll < 0.9) yield* store.flush
          if (next() < 0.4) {
            const before = yield* store.messages(sessionID)
            const flushed = yield* Effect.result(store.flush)
            assert.strictEqual(flushed._tag, "Success")
            unwrittenReads++
            assert.deepStrictEqual(before, yield* store.messages(sessionID), `after write ${i}`)
            const fresh = yield* Effect.scoped(open(file).pipe(Effect.flatMap((other) => other.messages(sessionID))))
            assert.deepStrictEqual(before, fresh, `fresh, after write ${i}`)
          }
        }
        assert.isAbove(unwrittenReads, 100)
      })
    )
  )

  it.effect("the loop's read before a request writes nothing: the batch stays in memory until its flush", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const file = freshFile()
        const store = yield* open(file)
        yield* store.putSession(session("ses_a", 1))
        yield* store.putMessage(user("ses_a", "msg_1"))
        yield* store.putPart(text("ses_a", "msg_1", "prt_1", "held"))
        assert.deepStrictEqual(textOf((yield* store.messages("ses_a"))[0]?.parts ?? []), ["held"])
        const rows = () => {
          const db = raw(file)
          try {
            return Number(db.prepare("SELECT count(*) AS n FROM part").get()?.n)
          } finally {
            db.close()
          }
        }
        assert.strictEqual(rows(), 0)
        yield* store.flush
        assert.strictEqual(rows(), 1)
      })
    )
  )
})

describe("SqliteSessionStore on a damaged or foreign file", () => {
  it.effect("a corrupt row is a StoreError naming the table and the id", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const file = freshFile()
        const store = yield* open(file)
        yield* store.putSession(session("ses_a", 1))
        yield* store.putMessage(user("ses_a", "msg_1"))
        yield* store.putPart(text("ses_a", "msg_1", "prt_1", "fine"))
        yield* store.flush
        const db = raw(file)
        db.exec(`UPDATE part SET data = '{"type":"text","text":3}' WHERE id = 'prt_1'`)
        const wrongShape = yield* store.messages("ses_a").pipe(Effect.flip)
        assert.strictEqual(wrongShape._tag, "StoreError")
        assert.match(wrongShape.message, /^The part "prt_1" in .*lathe\.db is corrupt \(.*\)\. It was changed outside/)
        db.exec(`UPDATE session SET data = 'not json{' WHERE id = 'ses_a'`)
        const notJson = yield* store.getSession("ses_a").pipe(Effect.flip)
        assert.strictEqual(notJson._tag, "StoreError")
        assert.match(notJson.message, /^The session "ses_a" in .* is corrupt \(.*JSON.*\)/)
        db.close()
      })
    )
  )

  it.effect("a file from a newer Lathe is refused with advice, and left untouched", () =>
    Effect.gen(function* () {
      const file = freshFile()
      yield* Effect.scoped(open(file))
      const db = raw(file)
      db.exec("PRAGMA user_version = 99")
      db.close()
      const error = yield* Effect.scoped(open(file)).pipe(Effect.flip)
      assert.strictEqual(error.message.includes("has schema version 99"), true, error.message)
      assert.match(error.message, /written by a newer Lathe\. Upgrade Lathe, or set LATHE_DATA_DIR/)
      const after = raw(file)
      assert.deepStrictEqual(after.prepare("PRAGMA user_version").get(), { user_version: 99 })
      after.close()
    })
  )

  it("a fresh file (set up with synchronous=OFF) and a reopened one both write with synchronous=NORMAL in WAL", () => {
    const file = freshFile()
    mkdirSync(dirname(file), { recursive: true })
    const settings = (db: DatabaseSync) => ({
      ...db.prepare("PRAGMA synchronous").get(),
      ...db.prepare("PRAGMA journal_mode").get(),
      ...db.prepare("PRAGMA user_version").get()
    })
    const expected = { synchronous: 1, journal_mode: "wal", user_version: sqliteMigrations.length }
    const created = openSqliteStore(file)
    assert.deepStrictEqual(settings(created), expected)
    created.close()
    const reopened = openSqliteStore(file)
    assert.deepStrictEqual(settings(reopened), expected)
    reopened.close()
  })

  it.effect("a file that is not a database is refused with advice", () =>
    Effect.gen(function* () {
      const file = join(root, "garbage.db")
      writeFileSync(file, "this is not sqlite at all, just some text that is long enough to look like a header")
      const error = yield* Effect.scoped(open(file)).pipe(Effect.flip)
      assert.strictEqual(error._tag, "StoreError")
      assert.match(error.message, /^Cannot open the session store .*garbage\.db: .*not a database.*move it away/)
    })
  )

  it.effect(
    "a file made by the schema before work trees migrates: old sessions keep their data and list by directory",
    () =>
      Effect.gen(function* () {
        const file = freshFile()
        mkdirSync(dirname(file), { recursive: true })
        // The file as the previous Lathe left it: the first migration only, rows without a tree.
        const old = raw(file)
        old.exec(sqliteMigrations[0] ?? "")
        old.exec("PRAGMA user_version = 1")
        const insert = old.prepare(
          "INSERT INTO session (id, project_id, parent_id, time_updated, data) VALUES (?, ?, ?, ?, ?)"
        )
        for (const [id, directory, updated] of [
          ["ses_root", "/w/a", 1],
          ["ses_sub", "/w/a/src", 2],
          ["ses_clone", "/w/b", 3]
        ] as const)
          insert.run(id, "prj", null, updated, JSON.stringify(session(id, updated, { directory })))
        old.close()
        yield* Effect.scoped(
          Effect.gen(function* () {
            const store = yield* open(file)
            assert.deepStrictEqual(
              (yield* store.listSessions({ projectID: "prj", tree: "/w/a" })).map((s) => s.id),
              ["ses_sub", "ses_root"]
            )
            assert.deepStrictEqual(
              (yield* store.listSessions({ projectID: "prj", tree: "/w/b" })).map((s) => s.id),
              ["ses_clone"]
            )
            const before = yield* store.getSession("ses_sub")
            assert.strictEqual(before.tree, undefined)
            assert.strictEqual(before.directory, "/w/a/src")
            yield* store.putSession({ ...before, tree: "/w/a", title: "touched" })
            yield* store.flush
          })
        )
        const db = raw(file)
        assert.deepStrictEqual(db.prepare("PRAGMA user_version").get(), { user_version: sqliteMigrations.length })
        assert.deepStrictEqual(db.prepare("SELECT id, tree, directory FROM session ORDER BY id").all(), [
          { id: "ses_clone", tree: null, directory: "/w/b" },
          { id: "ses_root", tree: null, directory: "/w/a" },
          { id: "ses_sub", tree: "/w/a", directory: "/w/a/src" }
        ])
        db.close()
      })
  )

  it.effect("listSessions refuses a limit that is not a whole number", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const store = yield* open(freshFile())
        const error = yield* store.listSessions({ limit: -1 }).pipe(Effect.flip)
        assert.strictEqual(error.message, "listSessions: limit must be a whole number of sessions, 0 or more (got -1).")
      })
    )
  )
})
