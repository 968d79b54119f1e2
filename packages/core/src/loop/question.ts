import { type QuestionAnswers, QuestionDismissed } from "@lathe/plugin"
import type { QuestionItem } from "@lathe/plugin/schema"
import { Context, Deferred, Effect, Layer } from "effect"
import { Bus } from "../contracts/bus.js"

/** Questions a tool asks the person. */
export interface QuestionAsk {
  readonly sessionID: string
  readonly callID?: string
  readonly questions: ReadonlyArray<QuestionItem>
  /** Aborting dismisses the questions; nothing waits forever. */
  readonly signal?: AbortSignal
}

/** Questions waiting for the person, as a UI lists them. */
export interface PendingQuestion {
  readonly id: string
  readonly sessionID: string
  readonly callID?: string
  readonly questions: ReadonlyArray<QuestionItem>
}

/**
 * Lets a tool ask the person questions mid-turn (the `question` tool). The host (CLI, server) sees
 * `question.asked` on the Bus and answers with `reply` or `dismiss`.
 */
export class Question extends Context.Service<
  Question,
  {
    /** Publishes the questions and waits for the answers. */
    readonly ask: (ask: QuestionAsk) => Effect.Effect<QuestionAnswers, QuestionDismissed>
    /** Answers pending questions by id (one list per question). Unknown ids are ignored. */
    readonly reply: (id: string, answers: QuestionAnswers) => Effect.Effect<void>
    /** Dismisses pending questions by id, with a reason the model reads. */
    readonly dismiss: (id: string, reason?: string) => Effect.Effect<void>
    readonly pending: Effect.Effect<ReadonlyArray<PendingQuestion>>
  }
>()("@lathe/core/Question") {
  /** Questions over the Bus (requires Bus). */
  static readonly layer = Layer.effect(
    Question,
    Effect.gen(function* () {
      const bus = yield* Bus
      const waiting = new Map<
        string,
        { info: PendingQuestion; deferred: Deferred.Deferred<QuestionAnswers, QuestionDismissed> }
      >()

      const settle = (id: string, outcome: { answers: QuestionAnswers } | { dismissed: string }) =>
        Effect.gen(function* () {
          const entry = waiting.get(id)
          if (!entry) return
          waiting.delete(id)
          yield* bus.publish({
            type: "question.replied",
            id,
            sessionID: entry.info.sessionID,
            ...("answers" in outcome
              ? { answers: outcome.answers.map((a) => [...a]) }
              : { dismissed: outcome.dismissed })
          })
          if ("answers" in outcome) yield* Deferred.succeed(entry.deferred, outcome.answers)
          else yield* Deferred.fail(entry.deferred, new QuestionDismissed({ message: outcome.dismissed }))
        })

      const ask = Effect.fn("Question.ask")(function* (request: QuestionAsk) {
        const id = `que_${process.getBuiltinModule("node:crypto").randomBytes(8).toString("hex")}`
        const deferred = yield* Deferred.make<QuestionAnswers, QuestionDismissed>()
        const info: PendingQuestion = {
          id,
          sessionID: request.sessionID,
          questions: request.questions,
          ...(request.callID ? { callID: request.callID } : {})
        }
        waiting.set(id, { info, deferred })
        const onAbort = () =>
          Effect.runFork(settle(id, { dismissed: "The questions were dismissed because the turn was aborted." }))
        request.signal?.addEventListener("abort", onAbort, { once: true })
        yield* bus.publish({ type: "question.asked", ...info, questions: [...request.questions] })
        if (request.signal?.aborted) onAbort()
        return yield* Deferred.await(deferred).pipe(
          Effect.ensuring(Effect.sync(() => request.signal?.removeEventListener("abort", onAbort)))
        )
      })

      return Question.of({
        ask,
        reply: (id, answers) => settle(id, { answers }),
        dismiss: (id, reason) =>
          settle(id, { dismissed: reason ?? "The user dismissed the questions without answering." }),
        pending: Effect.sync(() => [...waiting.values()].map((entry) => entry.info))
      })
    })
  )

  /** Answers every question at once with `answer` (tests). */
  static readonly layerTest = (answer: (questions: ReadonlyArray<QuestionItem>) => QuestionAnswers) =>
    Layer.succeed(
      Question,
      Question.of({
        ask: (request) => Effect.succeed(answer(request.questions)),
        reply: () => Effect.void,
        dismiss: () => Effect.void,
        pending: Effect.succeed([])
      })
    )
}
