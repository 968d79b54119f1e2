/**
 * The `AgentSession` entity: one per session, held by exactly one runner at a time (Effect Cluster shards it and
 * moves it when a runner goes). Shared by runners (which implement it) and servers (which send to it).
 */
import { Schema } from "effect"
import { ClusterSchema, Entity } from "effect/cluster"
import { Rpc } from "effect/rpc"

/** How a `Run` ended. */
export const RunOutcome = Schema.Struct({
  /** `done`: every stored prompt is answered; `aborted`: someone aborted; `failed`: see `message`. */
  status: Schema.Literals(["done", "aborted", "failed", "queued"]),
  message: Schema.optionalKey(Schema.String)
})
export type RunOutcome = typeof RunOutcome.Type

/**
 * Answer the stored user message `messageID` (and any prompt stored after it). Persisted: it survives the runner
 * that holds the session, and the next owner runs it again from the stored history (the session's completed steps
 * are kept; a step that was streaming is retried). The primary key makes a second send for the same message a no-op.
 */
export const Run = Rpc.make("Run", {
  payload: { messageID: Schema.String },
  success: RunOutcome,
  primaryKey: ({ messageID }) => messageID
})
  .annotate(ClusterSchema.Persisted, true)
  // On SIGTERM the turn stops at once and the request resumes on the runner that takes the shard over.
  .annotate(ClusterSchema.InterruptOnTermination, true)

/** Aborts the running turn, if any; whether one was running. Not persisted: an abort is about now. */
export const Abort = Rpc.make("Abort", { success: Schema.Boolean })

/** A person's answer to a pending permission ask or question of the session, routed to the runner holding it. */
export const Respond = Rpc.make("Respond", {
  payload: {
    kind: Schema.Literals(["permission", "question"]),
    requestID: Schema.String,
    /** Permission: `once` | `always` | `reject`. */
    reply: Schema.optionalKey(Schema.Literals(["once", "always", "reject"])),
    /** Permission rejections may carry a message for the model. */
    message: Schema.optionalKey(Schema.String),
    /** Question: the chosen labels per question. */
    answers: Schema.optionalKey(Schema.Array(Schema.Array(Schema.String))),
    /** Question: the person dismissed it, with this reason. */
    dismissed: Schema.optionalKey(Schema.String)
  },
  success: Schema.Boolean
})

/**
 * Undo the last turn (`undo`; `step` only the last changing step, `turn` back to before that turn, `force` over
 * files changed since) or bring back what undo hid (`redo`), in the work tree the runner holds.
 */
export const Revert = Rpc.make("Revert", {
  payload: {
    verb: Schema.Literals(["undo", "redo"]),
    step: Schema.optionalKey(Schema.Boolean),
    turn: Schema.optionalKey(Schema.Number),
    force: Schema.optionalKey(Schema.Boolean)
  },
  success: Schema.Struct({ reverted: Schema.Boolean, message: Schema.String })
})

/** Whether a turn runs in the session now. */
export const Status = Rpc.make("Status", { success: Schema.Struct({ running: Schema.Boolean, runner: Schema.String }) })

/** One session, as a cluster entity. */
export const AgentSession = Entity.make("AgentSession", [Run, Abort, Respond, Revert, Status])
