/**
 * The write-behind batch the SQLite and Postgres stores share. Puts only update an in-memory batch keyed by row, so a
 * thousand versions of one part cost one row write; the store's `write` puts a batch in one transaction on `flush`,
 * `flushDelay` after the batch's first put (from `Clock`), before any read or delete (`afterFlush`, so reads see
 * earlier writes and no batched write outlives a delete) but one that reads the batch itself (`unwritten`), and when
 * the scope closes. Batches are written one at a time, in order; a batch that fails goes back under whatever was put
 * meanwhile, for the next flush.
 */

import type { Message, Part, Session } from "@lathe/plugin/schema"
import { type Duration, Effect, type Scope, Semaphore } from "effect"
import { type SessionStore, StoreError } from "./session-store.js"

/** Puts waiting to be written, each map keyed by the row's primary key (the newest version of each row wins). */
export interface WriteBatch {
  /** By session id. */
  readonly sessions: Map<string, Session>
  /** By `batchKey(sessionID, messageID)`. */
  readonly messages: Map<string, Message>
  /** By `batchKey(sessionID, messageID, partID)`. */
  readonly parts: Map<string, Part>
}

/** What a store's `write` of one batch reports once its transaction has committed. */
export interface WriteOutcome {
  /** Rows left out because their data is not plain JSON (`"part prt_1 (reason)"`); reported, never retried. */
  readonly rejected: ReadonlyArray<string>
  /** The `batchKey(sessionID, messageID)` of every message written: they exist now, so their parts need no check. */
  readonly messages: Iterable<string>
}

/** How a store plugs into {@link makeWriteBehind}. */
export interface WriteBehindOptions {
  /** Writes one batch in one transaction (retrying what it can); a failure leaves the batch pending. */
  readonly write: (batch: WriteBatch) => Effect.Effect<WriteOutcome, StoreError>
  /** Whether a message is stored, asked before the first part of a message this batch has not seen. */
  readonly hasMessage: (sessionID: string, messageID: string) => Effect.Effect<boolean, StoreError>
  /** How long after the first put of a batch it is written on its own (default 50 ms). */
  readonly flushDelay?: Duration.Input | undefined
}

/** The batch of one store: its puts, its flush, and what reads and deletes go through. */
export interface WriteBehind {
  readonly putSession: SessionStore["Service"]["putSession"]
  readonly putMessage: SessionStore["Service"]["putMessage"]
  readonly putPart: SessionStore["Service"]["putPart"]
  /** Writes what is pending (traced as `SessionStore.flush`). */
  readonly flush: Effect.Effect<void, StoreError>
  /** Flushes, then runs `body`. */
  readonly afterFlush: <A, E>(body: Effect.Effect<A, E>) => Effect.Effect<A, E | StoreError>
  /** Forgets that a message exists (it was removed), or, without arguments, every message (a session was deleted). */
  readonly forgetMessages: (sessionID?: string, messageID?: string) => void
  /**
   * What of one session was put but is not on disk yet (the batch being written, the pending one over it), for a read
   * that serves it from memory instead of flushing first; undefined when there is nothing.
   */
  readonly unwritten: (sessionID: string) => Unwritten | undefined
}

/** A session's rows put but not written yet, newest version of each. */
export interface Unwritten {
  /** By message id. */
  readonly messages: Map<string, Message>
  /** By message id, then part id. */
  readonly parts: Map<string, Map<string, Part>>
}

/** `into` with the messages and parts of `sessionID` in `batch` (keys start with the session id and a NUL). */
const collectUnwritten = (batch: WriteBatch, sessionID: string, into: Unwritten): void => {
  const prefix = `${sessionID}\u0000`
  for (const [key, message] of batch.messages) if (key.startsWith(prefix)) into.messages.set(message.id, message)
  for (const [key, part] of batch.parts) {
    if (!key.startsWith(prefix)) continue
    let parts = into.parts.get(part.messageID)
    if (parts === undefined) {
      parts = new Map()
      into.parts.set(part.messageID, parts)
    }
    parts.set(part.id, part)
  }
}

/** A key no id can forge: ids never contain NUL. */
export const batchKey = (...ids: ReadonlyArray<string>): string => ids.join("\u0000")

const emptyBatch = (): WriteBatch => ({ sessions: new Map(), messages: new Map(), parts: new Map() })

const sizeOf = (batch: WriteBatch): number => batch.sessions.size + batch.messages.size + batch.parts.size

