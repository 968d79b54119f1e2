import type { AgentInfo } from "@lathe/plugin"
import { Context, Effect, Layer, Stream } from "effect"
import type { ModelInfo } from "../catalog/model-info.js"
import { LLM } from "../llm/llm.js"
import { SessionStore } from "../store/session-store.js"
import { SessionWriter } from "../store/session-writer.js"
import { titlePrompt } from "./prompts.js"

/** Most characters of the first prompt the title model reads. */
const TITLE_INPUT = 4_000
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
    /** Asks `model` (as `agent`) for a title for `text` and stores it on the session. */
    readonly generate: (sessionID: string, text: string, agent: AgentInfo, model: ModelInfo) => Effect.Effect<void>
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
      const ask = (sessionID: string, text: string, agent: AgentInfo, model: ModelInfo) =>
        Effect.suspend(() => {
          const controller = new AbortController()
          let answer = ""
          return llm
            .stream({
              sessionID,
              model,
              system: [titlePrompt],
              messages: [{ role: "user", content: text.slice(0, TITLE_INPUT) }],
              tools: {},
              abort: controller.signal,
              ...(agent.temperature !== undefined ? { temperature: agent.temperature } : {})
            })
            .pipe(
              Stream.runForEach((event) =>
                Effect.sync(() => {
                  if (event.type === "text-delta") answer += event.text
                })
              ),
              Effect.onInterrupt(() => Effect.sync(() => controller.abort())),
              Effect.map(() => answer)
            )
        })

      const generate = Effect.fn("Title.generate")(
        function* (sessionID: string, text: string, agent: AgentInfo, model: ModelInfo) {
          const title = cleanTitle(yield* ask(sessionID, text, agent, model))
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
