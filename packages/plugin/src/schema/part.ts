import { Schema } from "effect"

/**
 * The parts of a message. A message is an ordered list of parts; every part carries the ids of its session and
 * message, and its own id (ids ascend in creation order, so sorting by id is sorting by time).
 */
const base = {
  id: Schema.String,
  sessionID: Schema.String,
  messageID: Schema.String
}

/** Epoch milliseconds. */
const Millis = Schema.Number
/** Free-form details for UIs and hooks. */
const Metadata = Schema.Record(Schema.String, Schema.Unknown)

/** Tokens of one step (or the sum of a turn's steps). `input` excludes cache reads and writes. */
export const Tokens = Schema.Struct({
  input: Schema.Number,
  output: Schema.Number,
  reasoning: Schema.Number,
  cache: Schema.Struct({ read: Schema.Number, write: Schema.Number })
})
export type Tokens = typeof Tokens.Type

/** Zero tokens: the start of every sum. */
export const emptyTokens = (): Tokens => ({ input: 0, output: 0, reasoning: 0, cache: { read: 0, write: 0 } })

/** A file or image attached to a prompt or a tool result. `url` may be a `data:` or `file:` URL. */
export const Attachment = Schema.Struct({
  mime: Schema.String,
  url: Schema.String,
  filename: Schema.optionalKey(Schema.String)
})
export type Attachment = typeof Attachment.Type

/** The model is still streaming the call's input. `raw` is the JSON text so far. */
export const ToolStatePending = Schema.Struct({
  status: Schema.Literal("pending"),
  input: Metadata,
  raw: Schema.String
})
/**
 * What allowed (or refused) a tool call's permission ask, recorded where the ask was decided: a rule (`rule` is it as
 * written, `source` where it came from: a config file, an agent, remembered approvals), the person's reply (`reply`),
 * a flag of the run (`--yes`, `--allow`), a `permission.ask` hook, or a built-in default. A call that asked several
 * times keeps the weightiest decision (a person over a flag, a hook, a rule, a default).
 */
export const ToolPermission = Schema.Struct({
  by: Schema.Literals(["rule", "person", "flag", "hook", "default"]),
  rule: Schema.optionalKey(Schema.String),
  source: Schema.optionalKey(Schema.String),
  reply: Schema.optionalKey(Schema.Literals(["once", "always"]))
})
export type ToolPermission = typeof ToolPermission.Type

/** The call is executing. `title` and `metadata` may change while it runs (live progress). */
export const ToolStateRunning = Schema.Struct({
  status: Schema.Literal("running"),
  input: Metadata,
  title: Schema.optionalKey(Schema.String),
  metadata: Schema.optionalKey(Metadata),
  /** What allowed the call's permission ask, once it was decided. */
  permission: Schema.optionalKey(ToolPermission),
  time: Schema.Struct({ start: Millis })
})
/** The call finished; `output` is what the model reads. */
export const ToolStateCompleted = Schema.Struct({
  status: Schema.Literal("completed"),
  input: Metadata,
  output: Schema.String,
  title: Schema.String,
  metadata: Metadata,
  attachments: Schema.optionalKey(Schema.Array(Attachment)),
  /** What allowed the call's permission ask, when it asked. */
  permission: Schema.optionalKey(ToolPermission),
  time: Schema.Struct({
    start: Millis,
    end: Millis,
    /** Set when the output was pruned from history to save context; the model then sees a stub. */
    compacted: Schema.optionalKey(Millis)
  })
})
/** The call failed: invalid input, a throw, a permission denial or rejection, or an abort (`error: "aborted"`). */
export const ToolStateError = Schema.Struct({
  status: Schema.Literal("error"),
  input: Metadata,
  error: Schema.String,
  metadata: Schema.optionalKey(Metadata),
  /** What decided the call's permission ask, when it asked (a deny or a rejection among them). */
  permission: Schema.optionalKey(ToolPermission),
  time: Schema.Struct({ start: Millis, end: Millis })
})

/** The state machine of a tool call: `pending → running → completed | error` (or `pending → error`). */
export const ToolState = Schema.Union([ToolStatePending, ToolStateRunning, ToolStateCompleted, ToolStateError])
export type ToolState = typeof ToolState.Type
export type ToolStatePending = typeof ToolStatePending.Type
export type ToolStateRunning = typeof ToolStateRunning.Type
export type ToolStateCompleted = typeof ToolStateCompleted.Type
export type ToolStateError = typeof ToolStateError.Type

/** Text from the person or the model. `synthetic` text was added by Lathe (e.g. a file's contents for a mention). */
export const TextPart = Schema.Struct({
  ...base,
  type: Schema.Literal("text"),
  text: Schema.String,
  synthetic: Schema.optionalKey(Schema.Boolean),
  time: Schema.optionalKey(Schema.Struct({ start: Millis, end: Schema.optionalKey(Millis) }))
})
export type TextPart = typeof TextPart.Type

