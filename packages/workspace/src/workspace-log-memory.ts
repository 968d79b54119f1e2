import { Clock, Effect, Layer } from "effect"
import { conflict, notBegun, sameOrigin } from "./errors.js"
import {
  keptCheckpoints,
  type WorkspaceEntry,
  WorkspaceLog,
  type WorkspaceLogOptions,
  type WorkspaceLogShape,
  type WorkspaceOrigin
} from "./workspace-log.js"

interface Stored {
  readonly origin: WorkspaceOrigin
  /** Newest last; at most `keep` entries. */
  readonly checkpoints: Array<{ readonly number: number; readonly patch: Uint8Array; readonly hash: string }>
  last: number
  updated: number
}

/**
 * The in-memory log. Every operation is synchronous inside one Effect, so concurrent `record` calls are
 * serialised by the runtime and never share a number. Patches are copied in and out, so callers cannot change
 * what was recorded.
 */
export const makeMemoryLog = (keep: number): Effect.Effect<WorkspaceLogShape> =>
  Effect.sync(() => {
    const sessions = new Map<string, Stored>()

    const begin = Effect.fn("WorkspaceLog.begin")(function* (sessionID: string, origin: WorkspaceOrigin) {
      const existing = sessions.get(sessionID)
      if (existing) {
        if (sameOrigin(existing.origin, origin)) return
        return yield* Effect.fail(conflict(sessionID, existing.origin, origin))
      }
      const now = yield* Clock.currentTimeMillis
      sessions.set(sessionID, {
        origin: { repo: origin.repo, ref: origin.ref, base: origin.base },
        checkpoints: [],
        last: 0,
        updated: now
      })
    })

    const record = Effect.fn("WorkspaceLog.record")(function* (
      sessionID: string,
      input: { readonly patch: Uint8Array; readonly hash: string }
    ) {
      const stored = sessions.get(sessionID)
      if (!stored) return yield* Effect.fail(notBegun(sessionID))
      const newest = stored.checkpoints.at(-1)
      if (newest?.hash === input.hash) return newest.number
      const now = yield* Clock.currentTimeMillis
      stored.last += 1
      stored.updated = now
      stored.checkpoints.push({ number: stored.last, patch: Uint8Array.from(input.patch), hash: input.hash })
      if (stored.checkpoints.length > keep) stored.checkpoints.splice(0, stored.checkpoints.length - keep)
      return stored.last
    })

    const latest = (sessionID: string) =>
      Effect.sync(() => {
        const stored = sessions.get(sessionID)
        if (!stored) return undefined
        const newest = stored.checkpoints.at(-1)
        const entry: WorkspaceEntry = {
          ...stored.origin,
          updated: stored.updated,
          ...(newest ? { checkpoint: newest.number, patch: Uint8Array.from(newest.patch), hash: newest.hash } : {})
        }
        return entry
      }).pipe(Effect.withSpan("WorkspaceLog.latest"))

    const at = (sessionID: string, checkpoint: number) =>
      Effect.sync(() => {
        const found = sessions.get(sessionID)?.checkpoints.find((c) => c.number === checkpoint)
        return found ? { patch: Uint8Array.from(found.patch), hash: found.hash } : undefined
      }).pipe(Effect.withSpan("WorkspaceLog.at"))

    const checkpoints = (sessionID: string) =>
      Effect.sync(() => (sessions.get(sessionID)?.checkpoints ?? []).map((c) => c.number)).pipe(
        Effect.withSpan("WorkspaceLog.checkpoints")
      )

    const remove = (sessionID: string) =>
      Effect.sync(() => {
        sessions.delete(sessionID)
      }).pipe(Effect.withSpan("WorkspaceLog.remove"))

    return { begin, record, latest, at, checkpoints, remove }
  })

/** `WorkspaceLog` in process memory: for tests, and for a single runner without a database. */
export const MemoryWorkspaceLog = {
  /** A new, empty log each time the layer is built. */
  layer: (options: WorkspaceLogOptions = {}): Layer.Layer<WorkspaceLog> =>
    Layer.effect(WorkspaceLog, Effect.map(makeMemoryLog(keptCheckpoints(options)), WorkspaceLog.of))
}
