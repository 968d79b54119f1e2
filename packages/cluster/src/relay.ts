/**
 * Events from runners to servers, through Postgres. A runner's sessions publish on the runner's own bus; the relay
 * writes them in small batches (one row per batch, in one transaction with a `NOTIFY` that names the row), and every
 * server `LISTEN`s and reads the batches it is told about. Postgres delivers notifications in commit order, so a
 * server sees each runner's events in the order they were published, whichever runner holds a session now.
 *
 * Each event of a session is numbered in the same transaction: `seq` counts the events of its top-level session (a
 * session and its subagents' share one count) in `lathe_event_seq`, whose row lock makes writers of one session
 * commit in `seq` order. So every server gives an event the same id, and a client resumes on any of them.
 */

import { PgClient } from "@effect/sql-pg"
import type { LatheEvent } from "@lathe/core/schema"
import { type EventPosition, eventSessionID } from "@lathe/server"
import { Duration, Effect, Queue, Schedule, type Scope, Semaphore } from "effect"
import { SqlClient, type SqlError } from "effect/sql"
import { migrate } from "./migrations.js"

/** The Postgres channel batches are announced on. */
export const CHANNEL = "lathe_events"

/** Tuning of the publishing side. */
export interface PublisherOptions {
  /** How long the first unsent event waits for company before its batch is written (default 10 ms). */
  readonly linger?: Duration.Input
  /** A batch is written at once when it holds this many events (default 500). */
  readonly maxBatch?: number
  /** Batches older than this are deleted (default 15 minutes). */
  readonly retention?: Duration.Input
}

/** One relayed event with its place in its session's stream (`undefined` for events of no session). */
export interface RelayedEvent {
  readonly event: LatheEvent
  readonly position: EventPosition | undefined
}

/** Where a runner puts its events. */
export interface EventPublisher {
  /** Queues an event; never blocks the publisher's loop. */
  readonly publish: (event: LatheEvent) => void
  /** Writes whatever is queued now (shutdown, tests). */
  readonly flush: Effect.Effect<void>
}

/**
 * The publishing side, for the life of the scope. A failed write is retried (with backoff) and then logged; events
 * are a live view, the store holds the history, so a lost batch is never lost data.
 */
