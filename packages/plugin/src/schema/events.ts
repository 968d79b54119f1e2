import { Schema } from "effect"
import { Message, MessageError, Session } from "./message.js"
import { Part, Tokens, ToolState } from "./part.js"

/**
 * The one event protocol of Lathe. Every change the loop makes is published on the Bus as one of these;
 * `lathe run --format json` prints exactly this union, one JSON object per line (then the CLI's own closing
 * `run.result` line, docs/headless.md), and UIs render from it.
 * Vocabulary: a **step** is one model call, a **turn** is a prompt until the session is idle, a **call**
 * is one tool call.
 */
const event = <const T extends string, const F extends Schema.Struct.Fields>(type: T, fields: F) =>
  Schema.Struct({ type: Schema.Literal(type), ...fields })

/** Why the session is busy, or that it is not. */
export const SessionStatus = Schema.Union([
  Schema.Struct({ type: Schema.Literal("idle") }),
  Schema.Struct({ type: Schema.Literal("busy") }),
  Schema.Struct({
    type: Schema.Literal("retry"),
    attempt: Schema.Number,
    message: Schema.String,
    /** Epoch ms of the next attempt. */
    next: Schema.Number
  })
])
export type SessionStatus = typeof SessionStatus.Type

/**
 * A session was created (a new conversation, or a child session of the task tool; then `callID` is the parent
 * session's tool call that started it).
 */
export const SessionCreated = event("session.created", { session: Session, callID: Schema.optionalKey(Schema.String) })
/** A session's title, summary, time or revert state changed. */
export const SessionUpdated = event("session.updated", { session: Session })
/** A session was deleted with its messages. */
export const SessionDeleted = event("session.deleted", { sessionID: Schema.String })
/** A turn began: the loop is working on a prompt. */
export const SessionStarted = event("session.started", { sessionID: Schema.String, messageID: Schema.String })
/** The session's status changed (busy, idle, or waiting to retry). */
export const SessionStatusChanged = event("session.status", { sessionID: Schema.String, status: SessionStatus })
/** The turn ended and the session waits for the person. */
export const SessionIdle = event("session.idle", { sessionID: Schema.String })
/** The turn failed; `error` is what is recorded on the message. */
export const SessionError = event("session.error", { sessionID: Schema.String, error: MessageError })
/** Older history was summarised to fit the model's context. */
export const SessionCompacted = event("session.compacted", { sessionID: Schema.String, messageID: Schema.String })
/** A message was created or changed (tokens, cost, finish, error). */
export const MessageUpdated = event("message.updated", { message: Message })
/** A message was removed (undo). */
export const MessageRemoved = event("message.removed", { sessionID: Schema.String, messageID: Schema.String })
/** A part was created or changed; the full part. */
export const PartUpdated = event("part.updated", { part: Part })
/** Text was appended to a text or reasoning part; `part.updated` with the full text follows at its end. */
export const PartDelta = event("part.delta", {
  sessionID: Schema.String,
  messageID: Schema.String,
  partID: Schema.String,
  field: Schema.Literals(["text"]),
  delta: Schema.String
})
/** A part was removed. */
export const PartRemoved = event("part.removed", {
  sessionID: Schema.String,
  messageID: Schema.String,
  partID: Schema.String
})
/** A model call began. `step` counts from 1 within the turn. */
export const StepStarted = event("step.started", {
  sessionID: Schema.String,
  messageID: Schema.String,
  step: Schema.Number
})
/** A model call ended, with what it cost. */
export const StepFinished = event("step.finished", {
  sessionID: Schema.String,
  messageID: Schema.String,
  step: Schema.Number,
  reason: Schema.String,
  tokens: Tokens,
  cost: Schema.Number
})
const toolFields = {
  sessionID: Schema.String,
  messageID: Schema.String,
  partID: Schema.String,
  callID: Schema.String,
  tool: Schema.String,
  state: ToolState
}
/** The model began a tool call; its input is still streaming. */
export const ToolPending = event("tool.pending", toolFields)
/** A tool call is executing. */
export const ToolRunning = event("tool.running", toolFields)
/** A tool call finished with output. */
export const ToolCompleted = event("tool.completed", toolFields)
/** A tool call failed (invalid input, a throw, a rejection, or an abort). */
export const ToolErrored = event("tool.error", toolFields)
/** A permission ask waits for a reply. */
export const PermissionAsked = event("permission.asked", {
  id: Schema.String,
  sessionID: Schema.String,
  callID: Schema.optionalKey(Schema.String),
  permission: Schema.String,
  patterns: Schema.Array(Schema.String),
  always: Schema.Array(Schema.String),
  metadata: Schema.Record(Schema.String, Schema.Unknown)
})
/** A permission ask was decided: by the person, a hook, a rule, or an abort. */
export const PermissionReplied = event("permission.replied", {
  id: Schema.String,
  sessionID: Schema.String,
  reply: Schema.Literals(["once", "always", "reject"]),
  message: Schema.optionalKey(Schema.String)
})
/** One question for the person, with optional choices. */
export const QuestionItem = Schema.Struct({
  question: Schema.String,
  /** A short label for the question (a few words). */
  header: Schema.optionalKey(Schema.String),
  options: Schema.optionalKey(
    Schema.Array(Schema.Struct({ label: Schema.String, description: Schema.optionalKey(Schema.String) }))
  ),
  /** Whether several options may be chosen. */
  multiple: Schema.optionalKey(Schema.Boolean)
})
export type QuestionItem = typeof QuestionItem.Type
/** A tool asks the person questions and waits for the answers. */
export const QuestionAsked = event("question.asked", {
  id: Schema.String,
  sessionID: Schema.String,
  callID: Schema.optionalKey(Schema.String),
  questions: Schema.Array(QuestionItem)
})
/** The person answered (one list of answers per question), or the questions were dismissed. */
export const QuestionReplied = event("question.replied", {
  id: Schema.String,
  sessionID: Schema.String,
  answers: Schema.optionalKey(Schema.Array(Schema.Array(Schema.String))),
  dismissed: Schema.optionalKey(Schema.String)
})
/** A plugin failed at load or in a hook; it was skipped and the session goes on. */
export const PluginError = event("plugin.error", {
  plugin: Schema.String,
  hook: Schema.String,
  message: Schema.String
})
/** Something the person should know that is not an error (e.g. ignored untrusted config). */
export const Notice = event("notice", {
  level: Schema.Literals(["info", "warn"]),
  message: Schema.String
})