/** Puts `from`'s rows back under `into`'s newer ones. */
const restore = (from: WriteBatch, into: WriteBatch): void => {
  for (const [k, v] of from.sessions) if (!into.sessions.has(k)) into.sessions.set(k, v)
  for (const [k, v] of from.messages) if (!into.messages.has(k)) into.messages.set(k, v)
  for (const [k, v] of from.parts) if (!into.parts.has(k)) into.parts.set(k, v)
}

/**
 * The write-behind batch over a store's `write`, for as long as the scope (whose close writes what is left; build it
 * after the connection it writes to, so it closes first).
 */
export const makeWriteBehind = (options: WriteBehindOptions): Effect.Effect<WriteBehind, never, Scope.Scope> =>
  Effect.gen(function* () {
    const scope = yield* Effect.scope
    const writeLock = yield* Semaphore.make(1)
    let pending = emptyBatch()
    /** The batch being written, if one is: its messages count as known to a part put meanwhile. */
    let writing: WriteBatch | undefined
    // (session, message) pairs known to be stored, so a delta does not ask for its message.
    const knownMessages = new Set<string>()
    let timerArmed = false

    /** Writes what is pending; on failure or interruption it goes back under whatever was put meanwhile. */
    const flushNow: Effect.Effect<void, StoreError> = Effect.suspend(() =>
      // Nothing pending and nothing being written: every earlier write is stored already.
      sizeOf(pending) === 0 && writing === undefined
        ? Effect.void
        : writeLock.withPermit(
            Effect.suspend(() => {
              if (sizeOf(pending) === 0) return Effect.void
              const batch = pending
              pending = emptyBatch()
              writing = batch
              return options.write(batch).pipe(
                Effect.ensuring(
                  Effect.sync(() => {
                    writing = undefined
                  })
                ),
                Effect.onError(() => Effect.sync(() => restore(batch, pending))),
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
    )
    const flush = flushNow.pipe(Effect.withSpan("SessionStore.flush"))

    const timerFlush = Effect.suspend(() => {
      timerArmed = false
      return flush
    }).pipe(Effect.catch((error) => Effect.logWarning(`Batched session writes not saved yet: ${error.message}`)))

    /** Schedules a flush `flushDelay` after the first put of a batch, on a fiber owned by the store. */
    const armTimer = Effect.suspend(() => {
      if (timerArmed) return Effect.void
      timerArmed = true
      return Effect.forkIn(Effect.sleep(options.flushDelay ?? "50 millis").pipe(Effect.andThen(timerFlush)), scope)
    }).pipe(Effect.asVoid)

    yield* Effect.addFinalizer(() =>
      flush.pipe(Effect.catch((error) => Effect.logError(`Session writes lost at shutdown: ${error.message}`)))
    )

    return {
      putSession: Effect.fn("SessionStore.putSession")(function* (session: Session) {
        pending.sessions.set(session.id, session)
        yield* armTimer
      }),
      putMessage: Effect.fn("SessionStore.putMessage")(function* (message: Message) {
        pending.messages.set(batchKey(message.sessionID, message.id), message)
        yield* armTimer
      }),
      // Untraced on purpose: the loop calls this for every text delta, and a span per call cost ~5 µs, ten times
      // the rest of the call. The batch it joins is traced by `SessionStore.flush`.
      putPart: Effect.fnUntraced(function* (part: Part) {
        const messageKey = batchKey(part.sessionID, part.messageID)
        if (
          !pending.messages.has(messageKey) &&
          !knownMessages.has(messageKey) &&
          writing?.messages.has(messageKey) !== true
        ) {
          if (!(yield* options.hasMessage(part.sessionID, part.messageID))) {
            return yield* Effect.fail(
              new StoreError({
                operation: "putPart",
                message: `Part ${part.id} was written before its message ${part.messageID}; write the message first.`
              })
            )
          }
          knownMessages.add(messageKey)
        }
        pending.parts.set(batchKey(messageKey, part.id), part)
        yield* armTimer
      }),
      flush,
      afterFlush: (body) => flushNow.pipe(Effect.andThen(body)),
      forgetMessages: (sessionID, messageID) => {
        if (sessionID === undefined || messageID === undefined) knownMessages.clear()
        else knownMessages.delete(batchKey(sessionID, messageID))
      },
      unwritten: (sessionID) => {
        if (sizeOf(pending) === 0 && writing === undefined) return undefined
        const found: Unwritten = { messages: new Map(), parts: new Map() }
        if (writing !== undefined) collectUnwritten(writing, sessionID, found)
        collectUnwritten(pending, sessionID, found)
        return found.messages.size === 0 && found.parts.size === 0 ? undefined : found
      }
    }
  })
