import type { AgentInfo } from "@lathe/plugin"
import type { Session } from "@lathe/plugin/schema"
import { Effect, Stream } from "effect"
import type { ModelInfo } from "../catalog/model-info.js"
import type { Config } from "../config/config.js"
import type { LLM, LLMRequest } from "../llm/llm.js"
import { toModelMessages } from "../llm/model-messages.js"
import type { SessionStore } from "../store/session-store.js"
import type { SessionWriter } from "../store/session-writer.js"
import { type BudgetLedger, budgetedCall, type CallMeter } from "./budget.js"

/** Most characters of a stored session summary. */
const SUMMARY_LENGTH = 2_000

/** What the summary needs of the loop's services. */
export interface SummaryServices {
  readonly llm: LLM["Service"]
  readonly store: SessionStore["Service"]
  readonly writer: SessionWriter["Service"]
  readonly config: Config["Service"]
}

/** Whether a finished turn of `session` gets a running summary: config `summary.enabled`, top-level sessions only. */
export const summaryWanted = (enabled: boolean | undefined, session: Session, abort: AbortSignal): boolean =>
  enabled === true && session.parentID === undefined && !abort.aborted

/** The end of a turn: the session's running summary when config enables it (see {@link writeSessionSummary}). */
export const sessionSummary = (
  services: SummaryServices,
  session: Session,
  agent: AgentInfo | undefined,
  model: ModelInfo,
  abort: AbortSignal,
  budget?: BudgetLedger
): Effect.Effect<void> =>
  summaryWanted(services.config.info.summary?.enabled, session, abort)
    ? writeSessionSummary(services, session.id, agent, model, abort, budget)
    : Effect.void

/** The model's answer as a summary: thinking and surrounding blank space removed, cut to a bounded length. */
export const cleanSummary = (answer: string): string | undefined => {
  const text = answer.replace(/<think>[\s\S]*?<\/think>/g, "").trim()
  return text ? text.slice(0, SUMMARY_LENGTH) : undefined
}

/**
 * The session's running summary, written at the end of a turn by the hidden `summary` agent (config
 * `summary.enabled`; off by default, as it costs a request per turn): the whole visible history, then the agent's
 * prompt, with no tools; the answer is stored as the session's `summary`. Best effort: a failed or empty answer
 * leaves the summary as it was, and this never fails the turn. Under a cost budget it runs only when it fits now.
 */
export const writeSessionSummary = (
  services: SummaryServices,
  sessionID: string,
  agent: AgentInfo | undefined,
  model: ModelInfo,
  abort: AbortSignal,
  budget?: BudgetLedger
): Effect.Effect<void> =>
  Effect.gen(function* () {
    if (agent === undefined || !agent.prompt) return
    const { llm, store, writer } = services
    const history = toModelMessages(yield* store.messages(sessionID), { images: false })
    if (history.length === 0) return
    const request: LLMRequest = {
      sessionID,
      model,
      system: [],
      messages: [...history, { role: "user", content: agent.prompt }],
      tools: {},
      abort,
      ...(agent.temperature !== undefined ? { temperature: agent.temperature } : {})
    }
    const answer = (call: LLMRequest, meter?: CallMeter) => {
      let text = ""
      const stream = meter ? meter.watch(llm.stream(call)) : llm.stream(call)
      return stream.pipe(
        Stream.runForEach((event) =>
          Effect.sync(() => {
            if (event.type === "text-delta") text += event.text
          })
        ),
        Effect.map(() => text)
      )
    }
    const said = budget
      ? yield* Effect.map(budgetedCall(budget, request, answer, { optional: true }), (out) =>
          typeof out === "string" ? out : ""
        )
      : yield* answer(request)
    const summary = cleanSummary(said)
    if (summary === undefined) return
    const session = yield* store.getSession(sessionID)
    yield* writer.updateSession({ ...session, summary })
  }).pipe(Effect.catchCause((cause) => Effect.logWarning("session summary not written", cause)))
