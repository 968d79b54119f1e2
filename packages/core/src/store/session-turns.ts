import type { MessageWithParts, Session, StepFinishPart } from "@lathe/plugin/schema"
import { Effect } from "effect"
import { SessionStore } from "./session-store.js"

/** One step's change to the work tree, as undo and redo use it. */
export interface StepChange {
  /** The top-level message the change counts under (a subagent's changes count under the step that called it). */
  readonly messageID: string
  /** The tree before the step's first change. */
  readonly hash: string
  /** The files the step changed, relative to the project root. */
  readonly files: ReadonlyArray<string>
  /**
   * The tree after the step (its `step-finish` snapshot); undefined when not recorded (a step cut before its end,
   * or a session stored before Lathe recorded it), and then hand edits to its files cannot be detected.
   */
  readonly after: string | undefined
}

/** One turn of a session, as `lathe undo --list` shows it. */
export interface SessionTurn {
  /** Its place among the session's turns, from 1 (`lathe undo <n>` goes back to before turn n). */
  readonly index: number
  /** The person's message that started it: undoing the turn hides it and everything after it. */
  readonly messageID: string
  /** The prompt's text, without what Lathe added to it (a mentioned file's contents). */
  readonly prompt: string
  /** When the prompt was sent (ms since the epoch). */
  readonly time: number
  /** The files its steps (and its subagents' steps) changed, sorted. */
  readonly files: ReadonlyArray<string>
  /** Whether it is undone: hidden from the model until `redo` brings it back or the next prompt drops it. */
  readonly undone: boolean
}

/** A subagent's session is followed this deep at most (a task that runs a task that runs a task…). */
const MAX_DEPTH = 4

/** The person's prompts start turns; the marker message of a compaction does not. */
const startsTurn = (message: MessageWithParts) =>
  message.info.role === "user" && !message.parts.some((part) => part.type === "compaction")

/** The patches of one message, each with the tree after its step when that was recorded. */
const ownChanges = (message: MessageWithParts, countAs: string): Array<StepChange> => {
  // One step per assistant message: its patch and its step-finish.
  const finish = message.parts.findLast((p): p is StepFinishPart => p.type === "step-finish")
  return message.parts.flatMap((part) => {
    if (part.type !== "patch") return []
    // Before the step-finish snapshot was the tree after the step, it held the tree before: equal to the patch's.
    const after = finish?.snapshot !== undefined && finish.snapshot !== part.hash ? finish.snapshot : undefined
    return [{ messageID: countAs, hash: part.hash, files: part.files, after }]
  })
}

/**
 * Every step change of `messages` in the order the steps ran, a subagent's steps right after the step whose call ran
 * them (only its messages made during that call, since a subagent session can be resumed later). A call ran a
 * subagent when its metadata names a `sessionID` whose parent is the call's session (the task tool's does).
 */
export const stepChanges = Effect.fnUntraced(function* (
  messages: ReadonlyArray<MessageWithParts>,
  countAs?: string,
  depth = 0
): Effect.fn.Return<Array<StepChange>, never, SessionStore> {
  const store = yield* SessionStore
  const changes: Array<StepChange> = []
  for (const message of messages) {
    const owner = countAs ?? message.info.id
    changes.push(...ownChanges(message, owner))
    if (depth >= MAX_DEPTH) continue
    for (const part of message.parts) {
      if (part.type !== "tool" || part.state.status !== "completed") continue
      const child = part.state.metadata.sessionID
      if (typeof child !== "string") continue
      const parent = yield* store.getSession(child).pipe(
        Effect.map((session) => session.parentID),
        Effect.orElseSucceed(() => undefined)
      )
      if (parent !== message.info.sessionID) continue
      const { start, end } = part.state.time
      const all = yield* store.messages(child).pipe(Effect.orElseSucceed(() => []))
      const during = all.filter((m) => m.info.time.created >= start && m.info.time.created <= end)
      changes.push(...(yield* stepChanges(during, owner, depth + 1)))
    }
  }
  return changes
})

/** The session's turns, oldest first, with the files each changed (`changes` from {@link stepChanges}). */
export const sessionTurns = (
  session: Session,
  messages: ReadonlyArray<MessageWithParts>,
  changes: ReadonlyArray<StepChange>
): Array<SessionTurn> => {
  const starts = messages.filter(startsTurn)
  return starts.map((start, i) => {
    const from = start.info.id
    const until = starts[i + 1]?.info.id
    const inTurn = (id: string) => id >= from && (until === undefined || id < until)
    const prompt = start.parts
      .flatMap((part) => (part.type === "text" && part.synthetic !== true ? [part.text] : []))
      .join("\n")
    return {
      index: i + 1,
      messageID: from,
      prompt,
      time: start.info.time.created,
      files: [...new Set(changes.filter((c) => inTurn(c.messageID)).flatMap((c) => c.files))].sort(),
      undone: session.revert !== undefined && from >= session.revert.messageID
    }
  })
}

/** The turns of a stored session (for `lathe undo --list`, `/undo --list` and `GET /sessions/:id/turns`). */
export const listTurns = Effect.fn("Session.turns")(function* (sessionID: string) {
  const store = yield* SessionStore
  const session = yield* store.getSession(sessionID)
  const messages = yield* store.messages(sessionID)
  return sessionTurns(session, messages, yield* stepChanges(messages))
})
