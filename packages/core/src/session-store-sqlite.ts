import { mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import type { DatabaseSync, SQLInputValue, SQLOutputValue, StatementSync } from "node:sqlite"
import { type Duration, Effect, Layer, Schema, type Scope } from "effect"
import { Message, type MessageWithParts, Session } from "./message.js"
import { Part } from "./part.js"
import { Paths } from "./paths.js"
import { messageNotFound, type SessionFilter, SessionStore, StoreError, sessionNotFound } from "./session-store.js"
import { BUSY_TIMEOUT_MS, openSqliteStore } from "./sqlite-migrations.js"

/** Tuning for the SQLite store. */
export interface SqliteStoreOptions {
  /** How long after the first unflushed write the batch goes to disk on its own (default 50 ms, from `Clock`). */
  readonly flushDelay?: Duration.Input
}

type Row = Record<string, SQLOutputValue>

const describe = (error: unknown): string =>
  (error instanceof Error ? error.message : String(error)).replace(/\s*\n\s*/g, " ")

const decoders = {
  session: Schema.decodeUnknownSync(Session),
  message: Schema.decodeUnknownSync(Message),
  part: Schema.decodeUnknownSync(Part)
}

/** A key no id can forge: ids never contain NUL. */
const key = (...ids: ReadonlyArray<string>): string => ids.join("\u0000")

/** Runs `body` in one transaction: all of it is committed, or (on a throw) none of it. */
const transaction = <A>(db: DatabaseSync, mode: "DEFERRED" | "IMMEDIATE", body: () => A): A => {
  db.exec(`BEGIN ${mode}`)
  try {
    const result = body()
    db.exec("COMMIT")
    return result
  } catch (error) {
    if (db.isTransaction) db.exec("ROLLBACK")
    throw error
  }
}

const statements = (db: DatabaseSync) => ({
  putSession: db.prepare(
    `INSERT INTO session (id, project_id, parent_id, time_updated, data) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (id) DO UPDATE SET project_id = excluded.project_id, parent_id = excluded.parent_id,
       time_updated = excluded.time_updated, data = excluded.data`
  ),
  putMessage: db.prepare(
    `INSERT INTO message (session_id, id, data) VALUES (?, ?, ?)
     ON CONFLICT (session_id, id) DO UPDATE SET data = excluded.data`
  ),
  // A part whose message another process deleted in the meantime is dropped, not a failed batch.
  putPart: db.prepare(
    `INSERT INTO part (session_id, message_id, id, data)
     SELECT ?1, ?2, ?3, ?4 WHERE EXISTS (SELECT 1 FROM message WHERE session_id = ?1 AND id = ?2)
     ON CONFLICT (session_id, message_id, id) DO UPDATE SET data = excluded.data`
  ),
  getSession: db.prepare("SELECT id, data FROM session WHERE id = ?"),
  hasMessage: db.prepare("SELECT 1 AS found FROM message WHERE session_id = ? AND id = ?"),
  getMessage: db.prepare("SELECT id, data FROM message WHERE session_id = ? AND id = ?"),
  partsOfMessage: db.prepare("SELECT id, data FROM part WHERE session_id = ? AND message_id = ? ORDER BY id"),
  messagesOfSession: db.prepare("SELECT id, data FROM message WHERE session_id = ? ORDER BY id"),
  partsOfSession: db.prepare("SELECT message_id, id, data FROM part WHERE session_id = ? ORDER BY message_id, id"),
  sessionTree: db.prepare(
    `WITH RECURSIVE tree (id) AS (SELECT ? UNION SELECT session.id FROM session JOIN tree ON session.parent_id = tree.id)
     SELECT id FROM tree`
  ),
  deleteSessionParts: db.prepare("DELETE FROM part WHERE session_id = ?"),
  deleteSessionMessages: db.prepare("DELETE FROM message WHERE session_id = ?"),
  deleteSession: db.prepare("DELETE FROM session WHERE id = ?"),
  deleteMessageParts: db.prepare("DELETE FROM part WHERE session_id = ? AND message_id = ?"),
  deleteMessage: db.prepare("DELETE FROM message WHERE session_id = ? AND id = ?"),
  deletePart: db.prepare("DELETE FROM part WHERE session_id = ? AND message_id = ? AND id = ?")
})

/** The SQL and parameters of one `listSessions` query, newest first. */
const listQuery = (filter: SessionFilter): { sql: string; params: Array<SQLInputValue> } => {
  const where: Array<string> = []
  const params: Array<SQLInputValue> = []
  if (filter.projectID !== undefined) {
    where.push("project_id = ?")
    params.push(filter.projectID)
  }
  if (filter.parentID === null) where.push("parent_id IS NULL")
  else if (filter.parentID !== undefined) {
    where.push("parent_id = ?")
    params.push(filter.parentID)
  }
  params.push(filter.limit ?? -1)
  const clause = where.length > 0 ? `WHERE ${where.join(" AND ")}` : ""
  return { sql: `SELECT id, data FROM session ${clause} ORDER BY time_updated DESC, id DESC LIMIT ?`, params }
}

/** Most decoded rows kept for reuse (about one long session's worth). */
const DECODE_CACHE_ROWS = 50_000

const ensureDir = (dir: string) =>
  Effect.try({
    try: () => void mkdirSync(dir, { recursive: true }),
    catch: (error) =>
      new StoreError({
        operation: "open",
        message: `Cannot create the data directory ${dir}: ${describe(error)}. Set LATHE_DATA_DIR to a writable directory.`
      })
  })

/**
 * A `SessionStore` on the SQLite file `file` (created with its schema if missing), open for as long as the
 * scope. Puts only update an in-memory batch keyed by id, so a thousand versions of one part cost one row
 * write; the batch goes to disk in one transaction on `flush`, `flushDelay` after its first write, before any
 * read or delete (so reads always see earlier writes), and when the scope closes. Once `flush` returns, the
 * batch survives the process being killed. Several connections and processes may share one file.
 */
export const makeSqliteStore = (
  file: string,
  options: SqliteStoreOptions = {}
): Effect.Effect<SessionStore["Service"], StoreError, Scope.Scope> =>
  Effect.gen(function* () {
    const failure = (operation: string, error: unknown): StoreError => {
      if (error instanceof StoreError) return error
      const text = describe(error)
      const hint = /locked|busy/i.test(text)
        ? ` Another process held the store's write lock for more than ${BUSY_TIMEOUT_MS / 1000} s; retry when it is idle.`
        : ""
      return new StoreError({ operation, message: `The session store ${file} failed in ${operation}: ${text}.${hint}` })
    }
    const attempt = <A>(operation: string, body: () => A) =>
      Effect.try({ try: body, catch: (error) => failure(operation, error) })

    yield* ensureDir(dirname(file))
    const db = yield* Effect.acquireRelease(
      attempt("open", () => openSqliteStore(file)),
      (db) => Effect.sync(() => db.close())
    )
    const scope = yield* Effect.scope
    const sql = statements(db)
    const listStatements = new Map<string, StatementSync>()

    const pending = { sessions: new Map<string, Session>(), messages: new Map<string, Message>() }
    const pendingParts = new Map<string, Part>()
    // (session, message) pairs known to exist on disk, so a delta does not query for its message.
    const knownMessages = new Set<string>()
    let timerArmed = false

    // Decoded rows by table and id, with the text they were decoded from: the loop re-reads a session's whole
    // history every step, and rows that did not change skip JSON.parse and schema decoding (a string compare).
    const decoded = new Map<string, { readonly data: string; readonly value: unknown }>()
    const parse = <A>(decode: (input: unknown) => A, table: string, row: Row): A => {
      try {
        if (typeof row.data !== "string") throw new Error("its data is not text")
        const cacheKey = `${table}\u0000${String(row.message_id ?? "")}\u0000${String(row.id)}`
        const cached = decoded.get(cacheKey)
        if (cached !== undefined && cached.data === row.data) return cached.value as A
        const value = decode(JSON.parse(row.data))
        if (decoded.size >= DECODE_CACHE_ROWS) decoded.clear()
        decoded.set(cacheKey, { data: row.data, value })
        return value
      } catch (error) {
        throw new StoreError({
          operation: `read ${table}`,
          message:
            `The ${table} "${String(row.id)}" in ${file} is corrupt (${describe(error)}). It was changed outside ` +
            "Lathe or by an incompatible version; delete its session or restore the file from a backup."
        })
      }
    }

    /** Writes the batch in one transaction; on failure the batch stays pending for the next flush. */
    const flushNow = (): void => {
      if (pending.sessions.size + pending.messages.size + pendingParts.size === 0) return
      // An entity JSON cannot hold (a BigInt, a cycle in metadata) is dropped and reported, never retried forever.
      const rejected: Array<string> = []
      const written: Array<string> = []
      const json = (table: string, value: { readonly id: string }): string | undefined => {
        try {
          return JSON.stringify(value)
        } catch (error) {
          rejected.push(`${table} ${value.id} (${describe(error)})`)
          return undefined
        }
      }
      transaction(db, "IMMEDIATE", () => {
        for (const s of pending.sessions.values()) {
          const data = json("session", s)
          if (data !== undefined) sql.putSession.run(s.id, s.projectID, s.parentID || null, s.time.updated, data)
        }
        for (const m of pending.messages.values()) {
          const data = json("message", m)
          if (data === undefined) continue
          sql.putMessage.run(m.sessionID, m.id, data)
          written.push(key(m.sessionID, m.id))
        }
        for (const p of pendingParts.values()) {
          const data = json("part", p)
          if (data !== undefined) sql.putPart.run(p.sessionID, p.messageID, p.id, data)
        }
      })
      for (const messageKey of written) knownMessages.add(messageKey)
      pending.sessions.clear()
      pending.messages.clear()
      pendingParts.clear()
      if (rejected.length > 0) {
        throw new StoreError({
          operation: "flush",
          message: `Not saved, because their data is not plain JSON: ${rejected.join("; ")}. Keep metadata to JSON values.`
        })
      }
    }

    const flush = attempt("flush", flushNow).pipe(Effect.withSpan("SessionStore.flush"))

    const timerFlush = Effect.suspend(() => {
      timerArmed = false
      return flush
    }).pipe(Effect.catch((error) => Effect.logWarning(`Batched session writes not saved yet: ${error.message}`)))

    /** Schedules a flush `flushDelay` after the first write of a batch, on a fiber owned by the store. */
    const armTimer = Effect.suspend(() => {
      if (timerArmed) return Effect.void
      timerArmed = true
      return Effect.forkIn(Effect.sleep(options.flushDelay ?? "50 millis").pipe(Effect.andThen(timerFlush)), scope)
    }).pipe(Effect.asVoid)

    /** Flushes, then runs `body`; for reads (read-your-writes) and deletes (no batched write outlives them). */
    const afterFlush = <A>(operation: string, mode: "DEFERRED" | "IMMEDIATE", body: () => A) =>
      attempt(operation, () => {
        flushNow()
        return transaction(db, mode, body)
      })

    yield* Effect.addFinalizer(() =>
      flush.pipe(Effect.catch((error) => Effect.logError(`Session writes lost at shutdown: ${error.message}`)))
    )

    const partsOf = (rows: ReadonlyArray<Row>) => rows.map((row) => parse(decoders.part, "part", row))

    return SessionStore.of({
      putSession: Effect.fn("SessionStore.putSession")(function* (session: Session) {
        pending.sessions.set(session.id, session)
        yield* armTimer
      }),
      getSession: Effect.fn("SessionStore.getSession")(function* (sessionID: string) {
        const row = yield* afterFlush("getSession", "DEFERRED", () => sql.getSession.get(sessionID))
        if (!row) return yield* Effect.fail(sessionNotFound(sessionID))
        return yield* attempt("getSession", () => parse(decoders.session, "session", row))
      }),
      listSessions: Effect.fn("SessionStore.listSessions")(function* (filter: SessionFilter = {}) {
        if (filter.limit !== undefined && !(Number.isInteger(filter.limit) && filter.limit >= 0)) {
          return yield* Effect.fail(
            new StoreError({
              operation: "listSessions",
              message: `listSessions: limit must be a whole number of sessions, 0 or more (got ${filter.limit}).`
            })
          )
        }
        const { sql: text, params } = listQuery(filter)
        return yield* afterFlush("listSessions", "DEFERRED", () => {
          const statement = listStatements.get(text) ?? db.prepare(text)
          listStatements.set(text, statement)
          return statement.all(...params).map((row) => parse(decoders.session, "session", row))
        })
      }),
      deleteSession: Effect.fn("SessionStore.deleteSession")(function* (sessionID: string) {
        yield* afterFlush("deleteSession", "IMMEDIATE", () => {
          for (const row of sql.sessionTree.all(sessionID)) {
            const id = String(row.id)
            sql.deleteSessionParts.run(id)
            sql.deleteSessionMessages.run(id)
            sql.deleteSession.run(id)
          }
        })
        knownMessages.clear()
      }),
      putMessage: Effect.fn("SessionStore.putMessage")(function* (message: Message) {
        pending.messages.set(key(message.sessionID, message.id), message)
        yield* armTimer
      }),
      getMessage: Effect.fn("SessionStore.getMessage")(function* (sessionID: string, messageID: string) {
        const found = yield* afterFlush("getMessage", "DEFERRED", (): MessageWithParts | undefined => {
          const row = sql.getMessage.get(sessionID, messageID)
          if (!row) return undefined
          const info = parse(decoders.message, "message", row)
          return { info, parts: partsOf(sql.partsOfMessage.all(sessionID, messageID)) }
        })
        if (!found) return yield* Effect.fail(messageNotFound(sessionID, messageID))
        return found
      }),
      messages: Effect.fn("SessionStore.messages")(function* (sessionID: string) {
        return yield* afterFlush("messages", "DEFERRED", (): ReadonlyArray<MessageWithParts> => {
          const parts = new Map<string, Array<Part>>()
          for (const row of sql.partsOfSession.all(sessionID)) {
            const messageID = String(row.message_id)
            const list = parts.get(messageID) ?? []
            list.push(parse(decoders.part, "part", row))
            parts.set(messageID, list)
          }
          return sql.messagesOfSession.all(sessionID).map((row) => ({
            info: parse(decoders.message, "message", row),
            parts: parts.get(String(row.id)) ?? []
          }))
        })
      }),
      removeMessage: Effect.fn("SessionStore.removeMessage")(function* (sessionID: string, messageID: string) {
        yield* afterFlush("removeMessage", "IMMEDIATE", () => {
          sql.deleteMessageParts.run(sessionID, messageID)
          sql.deleteMessage.run(sessionID, messageID)
        })
        knownMessages.delete(key(sessionID, messageID))
      }),
      // Untraced on purpose: the loop calls this for every text delta, and a span per call cost ~5 µs, ten times
      // the rest of the call. The batch it joins is traced by `SessionStore.flush`.
      putPart: Effect.fnUntraced(function* (part: Part) {
        const messageKey = key(part.sessionID, part.messageID)
        if (!pending.messages.has(messageKey) && !knownMessages.has(messageKey)) {
          const row = yield* attempt("putPart", () => sql.hasMessage.get(part.sessionID, part.messageID))
          if (!row) {
            return yield* Effect.fail(
              new StoreError({
                operation: "putPart",
                message: `Part ${part.id} was written before its message ${part.messageID}; write the message first.`
              })
            )
          }
          knownMessages.add(messageKey)
        }
        pendingParts.set(key(messageKey, part.id), part)
        yield* armTimer
      }),
      removePart: Effect.fn("SessionStore.removePart")(function* (
        sessionID: string,
        messageID: string,
        partID: string
      ) {
        yield* afterFlush("removePart", "IMMEDIATE", () => sql.deletePart.run(sessionID, messageID, partID))
      }),
      flush
    })
  })

/** `SessionStore` layers on SQLite (`node:sqlite`, WAL). Each build opens its own connection. */
export const SqliteSessionStore = {
  /** The store at `<data dir>/lathe.db` (from `Paths`), creating the directory and the file as needed. */
  layer: Layer.effect(
    SessionStore,
    Effect.gen(function* () {
      const paths = yield* Paths
      return yield* makeSqliteStore(join(paths.data, "lathe.db"))
    })
  ),
  /** The store in the SQLite file `file` (its directory is created if missing). */
  layerFile: (file: string, options: SqliteStoreOptions = {}): Layer.Layer<SessionStore, StoreError> =>
    Layer.effect(SessionStore, makeSqliteStore(file, options)),
  /** A store in a fresh temporary directory, deleted when the layer is released: a real file for tests. */
  layerTemp: (options: SqliteStoreOptions = {}): Layer.Layer<SessionStore, StoreError> =>
    Layer.effect(
      SessionStore,
      Effect.gen(function* () {
        const dir = yield* Effect.acquireRelease(
          Effect.sync(() => mkdtempSync(join(tmpdir(), "lathe-store-"))),
          (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
        )
        return yield* makeSqliteStore(join(dir, "lathe.db"), options)
      })
    )
} as const