/** Every event, as one schema. */
export const LatheEvent = Schema.Union([
  SessionCreated,
  SessionUpdated,
  SessionDeleted,
  SessionStarted,
  SessionStatusChanged,
  SessionIdle,
  SessionError,
  SessionCompacted,
  MessageUpdated,
  MessageRemoved,
  PartUpdated,
  PartDelta,
  PartRemoved,
  StepStarted,
  StepFinished,
  ToolPending,
  ToolRunning,
  ToolCompleted,
  ToolErrored,
  PermissionAsked,
  PermissionReplied,
  QuestionAsked,
  QuestionReplied,
  PluginError,
  Notice
])
/** Every event Lathe publishes. */
export type LatheEvent = typeof LatheEvent.Type
/** The dotted name of an event. */
export type LatheEventType = LatheEvent["type"]
/** The event with a given name. */
export type EventOf<T extends LatheEventType> = Extract<LatheEvent, { readonly type: T }>

/** The names of every event, in catalogue order. */
export const eventTypes: ReadonlyArray<LatheEventType> = LatheEvent.members.map((member) => member.fields.type.literal)

/** The event a tool part's state publishes. */
export const toolEventType = (
  status: ToolState["status"]
): "tool.pending" | "tool.running" | "tool.completed" | "tool.error" =>
  status === "pending"
    ? "tool.pending"
    : status === "running"
      ? "tool.running"
      : status === "completed"
        ? "tool.completed"
        : "tool.error"
