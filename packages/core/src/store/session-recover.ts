/**
 * Closing what a dead process left open in a session. A process killed in the middle of a step (SIGKILL, a
 * crash, a closed terminal) leaves tool calls `pending` or `running` and an assistant message never completed;
 * the model messages would then hold a call without its result, which providers refuse. The store keeps what
 * was streamed, so recovery only settles states: nothing streamed is dropped.
 */

import type { AssistantMessage, MessageWithParts, Part } from "@lathe/plugin/schema"
import { Clock, Effect } from "effect"
import { SessionStore } from "./session-store.js"
import { SessionWriter } from "./session-writer.js"

/** The error a tool call gets when the process running it stopped before it finished. */
export const INTERRUPTED_TOOL_ERROR = "interrupted: the process stopped before the tool finished"

/** The error of an assistant message whose step the process never finished; its streamed parts are kept. */
export const INTERRUPTED_MESSAGE_ERROR =
  "interrupted: the process stopped before this response finished; what was streamed so far is kept"

/** What {@link recoverSession} closed. */
export interface RecoverResult {
  /** Tool calls turned from pending or running into errors. */
  readonly tools: number
  /** Assistant messages marked interrupted. */
  readonly messages: number
}

/** The part with its open state settled at `now`, or `undefined` when it was not open. */
const closePart = (part: Part, now: number): Part | undefined => {
  if (part.type === "tool" && (part.state.status === "pending" || part.state.status === "running")) {
    const start = part.state.status === "running" ? part.state.time.start : now
    return {
      ...part,
      state: { status: "error", input: part.state.input, error: INTERRUPTED_TOOL_ERROR, time: { start, end: now } }
    }
  }
  if ((part.type === "text" || part.type === "reasoning") && part.time && part.time.end === undefined)
    return { ...part, time: { start: part.time.start, end: now } }
  return undefined
}

/** The assistant message completed now and marked interrupted, or `undefined` when it was completed. */
const closeMessage = (message: MessageWithParts["info"], now: number): AssistantMessage | undefined => {
  if (message.role !== "assistant" || message.time.completed !== undefined) return undefined
  return {
    ...message,
    error: message.error ?? { name: "Aborted", message: INTERRUPTED_MESSAGE_ERROR },
    time: { ...message.time, completed: now }
  }
}

/**
 * Settles every step of `sessionID` left open by a process that stopped: `pending`/`running` tool calls become
 * errors ({@link INTERRUPTED_TOOL_ERROR}), open text and reasoning parts end, and an assistant message without a
 * completion time is completed with an `Aborted` error ({@link INTERRUPTED_MESSAGE_ERROR}), keeping what was
 * streamed. Each change is stored and published (`part.updated`, `message.updated`), then the store is flushed.
 *
 * Contract: call it only when no live turn is working on the session (`SessionPrompt.prompt` calls it once its
 * busy check has passed); a step in progress would look open. Idempotent: a closed session is left unchanged.
 */
export const recoverSession = Effect.fn("Session.recover")(function* (sessionID: string) {
  const store = yield* SessionStore
  const writer = yield* SessionWriter
  const messages = yield* store.messages(sessionID)
  const now = yield* Clock.currentTimeMillis
  let tools = 0
  let closed = 0
  for (const { info, parts } of messages) {
    for (const part of parts) {
      const next = closePart(part, now)
      if (next === undefined) continue
      if (next.type === "tool") tools++
      // Settling a dead process's call is no news of the call: `part.updated` only, as before.
      yield* writer.putPart(next, { toolEvent: false })
    }
    const message = closeMessage(info, now)
    if (message === undefined) continue
    closed++
    yield* writer.putMessage(message)
  }
  if (tools + closed > 0) yield* writer.flush
  return { tools, messages: closed } satisfies RecoverResult
})
