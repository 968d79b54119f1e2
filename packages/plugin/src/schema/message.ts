import { Schema } from "effect"
import { Part, Tokens } from "./part.js"

/** Why a provider call failed; the tag decides whether Retry tries again. */
export const ProviderErrorReason = Schema.Union([
  Schema.TaggedStruct("RateLimited", {
    /** The server's own wait hint, from `retry-after-ms` / `retry-after`. */
    retryAfterMs: Schema.optionalKey(Schema.Number)
  }),
  Schema.TaggedStruct("Overloaded", { retryAfterMs: Schema.optionalKey(Schema.Number) }),
  Schema.TaggedStruct("ServerError", { status: Schema.Number, retryAfterMs: Schema.optionalKey(Schema.Number) }),
  Schema.TaggedStruct("StreamCut", {
    /**
     * No connection was made at all: the server refused it or the host name does not resolve. Retried only a few
     * times (a local server that is still starting), not for minutes: a wrong base URL does not heal by waiting.
     */
    unreachable: Schema.optionalKey(Schema.Boolean)
  }),
  Schema.TaggedStruct("ContextOverflow", {}),
  /** The account has no quota or credit left (OpenAI's `insufficient_quota`): billing, not a rate limit to wait out. */
  Schema.TaggedStruct("QuotaExceeded", {}),
  Schema.TaggedStruct("Auth", {}),
  Schema.TaggedStruct("InvalidRequest", { status: Schema.optionalKey(Schema.Number) }),
  Schema.TaggedStruct("Aborted", {}),
  /** The provider's SDK package is not installed next to `@lathe/core` (`package`, e.g. `@ai-sdk/anthropic`). */
  Schema.TaggedStruct("PackageMissing", { package: Schema.String })
])
export type ProviderErrorReason = typeof ProviderErrorReason.Type

/** A model reference, split: `anthropic/claude-sonnet-4-5` → `{ providerID: "anthropic", modelID: "claude-sonnet-4-5" }`. */
export const ModelRef = Schema.Struct({ providerID: Schema.String, modelID: Schema.String })
export type ModelRef = typeof ModelRef.Type

/** Where a session stands after an undo: the message (and optionally part) from which history is hidden. */
export const SessionRevert = Schema.Struct({
  messageID: Schema.String,
  partID: Schema.optionalKey(Schema.String),
  /** The work tree's hash before the undo, so redo can restore it. */
  snapshot: Schema.optionalKey(Schema.String)
})
export type SessionRevert = typeof SessionRevert.Type

/** A conversation. Child sessions (a subagent's work) have a `parentID`. */
export const Session = Schema.Struct({
  id: Schema.String,
  projectID: Schema.String,
  /** The working directory of the session (absolute). */
  directory: Schema.String,
  /**
   * The work tree the session ran in: the real path of its project root (see `Paths.root`). Clones and worktrees of
   * one repository share `projectID` but not `tree`; undo and redo only ever write into this tree. Absent on
   * sessions stored before trees were recorded: their tree is the one holding `directory` (see `sessionTree`).
   */
  tree: Schema.optionalKey(Schema.String),
  parentID: Schema.optionalKey(Schema.String),
  title: Schema.String,
  /**
   * What the session did so far, in a few sentences: written by the hidden `summary` agent at the end of each turn
   * when config `summary.enabled` is set (off by default: it costs a request per turn).
   */
  summary: Schema.optionalKey(Schema.String),
  /** The agent the session last ran with. */
  agent: Schema.optionalKey(Schema.String),
  time: Schema.Struct({
    created: Schema.Number,
    updated: Schema.Number,
    /** Set while history is being summarised. */
    compacting: Schema.optionalKey(Schema.Number)
  }),
  revert: Schema.optionalKey(SessionRevert),
  /**
   * Where the session's work tree comes from when a server cloned it for the session (`POST /sessions` with a
   * `repo`): the runner holding the session works in its own clone, rebuilt from the recorded changes.
   */
  workspace: Schema.optionalKey(Schema.Struct({ repo: Schema.String, ref: Schema.optionalKey(Schema.String) }))
})
export type Session = typeof Session.Type

/**
 * Why an assistant message failed, as recorded on it. Discriminated on `name`; `message` is written for the
 * person reading the session.
 */
