import type { AgentInfo } from "@lathe/plugin"
import { Context, Effect, Layer, Stream } from "effect"
import type { ModelInfo } from "../catalog/model-info.js"
import { LLM, type LLMRequest } from "../llm/llm.js"
import { SessionStore } from "../store/session-store.js"
import { SessionWriter } from "../store/session-writer.js"
import { type BudgetLedger, budgetedCall, type CallMeter } from "./budget.js"
import { titlePrompt } from "./prompts.js"

/** Most characters of the first prompt the title model reads. */
const TITLE_INPUT = 4_000
/** Most output tokens a title call holds under a cost budget. */
const TITLE_OUTPUT = 2_048
/** Most characters of a title. */
const TITLE_LENGTH = 80

/** The first line of a model's answer as a title: thinking, surrounding quotes and blank space removed. */
export const cleanTitle = (answer: string): string | undefined => {
  const line = answer
    .replace(/<think>[\s\S]*?<\/think>/g, "")
    .trim()
    .split("\n")[0]
    ?.replace(/^["']|["']$/g, "")
  return line ? line.slice(0, TITLE_LENGTH) : undefined
}

/**
 * Names a session after its first prompt, with the hidden `title` agent's model call. Best effort: a failed call, an
 * empty answer or a deleted session leaves the session's title as it is, and `generate` never fails.
 */
export class Title extends Context.Service<
  Title,
  {
    /**
     * Asks `model` (as `agent`) for a title for `text` and stores it on the session; under the turn's `budget`, only
     * when the call fits in it now (else the session keeps its title).
     */
    readonly generate: (
      sessionID: string,
      text: string,
      agent: AgentInfo,
      model: ModelInfo,
      budget?: BudgetLedger
    ) => Effect.Effect<void>
  }
>()("@lathe/core/Title") {
  /** Titles from the model, stored through the writer. */
  static readonly layer = Layer.effect(
    Title,
    Effect.gen(function* () {
      const llm = yield* LLM
      const store = yield* SessionStore
      const writer = yield* SessionWriter

      /** The model's whole answer, as text; the call is aborted when the fiber is interrupted. */
      const answer = (request: LLMRequest, controller: AbortController, meter?: CallMeter) =>
        Effect.suspend(() => {
          let text = ""
          const stream = meter ? meter.watch(llm.stream(request)) : llm.stream(request)
          return stream.pipe(
            Stream.runForEach((event) =>
              Effect.sync(() => {
                if (event.type === "text-delta") text += event.text
              })
            ),
            Effect.onInterrupt(() => Effect.sync(() => controller.abort())),
            Effect.map(() => text)
          )
        })

      /** Asks for a title; under a budget only when it fits now (a title is not worth waiting for, nor stopping on). */
      const ask = (sessionID: string, text: string, agent: AgentInfo, model: ModelInfo, budget?: BudgetLedger) =>
        Effect.suspend(() => {
          const controller = new AbortController()
          const request: LLMRequest = {
            sessionID,
            model,
            system: [titlePrompt],
            messages: [{ role: "user", content: text.slice(0, TITLE_INPUT) }],
            tools: {},
            abort: controller.signal,
            ...(agent.temperature !== undefined ? { temperature: agent.temperature } : {}),
            // A title is one line: under a budget it holds no more than this (reasoning models think first).
            ...(budget ? { maxOutputTokens: Math.min(TITLE_OUTPUT, model.limit.output || TITLE_OUTPUT) } : {})
          }
          if (budget === undefined) return answer(request, controller)
          const call = budgetedCall(budget, request, (capped, meter) => answer(capped, controller, meter), {
            optional: true
          })
          return Effect.map(call, (said) => (typeof said === "string" ? said : ""))
        })

      const generate = Effect.fn("Title.generate")(
        function* (sessionID: string, text: string, agent: AgentInfo, model: ModelInfo, budget?: BudgetLedger) {
          const title = cleanTitle(yield* ask(sessionID, text, agent, model, budget))
          if (title === undefined) return
          const session = yield* store.getSession(sessionID)
          yield* writer.updateSession({ ...session, title })
        },
        (effect) => Effect.ignore(effect)
      )

      return Title.of({ generate })
    })
  )
}
