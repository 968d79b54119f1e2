import {
  makeWriteBehind,
  messageNotFound,
  type SessionFilter,
  SessionStore,
  StoreError,
  sessionNotFound
} from "@lathe/core"
import { Message, type MessageWithParts, Part, Session } from "@lathe/plugin/schema"
import { type Duration, Effect, Schema, type Scope } from "effect"
import type { SqlClient } from "effect/sql"
import { writeBatch } from "./pg-batch.js"
import { connectFailure, describeError } from "./pg-location.js"
import { migrate } from "./pg-migrations.js"

/** Tuning shared by both layers. */
export interface PgStoreOptions {
  /** How long after the first unflushed write the batch is written on its own (default 50 ms, from `Clock`). */
  readonly flushDelay?: Duration.Input
}

type Row = { readonly id: string; readonly data: string; readonly message_id?: string }

/** A tree's path with one trailing slash: what a directory below it starts with. */
const below = (tree: string): string => (tree.endsWith("/") ? tree : `${tree}/`)

const decoders = {
  session: Schema.decodeUnknownSync(Session),
  message: Schema.decodeUnknownSync(Message),
  part: Schema.decodeUnknownSync(Part)
}

/** Serialization failures and deadlocks are retried this many times before a batch write fails. */
const WRITE_ATTEMPTS = 3

/**
 * A `SessionStore` over `sql` (a Postgres `SqlClient`), for as long as the scope; `label` (host:port/database)
 * names the database in errors. The schema is migrated first. Puts go to core's write-behind batch, written in one
 * transaction on `flush`, `flushDelay` after its first write, before any read or delete (so reads see earlier
 * writes), and when the scope closes; batches one at a time, in order, a failed one pending under any newer puts.
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

    // Built after the pool, so its shutdown flush runs before the pool closes.
    const writes = yield* makeWriteBehind({
      // Serialization failures and deadlocks are retried; on failure or interruption (a timed write cut short by
      // shutdown) the batch goes back, so the next flush (the one at shutdown included) writes it.
      write: (batch) =>
        sql
          .withTransaction(writeBatch(sql, batch))
          .pipe(
            Effect.retry({ times: WRITE_ATTEMPTS - 1, while: (e) => e.reason.isRetryable }),
            Effect.mapError(failure("flush"))
          ),
      hasMessage: (sessionID, messageID) =>
        query(
          "putPart",
          sql`SELECT 1 AS found FROM lathe_message WHERE session_id = ${sessionID} AND id = ${messageID}`
        ).pipe(Effect.map((rows) => rows.length > 0)),
      flushDelay: options.flushDelay
    })

    /** Flushes, then runs `body`: reads see every earlier write, and no batched write outlives a delete. */
    const afterFlush = <A>(operation: string, body: Effect.Effect<A, unknown>) =>
      writes.afterFlush(query(operation, body))

    const partsOf = (rows: ReadonlyArray<Row>) => rows.map((row) => parse(decoders.part, "part", row))

    return SessionStore.of({
      putSession: writes.putSession,
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
          // The rule of `inTree`: the recorded tree, or (rows stored before trees were) the directory in the tree.
          filter.tree === undefined
            ? undefined
            : sql`(tree = ${filter.tree} OR (tree IS NULL AND (directory = ${filter.tree}
                OR left(directory, length(${below(filter.tree)})) = ${below(filter.tree)})))`,
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
        writes.forgetMessages()
      }),
      putMessage: writes.putMessage,
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
        writes.forgetMessages(sessionID, messageID)
      }),
      putPart: writes.putPart,
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
      flush: writes.flush
    })
  })
