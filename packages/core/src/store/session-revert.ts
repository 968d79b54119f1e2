import type { MessageWithParts, Session } from "@lathe/plugin/schema"
import { Effect, Schema } from "effect"
import { Paths } from "../config/paths.js"
import { Snapshot, type SnapshotError } from "../contracts/snapshot.js"
import { sessionTree } from "./session.js"
import { SessionStore } from "./session-store.js"
import { type StepChange, sessionTurns, stepChanges } from "./session-turns.js"
import { SessionWriter } from "./session-writer.js"

/** There is nothing to undo or redo in the session (or no such turn). */
export class NothingToRevert extends Schema.TaggedError<NothingToRevert>()("NothingToRevert", {
  sessionID: Schema.String,
  message: Schema.String
}) {}

/**
 * Files the undo or redo would put back were changed since (by hand or by another program): nothing was changed,
 * and `files` names them. Undo or redo again with `force` to overwrite them.
 */
export class RevertConflict extends Schema.TaggedError<RevertConflict>()("RevertConflict", {
  sessionID: Schema.String,
  verb: Schema.Literals(["undo", "redo"]),
  files: Schema.Array(Schema.String),
  message: Schema.String
}) {}

/**
 * The session ran in another work tree (another clone or worktree of the repository) than the one Lathe runs in:
 * undo and redo write only into a session's own tree, so nothing was changed. `tree` is where it ran.
 */
export class OtherWorkTree extends Schema.TaggedError<OtherWorkTree>()("OtherWorkTree", {
  sessionID: Schema.String,
  tree: Schema.String,
  message: Schema.String
}) {}

/**
 * Fails with {@link OtherWorkTree} unless `session` ran in the work tree Lathe runs in. A session in a server's own
 * clone (`workspace`) is exempt: the runner holding it works in a clone rebuilt from the session, wherever it lives.
 */
const inOwnTree = Effect.fnUntraced(function* (session: Session, verb: "undo" | "redo") {
  if (session.workspace !== undefined) return
  const paths = yield* Paths
  const tree = yield* Effect.promise(() => sessionTree(session))
  if (tree === paths.root) return
  return yield* new OtherWorkTree({
    sessionID: session.id,
    tree,
    message:
      `This session (${session.id}) ran in ${tree}, another work tree than this one (${paths.root}); ${verb} writes ` +
      `only into a session's own tree, so nothing was changed. Run \`lathe ${verb} --session ${session.id}\` in ${tree}.`
  })
})

/** What an undo or redo did. */
export interface RevertResult {
  readonly session: Session
  /** The files put back (relative to the project root), sorted. */
  readonly files: ReadonlyArray<string>
  /** Of those, the files changed since the turn that `force` overwrote (their changes come back with redo). */
  readonly overwritten: ReadonlyArray<string>
}

/** How far `undo` goes. Without `step` or `turn`: the last turn that is not undone. */
export interface UndoOptions {
  /** Only the last step that changed files (undo again to go further back). */
  readonly step?: boolean | undefined
  /** Back to before turn `turn` (numbered from 1, as {@link sessionTurns} lists them): it and every later turn. */
  readonly turn?: number | undefined
  /** Put files back even when they were changed since (by hand or another program); otherwise RevertConflict. */
  readonly force?: boolean | undefined
}

/** How `redo` goes. */
export interface RedoOptions {
  /** Bring files back even when they were changed since the undo; otherwise RevertConflict. */
  readonly force?: boolean | undefined
}

const unique = (files: Iterable<string>) => [...new Set(files)].sort()

/** The files of `expected` (file → tree hash) whose content in the work tree now differs from that tree. */
const drifted = Effect.fnUntraced(function* (expected: ReadonlyMap<string, string>) {
  const snapshot = yield* Snapshot
  const byHash = new Map<string, Array<string>>()
  for (const [file, hash] of expected) byHash.set(hash, [...(byHash.get(hash) ?? []), file])
  const found: Array<string> = []
  for (const [hash, files] of byHash) {
    const changed = new Set((yield* snapshot.patch(hash)).files)
    found.push(...files.filter((file) => changed.has(file)))
  }
  return found.sort()
})

