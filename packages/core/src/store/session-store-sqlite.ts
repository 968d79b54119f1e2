import { mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import type { DatabaseSync, SQLInputValue, SQLOutputValue, StatementSync } from "node:sqlite"
import { Message, type MessageWithParts, Part, Session } from "@lathe/plugin/schema"
import { type Duration, Effect, Layer, Schema, type Scope } from "effect"
import { Paths } from "../config/paths.js"
import { messageNotFound, type SessionFilter, SessionStore, StoreError, sessionNotFound } from "./session-store.js"
import { querySummaries } from "./session-summary.js"
import { BUSY_TIMEOUT_MS, openSqliteStore } from "./sqlite-migrations.js"
import { batchKey as key, makeWriteBehind, type WriteBatch, type WriteOutcome } from "./write-behind.js"

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
    `INSERT INTO session (id, project_id, parent_id, time_updated, data, tree, directory) VALUES (?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (id) DO UPDATE SET project_id = excluded.project_id, parent_id = excluded.parent_id,
       time_updated = excluded.time_updated, data = excluded.data, tree = excluded.tree, directory = excluded.directory`
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
  deletePart: db.prepare("DELETE FROM part WHERE session_id = ? AND message_id = ? AND id = ?"),
  // Changes exactly when another connection (this process or another) commits; this connection's commits keep it.
  dataVersion: db.prepare("PRAGMA data_version")
})

