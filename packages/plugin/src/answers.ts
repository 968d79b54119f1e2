import { Schema } from "effect"
import type { Tokens } from "./schema/part.js"

/**
 * What a tool gets back from the host through its context: the person's answers to `ctx.question`, and what a
 * subagent did for `ctx.subagent`. The kit defines them; the host's loop produces them.
 */

/** The answers: for each question, the chosen option labels or the typed text. */
export type QuestionAnswers = ReadonlyArray<ReadonlyArray<string>>

/** One tool call of the child, for the caller's summary. */
export interface SubagentCall {
  readonly tool: string
  readonly title: string
  readonly status: "completed" | "error"
}

/** What a subagent did. */
export interface SubagentResult {
  readonly sessionID: string
  /** The text of the child's last answer. */
  readonly text: string
  readonly calls: ReadonlyArray<SubagentCall>
  /** Summed over the child's steps in this run. */
  readonly tokens: Tokens
  readonly cost: number
}

/** The questions were not answered: dismissed by the person, by a host that cannot ask, or by an abort. */
export class QuestionDismissed extends Schema.TaggedError<QuestionDismissed>()("QuestionDismissed", {
  message: Schema.String
}) {}