export const MessageError = Schema.Union([
  Schema.Struct({
    name: Schema.Literal("ProviderError"),
    message: Schema.String,
    providerID: Schema.String,
    modelID: Schema.String,
    reason: ProviderErrorReason
  }),
  Schema.Struct({ name: Schema.Literal("ProviderNotConfigured"), message: Schema.String }),
  Schema.Struct({ name: Schema.Literal("ModelNotFound"), message: Schema.String }),
  Schema.Struct({ name: Schema.Literal("Aborted"), message: Schema.String }),
  Schema.Struct({
    name: Schema.Literal("DoomLoopDetected"),
    message: Schema.String,
    tool: Schema.String,
    count: Schema.Number,
    /** The doom-loop threshold in force (absent in sessions stored before it was recorded). */
    threshold: Schema.optionalKey(Schema.Number),
    /** The repeated calls, oldest first: tool and canonical JSON input. */
    calls: Schema.optionalKey(Schema.Array(Schema.Struct({ tool: Schema.String, input: Schema.String }))),
    /** What the person can do next. */
    suggestion: Schema.optionalKey(Schema.String)
  }),
  Schema.Struct({ name: Schema.Literal("PermissionRejected"), message: Schema.String }),
  Schema.Struct({ name: Schema.Literal("StepLimit"), message: Schema.String, steps: Schema.Number }),
  /** The turn's cost budget (`--max-cost`, config `budget`) could not cover its next model call; USD amounts. */
  Schema.Struct({
    name: Schema.Literal("BudgetExhausted"),
    message: Schema.String,
    spent: Schema.Number,
    limit: Schema.Number
  }),
  /** The final answer did not validate against the run's `--output-schema`, after it was sent back to the model. */
  Schema.Struct({
    name: Schema.Literal("OutputSchemaMismatch"),
    message: Schema.String,
    errors: Schema.Array(Schema.String)
  }),
  Schema.Struct({ name: Schema.Literal("Unknown"), message: Schema.String })
])
export type MessageError = typeof MessageError.Type

/** A failure that ends a turn, as the loop meets it: any tagged error with a message written for the person. */
export interface TurnFailure {
  readonly _tag: string
  readonly message: string
}

/** A provider's failure, as `ProviderError` carries it. */
interface ProviderFailure extends TurnFailure {
  readonly _tag: "ProviderError"
  readonly providerID: string
  readonly modelID: string
  readonly reason: ProviderErrorReason
}

/** A stopped doom loop, as `DoomLoopDetected` carries it. */
interface DoomLoopFailure extends TurnFailure {
  readonly _tag: "DoomLoopDetected"
  readonly tool: string
  readonly count: number
  readonly threshold: number
  readonly calls: ReadonlyArray<{ readonly tool: string; readonly input: string }>
  readonly suggestion: string
}

const isProviderFailure = (failure: TurnFailure): failure is ProviderFailure => failure._tag === "ProviderError"
const isDoomLoopFailure = (failure: TurnFailure): failure is DoomLoopFailure => failure._tag === "DoomLoopDetected"

/**
 * The error recorded on a message for a failure of its turn: a provider's and a doom loop's keep their details, a
 * missing provider or model keeps its name, anything else is `Unknown` with its message.
 */
export const messageErrorFromFailure = (failure: TurnFailure): MessageError => {
  if (isProviderFailure(failure))
    return {
      name: "ProviderError",
      message: failure.message,
      providerID: failure.providerID,
      modelID: failure.modelID,
      reason: failure.reason
    }
  if (isDoomLoopFailure(failure))
    return {
      name: "DoomLoopDetected",
      message: failure.message,
      tool: failure.tool,
      count: failure.count,
      threshold: failure.threshold,
      calls: failure.calls,
      suggestion: failure.suggestion
    }
  if (failure._tag === "ProviderNotConfigured" || failure._tag === "ModelNotFound")
    return { name: failure._tag, message: failure.message }
  return { name: "Unknown", message: failure.message }
}

/** What the person sent. Its content is in its parts (text, files, agent mentions). */
export const UserMessage = Schema.Struct({
  id: Schema.String,
  sessionID: Schema.String,
  role: Schema.Literal("user"),
  time: Schema.Struct({ created: Schema.Number }),
  /** The agent asked to answer. */
  agent: Schema.String,
  model: ModelRef
})
export type UserMessage = typeof UserMessage.Type

/** The model's answer to a user message: one per turn (several steps' parts), or one per step when split. */
export const AssistantMessage = Schema.Struct({
  id: Schema.String,
  sessionID: Schema.String,
  role: Schema.Literal("assistant"),
  /** The user message this answers. */
  parentID: Schema.String,
  agent: Schema.String,
  model: ModelRef,
  path: Schema.Struct({ cwd: Schema.String, root: Schema.String }),
  time: Schema.Struct({ created: Schema.Number, completed: Schema.optionalKey(Schema.Number) }),
  /** Summed over the message's steps. */
  tokens: Tokens,
  /** USD, summed over the message's steps. */
  cost: Schema.Number,
  /** The last step's finish reason (`stop`, `tool-calls`, `length`, …). */
  finish: Schema.optionalKey(Schema.String),
  error: Schema.optionalKey(MessageError),
  /** This message is a compaction summary of the history before it. */
  summary: Schema.optionalKey(Schema.Boolean),
  /** The turn's final answer as the JSON value that validated against its output schema (`--output-schema`). */
  structured: Schema.optionalKey(Schema.Unknown)
})
export type AssistantMessage = typeof AssistantMessage.Type

/** Any message. Discriminated on `role`. */
export const Message = Schema.Union([UserMessage, AssistantMessage])
export type Message = typeof Message.Type

/** A message with its parts in order, as the store returns it. */
export const MessageWithParts = Schema.Struct({ info: Message, parts: Schema.Array(Part) })
export type MessageWithParts = typeof MessageWithParts.Type