/** The model's visible reasoning, with when it started and ended. */
export const ReasoningPart = Schema.Struct({
  ...base,
  type: Schema.Literal("reasoning"),
  text: Schema.String,
  /** Provider data that must go back with the reasoning on the next call (e.g. a signature). */
  metadata: Schema.optionalKey(Metadata),
  time: Schema.Struct({ start: Millis, end: Schema.optionalKey(Millis) })
})
export type ReasoningPart = typeof ReasoningPart.Type

/** One tool call and its state. `callID` is the provider's id for the call. */
export const ToolPart = Schema.Struct({
  ...base,
  type: Schema.Literal("tool"),
  callID: Schema.String,
  tool: Schema.String,
  state: ToolState,
  /**
   * Provider data that must go back with the call on the next request, by provider (e.g. Gemini's
   * `{ google: { thoughtSignature } }`). Not the tool's own details: those are `state.metadata`.
   */
  providerMetadata: Schema.optionalKey(Metadata)
})
export type ToolPart = typeof ToolPart.Type

/** A model call began; `snapshot` is the work tree's hash when one was taken before it. */
export const StepStartPart = Schema.Struct({
  ...base,
  type: Schema.Literal("step-start"),
  snapshot: Schema.optionalKey(Schema.String)
})
export type StepStartPart = typeof StepStartPart.Type

/** A model call ended: why, what it used and what it cost (USD). */
export const StepFinishPart = Schema.Struct({
  ...base,
  type: Schema.Literal("step-finish"),
  reason: Schema.String,
  /** The work tree's hash after the step, when the step took a snapshot (it ran a tool that may change files). */
  snapshot: Schema.optionalKey(Schema.String),
  tokens: Tokens,
  cost: Schema.Number
})
export type StepFinishPart = typeof StepFinishPart.Type

/** One file's lines added and removed in a step. */
export const StepFileChange = Schema.Struct({
  file: Schema.String,
  additions: Schema.Number,
  deletions: Schema.Number
})
export type StepFileChange = typeof StepFileChange.Type

/** What a step changed: its files with their line counts, and the totals (binary files count zero lines). */
export const StepSummary = Schema.Struct({
  additions: Schema.Number,
  deletions: Schema.Number,
  files: Schema.Array(StepFileChange)
})
export type StepSummary = typeof StepSummary.Type

/** The files a step changed, measured from the snapshot `hash` taken before its first mutating tool. */
export const PatchPart = Schema.Struct({
  ...base,
  type: Schema.Literal("patch"),
  hash: Schema.String,
  files: Schema.Array(Schema.String),
  /** The step summary: lines added and removed per file (absent on parts stored before it existed). */
  summary: Schema.optionalKey(StepSummary)
})
export type PatchPart = typeof PatchPart.Type

/** A file or image in a message. */
export const FilePart = Schema.Struct({
  ...base,
  type: Schema.Literal("file"),
  mime: Schema.String,
  url: Schema.String,
  filename: Schema.optionalKey(Schema.String)
})
export type FilePart = typeof FilePart.Type

/** Work handed to a subagent (the task tool); `childSessionID` is the session it runs in. */
export const SubtaskPart = Schema.Struct({
  ...base,
  type: Schema.Literal("subtask"),
  agent: Schema.String,
  description: Schema.String,
  prompt: Schema.String,
  childSessionID: Schema.optionalKey(Schema.String),
  /** The task call (a tool part of the same message) that ran it. */
  callID: Schema.optionalKey(Schema.String),
  /** `running` while the child session works, then how it ended (absent on parts stored before it existed). */
  status: Schema.optionalKey(Schema.Literals(["running", "completed", "error"]))
})
export type SubtaskPart = typeof SubtaskPart.Type

/** Marks where history was summarised; `auto` when the context filled up rather than on request. */
export const CompactionPart = Schema.Struct({
  ...base,
  type: Schema.Literal("compaction"),
  auto: Schema.Boolean,
  /** The first message, older than this one, that the model still sees verbatim after the summary. */
  keepFrom: Schema.optionalKey(Schema.String)
})
export type CompactionPart = typeof CompactionPart.Type

/** A failed attempt of a step that was retried: which attempt, why, and when it failed. */
export const RetryPart = Schema.Struct({
  ...base,
  type: Schema.Literal("retry"),
  attempt: Schema.Number,
  message: Schema.String,
  time: Schema.Struct({ created: Millis })
})
export type RetryPart = typeof RetryPart.Type

/** An `@agent` mention in a prompt. */
export const AgentPart = Schema.Struct({
  ...base,
  type: Schema.Literal("agent"),
  name: Schema.String
})
export type AgentPart = typeof AgentPart.Type

/** Any part. Discriminated on `type`. */
export const Part = Schema.Union([
  TextPart,
  ReasoningPart,
  ToolPart,
  StepStartPart,
  StepFinishPart,
  PatchPart,
  FilePart,
  SubtaskPart,
  CompactionPart,
  RetryPart,
  AgentPart
])
export type Part = typeof Part.Type
/** The `type` of a part. */
export type PartType = Part["type"]
/** The part with a given `type`. */
export type PartOf<T extends PartType> = Extract<Part, { readonly type: T }>