/** The SQL and parameters of one `listSessions` query, newest first. */
const listQuery = (filter: SessionFilter): { sql: string; params: Array<SQLInputValue> } => {
  const where: Array<string> = []
  const params: Array<SQLInputValue> = []
  if (filter.projectID !== undefined) {
    where.push("project_id = ?")
    params.push(filter.projectID)
  }
  if (filter.tree !== undefined) {
    // The rule of `inTree`: the recorded tree, or (rows stored before trees were) the directory in the tree.
    const below = filter.tree.endsWith("/") ? filter.tree : `${filter.tree}/`
    where.push("(tree = ? OR (tree IS NULL AND (directory = ? OR substr(directory, 1, length(?)) = ?)))")
    params.push(filter.tree, filter.tree, below, below)
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
/** Most sessions whose history is kept in memory (least recently read first out). */
const CACHED_SESSIONS = 16

/**
 * A `message` or `part` row held in memory: the row as on disk, and its decoded value once read. `own` marks a row
 * this connection wrote from a typed value: reading it back needs `JSON.parse` only, not the schema's validation.
 */
interface CachedRow {
  row: Row
  value: unknown
  own?: boolean
}

/** A message of a cached session, with its parts' rows by id; `order` is their id order (rebuilt when needed). */
interface CachedMessage extends CachedRow {
  readonly parts: Map<string, CachedRow>
  order: Array<CachedRow> | undefined
}

/** One session's messages exactly as on disk; `order` is their id order, `rows` about how many rows it holds. */
interface CachedSession {
  readonly messages: Map<string, CachedMessage>
  order: Array<CachedMessage> | undefined
  rows: number
}

type Keyed = { readonly key: string }

/**
 * The order SQLite sorts TEXT keys in (BINARY: UTF-8 bytes, i.e. code points). JavaScript's `<` compares UTF-16
 * code units, which disagrees only between a surrogate and U+E000..U+FFFF; those two ranges are swapped here.
 */
const byKey = (a: Keyed, b: Keyed): number => {
  const [x, y] = [a.key, b.key]
  const n = Math.min(x.length, y.length)
  for (let i = 0; i < n; i++) {
    let cx = x.charCodeAt(i)
    let cy = y.charCodeAt(i)
    if (cx === cy) continue
    if (cx >= 0xd800 && cy >= 0xd800) {
      cx = cx >= 0xe000 ? cx - 0x800 : cx + 0x2000
      cy = cy >= 0xe000 ? cy - 0x800 : cy + 0x2000
    }
    return cx - cy
  }
  return x.length - y.length
}

/** The entries of `map` in SQLite's id order. */
const inIdOrder = <A>(map: ReadonlyMap<string, A>): Array<A> =>
  [...map.entries()]
    .map(([key, value]) => ({ key, value }))
    .sort(byKey)
    .map((entry) => entry.value)

/**
 * `order` (rows in id order) with `row` added: appended when its id sorts after the last one, as a new message or
 * part of the loop always does, so a long session is not sorted again at every step; else undefined (sort again).
 */
const appended = <A extends CachedRow>(order: Array<A> | undefined, row: A): Array<A> | undefined => {
  const last = order?.at(-1)
  if (order === undefined || last === undefined) return undefined
  if (byKey({ key: String(last.row.id) }, { key: String(row.row.id) }) >= 0) return undefined
  order.push(row)
  return order
}

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
 * scope. Puts go to the write-behind batch (write-behind.ts), which goes to disk in one transaction on `flush`,
 * `flushDelay` after its first write, before any other read or delete, and when the scope closes. Once `flush`
 * returns, the batch survives the process being killed. Several connections and processes may share one file (another
 * connection sees a batch once it is written).
 *
 * The histories of the sessions read last (`messages`) stay in memory, updated by this store's own writes, and are
 * served from there while SQLite's `data_version` shows no commit by any other connection; `messages` reads the
 * batch not yet written over them instead of writing it first (the loop reads the history before every request). A
 * read returns new arrays over shared, never-mutated values, equal to what a fresh read of the file returns once the
 * batch is written.
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
    const sql = statements(db)
    const listStatements = new Map<string, StatementSync>()

    // Decoded rows by table and id, with the text they were decoded from: a row read again unchanged (a history
    // reloaded after another connection's commit, a session listed again) skips JSON.parse and schema decoding.
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

    // Each session's history as on disk, so the loop's read of it every step costs no query and no decoding. Valid
    // while `data_version` still reads `cacheVersion`: this connection's own commits are applied to it as they land
    // (they leave `data_version` alone), and any other connection's commit drops the whole cache.
    const cache = new Map<string, CachedSession>()
    let cacheVersion = -1
    /** Drops the cache if another connection committed since it was last checked. */
    const revalidate = (): void => {
      const version = Number(sql.dataVersion.get()?.data_version)
      if (version === cacheVersion) return
      cache.clear()
      cacheVersion = version
    }
    /**
     * Runs `body` in a write transaction of this connection; once it commits, `update` brings the cache up to date
     * (the write lock keeps other connections out between the version check and the commit).
     */
    const ownWrite = <A>(body: () => A, update: (result: A) => void): A => {
      const result = transaction(db, "IMMEDIATE", () => {
        revalidate()
        return body()
      })
      update(result)
      return result
    }
    /** The session's cached history (most recently used from now on), reading it from disk when not held. */
    const history = (sessionID: string): CachedSession => {
      revalidate()
      const held = cache.get(sessionID)
      if (held !== undefined) {
        cache.delete(sessionID)
        cache.set(sessionID, held)
        return held
      }
      const loaded = transaction(db, "DEFERRED", () => {
        revalidate() // in the read transaction: the rows below are the database at exactly this version
        const messages = new Map<string, CachedMessage>()
        for (const row of sql.messagesOfSession.all(sessionID)) {
          messages.set(String(row.id), { row, value: undefined, parts: new Map(), order: undefined })
        }
        let rows = messages.size
        for (const row of sql.partsOfSession.all(sessionID)) {
          messages.get(String(row.message_id))?.parts.set(String(row.id), { row, value: undefined })
          rows++
        }
        return { messages, order: undefined, rows }
      })
      cache.set(sessionID, loaded)
      let total = 0
      for (const entry of cache.values()) total += entry.rows
      for (const [id, entry] of cache) {
        if (cache.size <= 1 || (cache.size <= CACHED_SESSIONS && total <= DECODE_CACHE_ROWS)) break
        cache.delete(id)
        total -= entry.rows
      }
      return loaded
    }
    const decodedValue = <A>(decode: (input: unknown) => A, table: string, cached: CachedRow): A => {
      cached.value ??= cached.own === true ? JSON.parse(String(cached.row.data)) : parse(decode, table, cached.row)
      return cached.value as A
    }
    /** A fresh `{ info, parts }` (new arrays, shared immutable values) for a cached message. */
    const messageOf = (message: CachedMessage): MessageWithParts => {
      message.order ??= inIdOrder(message.parts)
      return {
        info: decodedValue(decoders.message, "message", message),
        parts: message.order.map((part) => decodedValue(decoders.part, "part", part))
      }
    }
    /**
     * A session's history as it will be once what was put is written: the rows held (or read), with the unwritten
     * messages and parts over them. A part whose message is neither stored nor put is left out, as its insert would be.
     */
    const historyWithUnwritten = (sessionID: string): ReadonlyArray<MessageWithParts> => {
      const held = history(sessionID)
      held.order ??= inIdOrder(held.messages)
      const unwritten = writes.unwritten(sessionID)
      if (unwritten === undefined) return held.order.map(messageOf)
      const ids = held.order.map((message) => String(message.row.id))
      const inOrder = (a: string, b: string) => byKey({ key: a }, { key: b })
      const added = [...unwritten.messages.keys()].filter((id) => !held.messages.has(id)).sort(inOrder)
      const last = ids.at(-1)
      const first = added[0]
      ids.push(...added)
      // New messages sort after the stored ones (ascending ids) but for an id made elsewhere: sorted again then.
      if (last !== undefined && first !== undefined && inOrder(last, first) >= 0) ids.sort(inOrder)
      return ids.map((id): MessageWithParts => {
        const cached = held.messages.get(id)
        const put = unwritten.messages.get(id)
        const parts = unwritten.parts.get(id)
        if (cached !== undefined && put === undefined && parts === undefined) return messageOf(cached)
        const info = put ?? decodedValue(decoders.message, "message", cached as CachedMessage)
        if (parts === undefined) return { info, parts: cached === undefined ? [] : messageOf(cached).parts }
        const order = new Map<string, Part>()
        if (cached !== undefined) {
          cached.order ??= inIdOrder(cached.parts)
          for (const part of cached.order) order.set(String(part.row.id), decodedValue(decoders.part, "part", part))
        }
        for (const [partID, part] of parts) order.set(partID, part)
        return { info, parts: inIdOrder(order) }
      })
    }
    /** Applies rows this connection committed to the sessions held in memory. */
    const cacheMessage = (sessionID: string, id: string, data: string): void => {
      const entry = cache.get(sessionID)
      if (entry === undefined) return
      const row = { id, data }
      const held = entry.messages.get(id)
      if (held !== undefined) {
        held.row = row
        held.value = undefined
        held.own = true
        return
      }
      const added: CachedMessage = { row, value: undefined, own: true, parts: new Map(), order: undefined }
      entry.messages.set(id, added)
      entry.order = appended(entry.order, added)
      entry.rows++
    }
    const cachePart = (sessionID: string, messageID: string, id: string, data: string): void => {
      const entry = cache.get(sessionID)
      // No message here means none on disk either, where the insert was skipped for the same reason.
      const message = entry?.messages.get(messageID)
      if (entry === undefined || message === undefined) return
      const row = { message_id: messageID, id, data }
      const held = message.parts.get(id)
      if (held !== undefined) {
        held.row = row
        held.value = undefined
        held.own = true
        return
      }
      const added: CachedRow = { row, value: undefined, own: true }
      message.parts.set(id, added)
      message.order = appended(message.order, added)
      entry.rows++
    }

    /** Writes a batch in one transaction, then brings the cache up to date. */
    const writeBatch = (batch: WriteBatch): WriteOutcome => {
      // An entity JSON cannot hold (a BigInt, a cycle in metadata) is dropped and reported, never retried forever.
      const rejected: Array<string> = []
      const json = (table: string, value: { readonly id: string }): string | undefined => {
        try {
          return JSON.stringify(value)
        } catch (error) {
          rejected.push(`${table} ${value.id} (${describe(error)})`)
          return undefined
        }
      }
      const messages: Array<readonly [Message, string]> = []
      const parts: Array<readonly [Part, string]> = []
      ownWrite(
        () => {
          for (const s of batch.sessions.values()) {
            const data = json("session", s)
            if (data !== undefined)
              sql.putSession.run(
                s.id,
                s.projectID,
                s.parentID || null,
                s.time.updated,
                data,
                s.tree ?? null,
                s.directory
              )
          }
          for (const m of batch.messages.values()) {
            const data = json("message", m)
            if (data === undefined) continue
            sql.putMessage.run(m.sessionID, m.id, data)
            messages.push([m, data])
          }
          for (const p of batch.parts.values()) {
            const data = json("part", p)
            if (data === undefined) continue
            sql.putPart.run(p.sessionID, p.messageID, p.id, data)
            parts.push([p, data])
          }
        },
        () => {
          for (const [m, data] of messages) cacheMessage(m.sessionID, m.id, data)
          for (const [p, data] of parts) cachePart(p.sessionID, p.messageID, p.id, data)
        }
      )
      return { rejected, messages: messages.map(([m]) => key(m.sessionID, m.id)) }
    }

    // Built after the connection, so its shutdown flush runs before the connection closes.
    const writes = yield* makeWriteBehind({
      write: (batch) => attempt("flush", () => writeBatch(batch)),
      hasMessage: (sessionID, messageID) =>
        attempt("putPart", () => sql.hasMessage.get(sessionID, messageID) !== undefined),
      flushDelay: options.flushDelay
    })

    /** Flushes, then runs `body`: reads see every earlier write. */
    const afterFlush = <A>(operation: string, body: () => A) => writes.afterFlush(attempt(operation, body))
    /** Flushes, then deletes in one transaction (no batched write outlives it) and updates the cache. */
    const deleting = <A>(operation: string, body: () => A, update: (result: A) => void) =>
      afterFlush(operation, () => ownWrite(body, update))
    /** Runs `body` in one read transaction (a consistent view across its queries). */
    const reading = <A>(body: () => A): A => transaction(db, "DEFERRED", body)

    const partsOf = (rows: ReadonlyArray<Row>) => rows.map((row) => parse(decoders.part, "part", row))

    return SessionStore.of({
      putSession: writes.putSession,
      getSession: Effect.fn("SessionStore.getSession")(function* (sessionID: string) {
        const row = yield* afterFlush("getSession", () => sql.getSession.get(sessionID))
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
        return yield* afterFlush("listSessions", () => {
          const statement = listStatements.get(text) ?? db.prepare(text)
          listStatements.set(text, statement)
          return statement.all(...params).map((row) => parse(decoders.session, "session", row))
        })
      }),
      deleteSession: Effect.fn("SessionStore.deleteSession")(function* (sessionID: string) {
        yield* deleting(
          "deleteSession",
          () => {
            const ids = sql.sessionTree.all(sessionID).map((row) => String(row.id))
            for (const id of ids) {
              sql.deleteSessionParts.run(id)
              sql.deleteSessionMessages.run(id)
              sql.deleteSession.run(id)
            }
            return ids
          },
          (ids) => {
            for (const id of ids) cache.delete(id)
          }
        )
        writes.forgetMessages()
      }),
      putMessage: writes.putMessage,
      getMessage: Effect.fn("SessionStore.getMessage")(function* (sessionID: string, messageID: string) {
        const found = yield* afterFlush("getMessage", (): MessageWithParts | undefined => {
          revalidate()
          const held = cache.get(sessionID)
          if (held !== undefined) {
            const message = held.messages.get(messageID)
            return message && messageOf(message)
          }
          return reading(() => {
            const row = sql.getMessage.get(sessionID, messageID)
            if (!row) return undefined
            const info = parse(decoders.message, "message", row)
            return { info, parts: partsOf(sql.partsOfMessage.all(sessionID, messageID)) }
          })
        })
        if (!found) return yield* Effect.fail(messageNotFound(sessionID, messageID))
        return found
      }),
      // No flush first: what is put but not written yet is read from memory, over the history held, so that the
      // loop's read before each request costs no transaction (the batch goes to disk on its own, `flushDelay` later).
      messages: Effect.fn("SessionStore.messages")(function* (sessionID: string) {
        return yield* attempt("messages", () => historyWithUnwritten(sessionID))
      }),
      removeMessage: Effect.fn("SessionStore.removeMessage")(function* (sessionID: string, messageID: string) {
        yield* deleting(
          "removeMessage",
          () => {
            sql.deleteMessageParts.run(sessionID, messageID)
            sql.deleteMessage.run(sessionID, messageID)
          },
          () => {
            const held = cache.get(sessionID)
            if (held?.messages.delete(messageID)) held.order = undefined
          }
        )
        writes.forgetMessages(sessionID, messageID)
      }),
      putPart: writes.putPart,
      removePart: Effect.fn("SessionStore.removePart")(function* (
        sessionID: string,
        messageID: string,
        partID: string
      ) {
        yield* deleting(
          "removePart",
          () => sql.deletePart.run(sessionID, messageID, partID),
          () => {
            const message = cache.get(sessionID)?.messages.get(messageID)
            if (message?.parts.delete(partID)) message.order = undefined
          }
        )
      }),
      flush: writes.flush,
      summaries: (sessionIDs) => afterFlush("summaries", () => reading(() => querySummaries(db, sessionIDs)))
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