export const makePublisher = (options: PublisherOptions = {}) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* migrate
    const linger = Duration.fromInputUnsafe(options.linger ?? 10)
    const maxBatch = options.maxBatch ?? 500
    // Events wait in a plain array (never inside a fiber), so whatever is queued when the scope closes is written by
    // the finalizer; `wake` tells the writer there is something to write.
    const buffer: Array<LatheEvent> = []
    const wake = yield* Queue.unbounded<void>()

    // child session → parent, from the `session.created` events this runner published; top-level sessions map to
    // `null`. A session it did not see created (resumed here after a failover) is looked up in the store.
    const parents = new Map<string, string | null>()
    /** Set when the sessions table cannot be read (a relay without the Postgres store): no more lookups. */
    let storeless = false
    const lookupRoot = (sessionID: string) =>
      sql<{ id: string }>`
        WITH RECURSIVE up (id, parent_id, depth) AS (
          SELECT id, parent_id, 0 FROM lathe_session WHERE id = ${sessionID}
          UNION ALL
          SELECT s.id, s.parent_id, up.depth + 1 FROM lathe_session s JOIN up ON s.id = up.parent_id WHERE up.depth < 64
        ) SELECT id FROM up WHERE parent_id IS NULL`.pipe(
        Effect.map((rows) => rows[0]?.id),
        // A failed lookup: stop looking when there is no sessions table at all (a relay without the Postgres store).
        Effect.catch(() =>
          sql<{ present: boolean }>`SELECT to_regclass('lathe_session') IS NOT NULL AS present`.pipe(
            Effect.map((rows) => {
              storeless = rows[0]?.present === false
              return undefined
            }),
            Effect.catch(() => Effect.succeed(undefined))
          )
        )
      )
    const rootOf = Effect.fnUntraced(function* (sessionID: string) {
      let current = sessionID
      for (let depth = 0; depth < 64; depth++) {
        const parent = parents.get(current)
        if (parent === null) return current
        if (parent === undefined) {
          const root = storeless ? undefined : yield* lookupRoot(current)
          // Not stored yet (the store batches): count it as its own top-level session, and ask again next time.
          if (root === undefined) return current
          if (root !== current) parents.set(current, root)
          parents.set(root, null)
          return root
        }
        current = parent
      }
      return current
    })

    const write = (events: ReadonlyArray<LatheEvent>) =>
      Effect.gen(function* () {
        // Roots first, outside the transaction (a failed lookup must not abort it).
        const roots: Array<string | undefined> = []
        for (const event of events) {
          const sessionID = eventSessionID(event)
          roots.push(sessionID === undefined ? undefined : yield* rootOf(sessionID))
        }
        const counts = new Map<string, number>()
        for (const root of roots) if (root !== undefined) counts.set(root, (counts.get(root) ?? 0) + 1)
        yield* sql.withTransaction(
          Effect.gen(function* () {
            // The next number of each session, taken in a fixed order (two writers never wait on each other's rows).
            const next = new Map<string, number>()
            for (const [root, count] of [...counts].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
              const rows = yield* sql<{ seq: string | number }>`
                INSERT INTO lathe_event_seq (session_id, seq) VALUES (${root}, ${count})
                ON CONFLICT (session_id) DO UPDATE SET seq = lathe_event_seq.seq + EXCLUDED.seq
                RETURNING seq`
              next.set(root, Number(rows[0]?.seq ?? count) - count + 1)
            }
            const relayed = events.map((event, index): RelayedEvent => {
              const root = roots[index]
              if (root === undefined) return { event, position: undefined }
              const seq = next.get(root) ?? 1
              next.set(root, seq + 1)
              return { event, position: { root, seq } }
            })
            const rows = yield* sql<{ id: string }>`
              INSERT INTO lathe_event_batch (data) VALUES (${JSON.stringify(relayed)}::jsonb) RETURNING id`
            const id = rows[0]?.id
            if (id !== undefined) yield* sql`SELECT pg_notify(${CHANNEL}, ${String(id)})`
          })
        )
      }).pipe(
        Effect.retry({ schedule: Schedule.exponential(50), times: 4 }),
        Effect.catch((error) => Effect.logWarning("could not relay events to the servers", error)),
        // A batch taken from the buffer is written even when the scope closes meanwhile.
        Effect.uninterruptible
      )

    // One batch at a time, taken and written under one permit: a `flush` racing the background writer took the next
    // batch and, on another pooled connection, committed it before the batch being written (events out of order).
    const writing = yield* Semaphore.make(1)
    const writeAll = writing.withPermit(
      Effect.gen(function* () {
        while (buffer.length > 0) yield* write(buffer.splice(0, maxBatch))
      })
    )

    const drainOnce = Effect.gen(function* () {
      yield* Queue.take(wake)
      yield* Effect.sleep(linger)
      yield* Queue.takeBetween(wake, 0, Number.MAX_SAFE_INTEGER)
      yield* writeAll
    })
    yield* Effect.forkScoped(Effect.forever(drainOnce))

    const retention = Duration.toSeconds(Duration.fromInputUnsafe(options.retention ?? "15 minutes"))
    yield* Effect.forkScoped(
      sql`DELETE FROM lathe_event_batch WHERE created < now() - make_interval(secs => ${retention})`.pipe(
        Effect.catch(() => Effect.void),
        Effect.repeat(Schedule.spaced("1 minute"))
      )
    )

    const flush = writeAll
    yield* Effect.addFinalizer(() => flush)
    return {
      publish: (event: LatheEvent) => {
        if (event.type === "session.created") parents.set(event.session.id, event.session.parentID ?? null)
        buffer.push(event)
        if (buffer.length === 1) Queue.offerUnsafe(wake, undefined)
      },
      flush
    } satisfies EventPublisher
  })

/** A batch's rows: relayed events, or bare events as runners before per-session ids wrote them. */
const batchEvents = (data: unknown): ReadonlyArray<RelayedEvent> => {
  const items: unknown = typeof data === "string" ? JSON.parse(data) : data
  if (!Array.isArray(items)) return []
  return items.map((item: RelayedEvent | LatheEvent) =>
    "event" in item && typeof item.event === "object" ? item : { event: item as LatheEvent, position: undefined }
  )
}

/**
 * The listening side: calls `onEvent` with every relayed event and its position (`undefined` for events of no
 * session), in order, for the life of the scope. Reconnects after a lost connection (events published while it was
 * away are skipped: clients reload the session's messages).
 */
export const listen = (
  onEvent: (event: LatheEvent, position: EventPosition | undefined) => void,
  /** Called each time `LISTEN` is confirmed (at start and after a reconnect). */
  onListening: () => void = () => {}
): Effect.Effect<void, SqlError.SqlError, PgClient.PgClient | SqlClient.SqlClient | Scope.Scope> =>
  Effect.gen(function* () {
    const pg = yield* PgClient.PgClient
    yield* migrate
    const once = Effect.scoped(
      Effect.gen(function* () {
        const notes = yield* pg.listen(CHANNEL)
        onListening()
        yield* Effect.forever(
          Effect.gen(function* () {
            const note = yield* Queue.take(notes)
            const rows = yield* pg<{ data: unknown }>`SELECT data FROM lathe_event_batch WHERE id = ${note.payload}`
            for (const row of rows) for (const { event, position } of batchEvents(row.data)) onEvent(event, position)
          })
        )
      })
    )
    yield* Effect.forkScoped(
      once.pipe(
        Effect.catch((error) => Effect.logWarning("event relay connection lost; reconnecting", error)),
        Effect.repeat(Schedule.spaced("500 millis"))
      )
    )
  })
