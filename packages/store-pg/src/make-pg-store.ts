import {
  Message,
  type MessageWithParts,
  messageNotFound,
  Part,
  Session,
  type SessionFilter,
  SessionStore,
  StoreError,
  sessionNotFound
} from "@lathe/core"
import { type Duration, Effect, Schema, type Scope, Semaphore } from "effect"
import type { SqlClient } from "effect/sql"
import { type Batch, batchSize, emptyBatch, key, writeBatch } from "./pg-batch.js"
import { connectFailure, describeError } from "./pg-location.js"
import { migrate } from "./pg-migrations.js"

/** Tuning shared by both layers. */
export interface PgStoreOptions {
  /** How long after the first unflushed write the batch is written on its own (default 50 ms, from `Clock`). */
  readonly flushDelay?: Duration.Input
}

type Row = { readonly id: string; readonly data: string; readonly message_id?: string }

const decoders = {
  session: Schema.decodeUnknownSync(Session),
  message: Schema.decodeUnknownSync(Message),
  part: Schema.decodeUnknownSync(Part)
}

/** Serialization failures and deadlocks are retried this many times before a batch write fails. */
const WRITE_ATTEMPTS = 3

/**
 * A `SessionStore` over `sql` (a Postgres `SqlClient`), for as long as the scope; `label` (host:port/database)
 * names the database in errors. The schema is migrated first. Puts only update an in-memory batch keyed by id,
 * so a thousand versions of one part cost one row write; the batch is written in one transaction on `flush`,
 * `flushDelay` after its first write, before any read or delete (so reads see earlier writes), and when the scope
 * closes. Batches are written one at a time, in order; a failed batch stays pending under any newer puts.
 */
