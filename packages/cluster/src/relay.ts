/**
 * Events from runners to servers, through Postgres. A runner's sessions publish on the runner's own bus; the relay
 * writes them in small batches (one row per batch, in one transaction with a `NOTIFY` that names the row), and every
 * server `LISTEN`s and reads the batches it is told about. Postgres delivers notifications in commit order, so a
 * server sees each runner's events in the order they were published, whichever runner holds a session now.
 */

import { PgClient } from "@effect/sql-pg"
import type { LatheEvent } from "@lathe/core/schema"
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

    const write = (events: ReadonlyArray<LatheEvent>) =>
      sql
        .withTransaction(
          Effect.gen(function* () {
            const rows = yield* sql<{ id: string }>`
              INSERT INTO lathe_event_batch (data) VALUES (${JSON.stringify(events)}::jsonb) RETURNING id`
            const id = rows[0]?.id
            if (id !== undefined) yield* sql`SELECT pg_notify(${CHANNEL}, ${String(id)})`
          })
        )
        .pipe(
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
        buffer.push(event)
        if (buffer.length === 1) Queue.offerUnsafe(wake, undefined)
      },
      flush
    } satisfies EventPublisher
  })

/**
 * The listening side: calls `onEvent` with every relayed event, in order, for the life of the scope. Reconnects
 * after a lost connection (events published while it was away are skipped: clients reload the session's messages).
 */
export const listen = (
  onEvent: (event: LatheEvent) => void,
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
            const rows = yield* pg<{ data: ReadonlyArray<LatheEvent> | string }>`
              SELECT data FROM lathe_event_batch WHERE id = ${note.payload}`
            for (const row of rows) {
              const events =
                typeof row.data === "string" ? (JSON.parse(row.data) as ReadonlyArray<LatheEvent>) : row.data
              for (const event of events) onEvent(event)
            }
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
