import { Effect, Schema } from "effect"
import { Bus } from "./bus.js"
import type { MessageWithParts, Session } from "./message.js"
import type { PatchPart } from "./part.js"
import { SessionStore } from "./session-store.js"
import { Snapshot, type SnapshotError, type SnapshotPatch } from "./snapshot.js"

/** There is nothing to undo or redo in the session. */
export class NothingToRevert extends Schema.TaggedError<NothingToRevert>()("NothingToRevert", {
  sessionID: Schema.String,
  message: Schema.String
}) {}

/** What an undo or redo did. */
export interface RevertResult {
  readonly session: Session
  /** The files put back (relative to the project root), sorted. */
  readonly files: ReadonlyArray<string>
}

const patchesFrom = (messages: ReadonlyArray<MessageWithParts>, messageID: string): Array<PatchPart> =>
  messages
    .filter((m) => m.info.id >= messageID)
    .flatMap((m) => m.parts.filter((part): part is PatchPart => part.type === "patch"))

/**
 * Undoes the work tree changes of a session from `messageID` on (every step's `patch`, oldest first), and hides
 * those messages: the session's `revert` marks the point, and the next prompt drops the hidden messages for good.
 * Before the first undo the work tree is snapshotted, so {@link unrevertSession} can bring everything back.
 * Undoing again moves the point further back and keeps that first snapshot.
 */
export const revertSession = Effect.fn("Session.revert")(function* (sessionID: string, messageID: string) {
  const store = yield* SessionStore
  const snapshot = yield* Snapshot
  const bus = yield* Bus
  const session = yield* store.getSession(sessionID)
  const messages = yield* store.messages(sessionID)
  const patches = patchesFrom(messages, messageID)
  const before = session.revert?.snapshot ?? (yield* snapshot.track)
  // Oldest first: for a file several steps changed, the earliest snapshot decides (its content before them all).
  const revertable: Array<SnapshotPatch> = patches.map((p) => ({ hash: p.hash, files: p.files }))
  yield* snapshot.revert(revertable)
  const updated: Session = {
    ...session,
    revert: { messageID, ...(before !== undefined ? { snapshot: before } : {}) }
  }
  yield* store.putSession(updated)
  yield* bus.publish({ type: "session.updated", session: updated })
  return { session: updated, files: [...new Set(patches.flatMap((p) => p.files))].sort() } satisfies RevertResult
})

/** The assistant message of the session's last step that changed files and is not undone yet. */
export const lastChangingStep = (session: Session, messages: ReadonlyArray<MessageWithParts>) =>
  messages.findLast(
    (m) =>
      m.info.role === "assistant" &&
      (session.revert === undefined || m.info.id < session.revert.messageID) &&
      m.parts.some((part) => part.type === "patch")
  )

/** Undoes the last step of the session that changed files (`lathe undo`). */
export const undoLastStep = Effect.fn("Session.undo")(function* (sessionID: string) {
  const store = yield* SessionStore
  const session = yield* store.getSession(sessionID)
  const step = lastChangingStep(session, yield* store.messages(sessionID))
  if (!step)
    return yield* new NothingToRevert({
      sessionID,
      message: `Nothing to undo in session ${sessionID}: no step of it changed files${session.revert ? " that is not undone already" : ""}.`
    })
  return yield* revertSession(sessionID, step.info.id)
})

/**
 * Brings back what the undos of the session took away (the work tree as it was before the first undo) and shows
 * the hidden messages again (`lathe redo`).
 */
export const unrevertSession = Effect.fn("Session.unrevert")(function* (sessionID: string) {
  const store = yield* SessionStore
  const snapshot = yield* Snapshot
  const bus = yield* Bus
  const session = yield* store.getSession(sessionID)
  const revert = session.revert
  if (!revert)
    return yield* new NothingToRevert({
      sessionID,
      message: `Nothing to redo in session ${sessionID}: nothing was undone.`
    })
  const messages = yield* store.messages(sessionID)
  const files = [...new Set(patchesFrom(messages, revert.messageID).flatMap((p) => p.files))].sort()
  if (revert.snapshot !== undefined) yield* snapshot.restore(revert.snapshot)
  const { revert: _, ...rest } = session
  const updated: Session = rest
  yield* store.putSession(updated)
  yield* bus.publish({ type: "session.updated", session: updated })
  return { session: updated, files } satisfies RevertResult
})

/**
 * Makes an undo final: removes the messages hidden by `session.revert` and clears it. SessionPrompt calls this when
 * a new prompt arrives in a session with undone steps.
 */
export const commitRevert = Effect.fn("Session.commitRevert")(function* (sessionID: string) {
  const store = yield* SessionStore
  const bus = yield* Bus
  const session = yield* store.getSession(sessionID)
  const revert = session.revert
  if (!revert) return session
  for (const message of yield* store.messages(sessionID)) {
    if (message.info.id < revert.messageID) continue
    yield* store.removeMessage(sessionID, message.info.id)
    yield* bus.publish({ type: "message.removed", sessionID, messageID: message.info.id })
  }
  const { revert: _, ...rest } = session
  yield* store.putSession(rest)
  yield* bus.publish({ type: "session.updated", session: rest })
  return rest
})

/** Every way an undo or redo can fail. */
export type RevertError = NothingToRevert | SnapshotError