export const makePgStore = (
  sql: SqlClient.SqlClient,
  label: string,
  options: PgStoreOptions = {}
): Effect.Effect<SessionStore["Service"], StoreError, Scope.Scope> =>
  Effect.gen(function* () {
    // The pool connects lazily: one round trip here turns "cannot connect" into its own clear error.
    yield* sql`SELECT 1`.pipe(Effect.mapError((error) => connectFailure(label, error)))
    yield* migrate(sql, label)
    const scope = yield* Effect.scope
    const writeLock = yield* Semaphore.make(1)
    let pending: Batch = emptyBatch()
    // (session, message) pairs known to exist in the database, so a delta does not query for its message.
    const knownMessages = new Set<string>()
    let timerArmed = false

    const failure = (operation: string) => (error: unknown) =>
      error instanceof StoreError
        ? error
        : new StoreError({
            operation,
            message: `The Postgres session store at ${label} failed in ${operation}: ${describeError(error)}.`
          })
    const query = <A>(operation: string, effect: Effect.Effect<A, unknown>) =>
      effect.pipe(Effect.mapError(failure(operation)))

    const parse = <A>(decode: (input: unknown) => A, table: string, row: Row): A => {
      try {
        return decode(JSON.parse(row.data))
      } catch (error) {
        throw new StoreError({
          operation: `read ${table}`,
          message:
            `The ${table} "${row.id}" in the Postgres store at ${label} is corrupt (${describeError(error)}). It was ` +
            "changed outside Lathe or by an incompatible version; delete its session."
        })
      }
    }
    const decode = <A>(operation: string, body: () => A) => Effect.try({ try: body, catch: failure(operation) })

    /** Writes what is pending in one transaction; on failure it goes back under whatever was put meanwhile. */
    const flushNow = writeLock.withPermit(
      Effect.suspend(() => {
        if (batchSize(pending) === 0) return Effect.void
        const batch = pending
        pending = emptyBatch()
        return sql.withTransaction(writeBatch(sql, batch)).pipe(
          Effect.retry({ times: WRITE_ATTEMPTS - 1, while: (e) => e.reason.isRetryable }),
          // On failure or interruption (a timed write cut short by shutdown) the batch goes back, so the next
          // flush (the one at shutdown included) writes it.
          Effect.onError(() =>
            Effect.sync(() => {
              for (const name of ["sessions", "messages", "parts"] as const) {
                const newer = pending[name] as Map<string, unknown>
                for (const [k, v] of batch[name]) if (!newer.has(k)) newer.set(k, v)
              }
            })
          ),
          Effect.mapError(failure("flush")),
          Effect.flatMap(({ rejected, messages }) => {
            for (const k of messages) knownMessages.add(k)
            if (rejected.length === 0) return Effect.void
            return Effect.fail(
              new StoreError({
                operation: "flush",
                message: `Not saved, because their data is not plain JSON: ${rejected.join("; ")}. Keep metadata to JSON values.`
              })
            )
          })
        )
      })
    )
    const flush = flushNow.pipe(Effect.withSpan("SessionStore.flush"))

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

    /** Flushes, then runs `body`: reads see every earlier write, and no batched write outlives a delete. */
    const afterFlush = <A>(operation: string, body: Effect.Effect<A, unknown>) =>
      flushNow.pipe(Effect.andThen(query(operation, body)))

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
        const rows = yield* afterFlush(
          "getSession",
          sql<Row>`SELECT id, data FROM lathe_session WHERE id = ${sessionID}`
        )
        const row = rows[0]
        if (!row) return yield* Effect.fail(sessionNotFound(sessionID))
        return yield* decode("getSession", () => parse(decoders.session, "session", row))
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
        const where = [
          filter.projectID === undefined ? undefined : sql`project_id = ${filter.projectID}`,
          filter.parentID === null ? sql`parent_id IS NULL` : undefined,
          typeof filter.parentID === "string" ? sql`parent_id = ${filter.parentID}` : undefined
        ].filter((clause) => clause !== undefined)
        const limit = filter.limit === undefined ? sql`` : sql`LIMIT ${filter.limit}`
        const rows = yield* afterFlush(
          "listSessions",
          sql<Row>`SELECT id, data FROM lathe_session ${where.length > 0 ? sql`WHERE ${sql.and(where)}` : sql``}
            ORDER BY time_updated DESC, id DESC ${limit}`
        )
        return yield* decode("listSessions", () => rows.map((row) => parse(decoders.session, "session", row)))
      }),
      deleteSession: Effect.fn("SessionStore.deleteSession")(function* (sessionID: string) {
        // Parts go with their messages (ON DELETE CASCADE).
        yield* afterFlush(
          "deleteSession",
          sql.withTransaction(
            Effect.gen(function* () {
              const tree = yield* sql<{ readonly id: string }>`
                WITH RECURSIVE tree (id) AS (
                  SELECT ${sessionID}::text UNION SELECT s.id FROM lathe_session s JOIN tree ON s.parent_id = tree.id
                ) SELECT id FROM tree`
              const ids = tree.map((row) => row.id)
              yield* sql`DELETE FROM lathe_message WHERE session_id IN ${sql.in(ids)}`
              yield* sql`DELETE FROM lathe_session WHERE id IN ${sql.in(ids)}`
            })
          )
        )
        knownMessages.clear()
      }),
      putMessage: Effect.fn("SessionStore.putMessage")(function* (message: Message) {
        pending.messages.set(key(message.sessionID, message.id), message)
        yield* armTimer
      }),
      getMessage: Effect.fn("SessionStore.getMessage")(function* (sessionID: string, messageID: string) {
        const [messageRows, partRows] = yield* afterFlush(
          "getMessage",
          Effect.all([
            sql<Row>`SELECT id, data FROM lathe_message WHERE session_id = ${sessionID} AND id = ${messageID}`,
            sql<Row>`SELECT id, data FROM lathe_part WHERE session_id = ${sessionID} AND message_id = ${messageID}
              ORDER BY id`
          ])
        )
        const row = messageRows[0]
        if (!row) return yield* Effect.fail(messageNotFound(sessionID, messageID))
        return yield* decode(
          "getMessage",
          (): MessageWithParts => ({ info: parse(decoders.message, "message", row), parts: partsOf(partRows) })
        )
      }),
      messages: Effect.fn("SessionStore.messages")(function* (sessionID: string) {
        const [messageRows, partRows] = yield* afterFlush(
          "messages",
          Effect.all([
            sql<Row>`SELECT id, data FROM lathe_message WHERE session_id = ${sessionID} ORDER BY id`,
            sql<Row>`SELECT message_id, id, data FROM lathe_part WHERE session_id = ${sessionID}
              ORDER BY message_id, id`
          ])
        )
        return yield* decode("messages", (): ReadonlyArray<MessageWithParts> => {
          const parts = new Map<string, Array<Part>>()
          for (const row of partRows) {
            const messageID = String(row.message_id)
            const list = parts.get(messageID) ?? []
            list.push(parse(decoders.part, "part", row))
            parts.set(messageID, list)
          }
          return messageRows.map((row) => ({
            info: parse(decoders.message, "message", row),
            parts: parts.get(row.id) ?? []
          }))
        })
      }),
      removeMessage: Effect.fn("SessionStore.removeMessage")(function* (sessionID: string, messageID: string) {
        yield* afterFlush(
          "removeMessage",
          sql`DELETE FROM lathe_message WHERE session_id = ${sessionID} AND id = ${messageID}`
        )
        knownMessages.delete(key(sessionID, messageID))
      }),
      // Untraced on purpose, like the SQLite store: the loop calls this for every text delta.
      putPart: Effect.fnUntraced(function* (part: Part) {
        const messageKey = key(part.sessionID, part.messageID)
        if (!pending.messages.has(messageKey) && !knownMessages.has(messageKey)) {
          const rows = yield* query(
            "putPart",
            sql`SELECT 1 AS found FROM lathe_message WHERE session_id = ${part.sessionID} AND id = ${part.messageID}`
          )
          if (rows.length === 0) {
            return yield* Effect.fail(
              new StoreError({
                operation: "putPart",
                message: `Part ${part.id} was written before its message ${part.messageID}; write the message first.`
              })
            )
          }
          knownMessages.add(messageKey)
        }
        pending.parts.set(key(messageKey, part.id), part)
        yield* armTimer
      }),
      removePart: Effect.fn("SessionStore.removePart")(function* (
        sessionID: string,
        messageID: string,
        partID: string
      ) {
        yield* afterFlush(
          "removePart",
          sql`DELETE FROM lathe_part WHERE session_id = ${sessionID} AND message_id = ${messageID} AND id = ${partID}`
        )
      }),
      flush
    })
  })