const conflict = (sessionID: string, verb: "undo" | "redo", files: ReadonlyArray<string>) =>
  new RevertConflict({
    sessionID,
    verb,
    files,
    message:
      `${files.length} file${files.length === 1 ? "" : "s"} changed since ${verb === "undo" ? "the agent's last change to them" : "the undo"} ` +
      `(by hand or by another program), and ${verb} would overwrite ${files.length === 1 ? "it" : "them"}: ${files.join(", ")}. ` +
      `Nothing was changed. To ${verb} anyway, run \`lathe ${verb} --force\` (\`/${verb} --force\` in the interactive ` +
      `session, \`"force": true\` in the API); ${verb === "undo" ? "`lathe redo` brings those changes back." : "your changes are then lost."}`
  })

/**
 * Undoes the work tree changes of a session from `messageID` on, up to where an earlier undo already went (each
 * step's patch; for a file several steps changed, the content before the first of them), and hides those messages:
 * the session's `revert` marks the point, and the next prompt drops the hidden messages for good. Before the first
 * undo the work tree is snapshotted, so {@link redoSession} can bring everything back. A file
 * changed since the agent's last change to it is a {@link RevertConflict} unless `force`; a session of another work
 * tree is an {@link OtherWorkTree}.
 */
export const revertSession = Effect.fn("Session.revert")(function* (
  sessionID: string,
  messageID: string,
  options: { readonly force?: boolean | undefined } = {}
) {
  const store = yield* SessionStore
  const snapshot = yield* Snapshot
  const writer = yield* SessionWriter
  const session = yield* store.getSession(sessionID)
  yield* inOwnTree(session, "undo")
  const messages = yield* store.messages(sessionID)
  const until = session.revert?.messageID
  const inRange = messages.filter((m) => m.info.id >= messageID && (until === undefined || m.info.id < until))
  const changes = yield* stepChanges(inRange)
  const files = unique(changes.flatMap((c) => c.files))
  // What each file should hold now: the tree after the last step that changed it.
  const expected = new Map<string, string | undefined>()
  for (const change of changes) for (const file of change.files) expected.set(file, change.after)
  const known = new Map([...expected].filter((entry): entry is [string, string] => entry[1] !== undefined))
  const overwritten = files.length === 0 ? [] : yield* drifted(known)
  if (overwritten.length > 0 && options.force !== true) return yield* conflict(sessionID, "undo", overwritten)
  // Tracked even when no step recorded a change: with snapshots off, that logs why nothing can be put back.
  const before = session.revert?.snapshot ?? (yield* snapshot.track)
  // Oldest first: for a file several steps changed, the earliest snapshot decides (its content before them all).
  if (files.length > 0) yield* snapshot.revert(changes.map((c) => ({ hash: c.hash, files: c.files })))
  const updated: Session = {
    ...session,
    revert: { messageID, ...(before !== undefined ? { snapshot: before } : {}) }
  }
  yield* writer.updateSession(updated)
  return { session: updated, files, overwritten } satisfies RevertResult
})

/** The assistant message of the session's last step that changed files and is not undone yet. */
export const lastChangingStep = (session: Session, messages: ReadonlyArray<MessageWithParts>) =>
  messages.findLast(
    (m) =>
      m.info.role === "assistant" &&
      (session.revert === undefined || m.info.id < session.revert.messageID) &&
      m.parts.some((part) => part.type === "patch")
  )

/**
 * `lathe undo`: puts back every file the last turn that is not undone changed (all its steps and its subagents'),
 * and hides the turn, prompt included, from the model until `redo`. With `turn`, goes back to before that turn;
 * with `step`, undoes only the last step that changed files.
 */
