import type { Tokens } from "../schema/part.js"

/**
 * What a tool gets back from the loop through its context: the person's answers to `ctx.question`, and what a
 * subagent did for `ctx.subagent`. They live here, below the plugin host, so `Tool` can name them without importing
 * the loop that produces them (`loop/question.ts`, `loop/subagents.ts`).
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
