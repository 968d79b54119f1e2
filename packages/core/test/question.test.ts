import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Stream } from "effect"
import { Bus } from "../src/contracts/bus.js"
import { Question } from "../src/loop/question.js"
import { testLayer } from "../src/testing/index.js"
import { tempRoot } from "./loop-helpers.js"

const questions = [{ question: "Which database?", options: [{ label: "SQLite" }, { label: "Postgres" }] }]

describe("Question", () => {
  it.live("publishes the questions, waits, and returns the reply; both events are on the bus", () =>
    Effect.gen(function* () {
      const bus = yield* Bus
      const question = yield* Question
      const events = yield* (yield* bus.subscribe).pipe(
        Stream.filter((e) => e.type.startsWith("question.")),
        Stream.take(2),
        Stream.runCollect,
        Effect.forkChild({ startImmediately: true })
      )
      const asking = yield* question
        .ask({ sessionID: "ses_1", callID: "c1", questions })
        .pipe(Effect.forkChild({ startImmediately: true }))
      yield* Effect.sleep("10 millis")
      const [pending] = yield* question.pending
      assert.deepStrictEqual(pending?.questions, questions)
      yield* question.reply(pending?.id ?? "", [["Postgres"]])
      assert.deepStrictEqual(yield* Fiber.join(asking), [["Postgres"]])
      const [asked, replied] = yield* Fiber.join(events)
      assert.strictEqual(asked?.type, "question.asked")
      assert.deepStrictEqual(replied?.type === "question.replied" ? replied.answers : [], [["Postgres"]])
      assert.deepStrictEqual(yield* question.pending, [])
    }).pipe(Effect.scoped, Effect.provide(testLayer({ root: tempRoot() })))
  )

  it.live("a dismissal fails the ask with the reason; an abort dismisses it", () =>
    Effect.gen(function* () {
      const question = yield* Question
      const asking = yield* question.ask({ sessionID: "s", questions }).pipe(Effect.flip, Effect.forkChild)
      yield* Effect.sleep("10 millis")
      const [pending] = yield* question.pending
      yield* question.dismiss(pending?.id ?? "", "Not now.")
      assert.strictEqual((yield* Fiber.join(asking)).message, "Not now.")

      const controller = new AbortController()
      setTimeout(() => controller.abort(), 20)
      const aborted = yield* question.ask({ sessionID: "s", questions, signal: controller.signal }).pipe(Effect.flip)
      assert.strictEqual(aborted.message, "The questions were dismissed because the turn was aborted.")
    }).pipe(Effect.provide(testLayer({ root: tempRoot() })))
  )
})
