import type { Ruleset } from "@lathe/plugin"
import type { PromptPart } from "@lathe/plugin/schema"
import { Schema } from "effect"
import type { ModelNotFound, ProviderError, ProviderNotConfigured } from "../llm/provider-error.js"
import type { Reasoning } from "../provider/reasoning.js"
import type { MessageNotFound, SessionNotFound, StoreError } from "../store/session-store.js"
import type { BudgetLedger, BudgetUnpriced } from "./budget.js"
import type { DoomLoopDetected } from "./doom-loop.js"
import type { OutputSchema } from "./structured-output.js"

/** What a turn takes (`PromptInput`, `CompactRequest`) and how it can fail: the types `SessionPrompt` speaks. */

/** One prompt to a session. */
export interface PromptInput {
  readonly sessionID: string
  readonly parts: ReadonlyArray<PromptPart>
  /**
   * The user message's ID, for a caller that must know it before the turn starts (the server answers a prompt with
   * it). When a user message with this ID is already stored in the session (see `append`), the turn answers that
   * message and `parts` are not stored again. A new ID must come from `ascendingId("message")` and be newer than
   * every message of the session, or the history would be out of order.
   */
  readonly messageID?: string
  /**
   * The agent to answer. Default: the session's, while it can take a prompt; else the configured default, else
   * `build` (with a `notice` when the session's agent had to be passed over).
   */
  readonly agent?: string
  /**
   * `provider/model` for this turn. Default: the agent's own; for a subagent without one, its caller's
   * (`inheritedModel`, else the session's own agent's, which a mention stands in for); else the configured model.
   */
  readonly model?: string
  /** `provider/model` of the turn that started this one (a subagent's caller), for an agent with no model of its own. */
  readonly inheritedModel?: string
  /**
   * How hard the model reasons on this turn (`lathe run --variant`, `/variant`), over the agent's and the model
   * entry's `reasoning`. Sent only to reasoning models.
   */
  readonly variant?: Reasoning
  /** Aborting ends the turn cleanly and records the aborted state. */
  readonly abort?: AbortSignal
  /** Name the session with the hidden `title` agent after its first message (default true). */
  readonly title?: boolean
  /**
   * Let an agent of mode `subagent` take the prompt (the task tool, or the person naming it with `@name`). It runs
   * for this prompt only: the session keeps the agent it has.
   */
  readonly allowSubagents?: boolean
  /** The subagent the person addressed (`@name …`): stored as an `agent` part of the prompt. */
  readonly mention?: string
  /** Rules appended after the agent's and the config's (the task tool denies recursion this way). */
  readonly extraRules?: Ruleset
  /** Rulesets of the sessions above (a subagent's parents): every ask must pass them too. */
  readonly constraints?: ReadonlyArray<Ruleset>
  /** For a subagent: the tool ids its caller was offered; the turn offers none outside them (see `offeredTools`). */
  readonly callerTools?: ReadonlyArray<string>
  /** This turn's cost cap in USD (`lathe run --max-cost`), over config `budget.max_cost`; see `Budget`. */
  readonly maxCost?: number
  /** For a subagent: its caller's budget, which it draws on (set by the loop; a subagent never opens its own). */
  readonly budget?: BudgetLedger
  /** The cap on this turn's steps (`lathe run --max-steps`), over the agent's and config `max_steps`; 0 = none. */
  readonly maxSteps?: number
  /** The final answer must be a JSON value valid against this schema (`lathe run --output-schema`). */
  readonly outputSchema?: OutputSchema
}

/** No agent of that name exists (or it is hidden, or a subagent only). */
export class AgentNotFound extends Schema.TaggedError<AgentNotFound>()("AgentNotFound", {
  agent: Schema.String,
  message: Schema.String
}) {}

/** A compaction the person asked for. */
export interface CompactRequest {
  readonly sessionID: string
  /** `provider/model` to summarise with (default: the session agent's, else the configured model). */
  readonly model?: string
  readonly abort?: AbortSignal
}

/** The session is already running a turn. */
export class SessionBusy extends Schema.TaggedError<SessionBusy>()("SessionBusy", {
  sessionID: Schema.String,
  message: Schema.String
}) {}

/** Every way a requested compaction can fail. */
export type CompactError =
  | SessionNotFound
  | SessionBusy
  | StoreError
  | ProviderError
  | ProviderNotConfigured
  | ModelNotFound
  | DoomLoopDetected

/** Every way a turn can fail. */
export type PromptError =
  | SessionNotFound
  | MessageNotFound
  | SessionBusy
  | StoreError
  | ProviderError
  | ProviderNotConfigured
  | ModelNotFound
  | AgentNotFound
  | DoomLoopDetected
  | BudgetUnpriced