export const undoSession = Effect.fn("Session.undo")(function* (sessionID: string, options: UndoOptions = {}) {
  const store = yield* SessionStore
  const session = yield* store.getSession(sessionID)
  yield* inOwnTree(session, "undo")
  const messages = yield* store.messages(sessionID)
  const nothing = (message: string) => new NothingToRevert({ sessionID, message })
  if (options.step === true) {
    const step = lastChangingStep(session, messages)
    if (!step)
      return yield* nothing(
        `Nothing to undo in session ${sessionID}: no step of it changed files${session.revert ? " that is not undone already" : ""}.`
      )
    return yield* revertSession(sessionID, step.info.id, options)
  }
  const turns = sessionTurns(session, messages, [])
  if (options.turn !== undefined) {
    const turn = turns[options.turn - 1]
    if (!Number.isInteger(options.turn) || !turn)
      return yield* nothing(
        turns.length === 0
          ? `Session ${sessionID} has no turns yet.`
          : `Session ${sessionID} has no turn ${options.turn}: its turns are 1 to ${turns.length} (\`lathe undo --list\`).`
      )
    if (turn.undone)
      return yield* nothing(
        `Turn ${turn.index} of session ${sessionID} is undone already; \`lathe redo\` brings it back.`
      )
    return yield* revertSession(sessionID, turn.messageID, options)
  }
  const last = turns.findLast((turn) => !turn.undone)
  if (!last)
    return yield* nothing(
      turns.length === 0
        ? `Nothing to undo in session ${sessionID}: it has no turns yet.`
        : `Nothing to undo in session ${sessionID}: every turn is undone already; \`lathe redo\` brings them back.`
    )
  return yield* revertSession(sessionID, last.messageID, options)
})

/** Undoes the last step of the session that changed files (`lathe undo --step`). */
export const undoLastStep = (sessionID: string) => undoSession(sessionID, { step: true })

/**
 * `lathe redo`: brings back what the undos of the session took away (each undone file as it was before the first
 * undo) and shows the hidden messages again. A file changed since the undo is a {@link RevertConflict} unless `force`.
 */
export const redoSession = Effect.fn("Session.redo")(function* (sessionID: string, options: RedoOptions = {}) {
  const store = yield* SessionStore
  const snapshot = yield* Snapshot
  const writer = yield* SessionWriter
  const session = yield* store.getSession(sessionID)
  yield* inOwnTree(session, "redo")
  const revert = session.revert
  if (!revert)
    return yield* new NothingToRevert({
      sessionID,
      message: `Nothing to redo in session ${sessionID}: nothing was undone.`
    })
  const messages = yield* store.messages(sessionID)
  const changes: ReadonlyArray<StepChange> = yield* stepChanges(messages.filter((m) => m.info.id >= revert.messageID))
  const files = unique(changes.flatMap((c) => c.files))
  // What each file should hold now: what the undo put back, the tree before the first step that changed it.
  const expected = new Map<string, string>()
  for (const change of changes)
    for (const file of change.files) if (!expected.has(file)) expected.set(file, change.hash)
  const overwritten = files.length === 0 || revert.snapshot === undefined ? [] : yield* drifted(expected)
  if (overwritten.length > 0 && options.force !== true) return yield* conflict(sessionID, "redo", overwritten)
  if (revert.snapshot !== undefined && files.length > 0) yield* snapshot.revert([{ hash: revert.snapshot, files }])
  const { revert: _, ...rest } = session
  const updated: Session = rest
  yield* writer.updateSession(updated)
  return { session: updated, files, overwritten } satisfies RevertResult
})

/** `lathe redo` without options; kept for callers of the step-by-step API. */
export const unrevertSession = (sessionID: string) => redoSession(sessionID)

/**
 * Makes an undo final: removes the messages hidden by `session.revert` and clears it. SessionPrompt calls this when
 * a new prompt arrives in a session with undone steps.
 */
export const commitRevert = Effect.fn("Session.commitRevert")(function* (sessionID: string) {
  const store = yield* SessionStore
  const writer = yield* SessionWriter
  const session = yield* store.getSession(sessionID)
  const revert = session.revert
  if (!revert) return session
  for (const message of yield* store.messages(sessionID)) {
    if (message.info.id < revert.messageID) continue
    yield* writer.removeMessage(sessionID, message.info.id)
  }
  const { revert: _, ...rest } = session
  yield* writer.updateSession(rest)
  return rest
})

/** Every way an undo or redo can fail. */
export type RevertError = NothingToRevert | RevertConflict | OtherWorkTree | SnapshotError
