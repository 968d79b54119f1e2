// `--output-schema`: the final answer must be one JSON value valid against the schema. A non-conforming answer goes
// back to the model with its errors (twice at most); what still does not conform fails the turn, never "succeeds".
import { assert, describe, it } from "@effect/vitest"
import type { AssistantMessage } from "@lathe/plugin/schema"
import { MockLanguageModelV4 } from "ai/test"
import { Effect, Stream } from "effect"
import { type LLMRequest, streamWithModel } from "../src/llm/llm.js"
import { checkAnswer, compileOutputSchema, nativeSchema, type OutputSchema } from "../src/loop/structured-output.js"
import { chunks, ScriptedLLM, scriptedModelInfo, testLoopLayer } from "../src/testing/index.js"
import { runTurn, tempRoot } from "./loop-helpers.js"

const schemaOf = (value: unknown): OutputSchema => {
  const compiled = compileOutputSchema(value)
  if (typeof compiled === "string") throw new Error(compiled)
  return compiled
}

const review = schemaOf({
  type: "object",
  properties: {
    verdict: { type: "string", enum: ["ok", "fix"] },
    issues: { type: "array", items: { type: "string" } }
  },
  required: ["verdict", "issues"],
  additionalProperties: false
})
const usage = { input: 10, output: 5 }
const answer = (text: string) => [chunks.text(text), chunks.finish(usage)]

describe("output schema", () => {
  it("says what is wrong with a schema that cannot be used", () => {
    assert.include(compileOutputSchema([1]) as string, "a JSON Schema is an object")
    assert.include(compileOutputSchema({ type: "objec" }) as string, "objec")
  })

  it("checks an answer: one JSON value (a fenced block allowed), each error with its path", () => {
    assert.deepStrictEqual(checkAnswer(review, '```json\n{"verdict":"ok","issues":[]}\n```'), {
      ok: true,
      value: { verdict: "ok", issues: [] }
    })
    const bad = checkAnswer(review, '{"verdict":"maybe","issues":[3]}')
    assert.isFalse(bad.ok)
    if (!bad.ok)
      assert.deepStrictEqual(
        bad.errors.map((e) => e.split(":")[0]),
        ["verdict", "issues[0]"]
      )
    const prose = checkAnswer(review, "Looks good to me.")
    assert.isFalse(prose.ok)
    if (!prose.ok) assert.match(prose.errors[0] ?? "", /^the answer is not a JSON value/)
  })

  it.live("prose first, then JSON: the errors go back once, and the value is recorded on the last message", () =>
    Effect.gen(function* () {
      const turn = yield* runTurn("review", { outputSchema: review })
      const requests = yield* (yield* ScriptedLLM).requests
      assert.strictEqual(requests.length, 2)
      assert.include(requests[0]?.system.join("\n") ?? "", '"additionalProperties": false')
      const resent = JSON.stringify(requests[1]?.messages.at(-1))
      assert.include(resent, "does not validate against the required JSON Schema")
      assert.include(resent, "the answer is not a JSON value")
      const info = turn.result.info as AssistantMessage
      assert.isUndefined(info.error)
      assert.deepStrictEqual(info.structured, { verdict: "fix", issues: ["a typo"] })
    }).pipe(
      Effect.provide(
        testLoopLayer({
          root: tempRoot(),
          steps: [answer("The change looks fine, one typo."), answer('{"verdict":"fix","issues":["a typo"]}')]
        })
      )
    )
  )

  it.live("an answer that never conforms fails the turn after two resends, with the errors", () =>
    Effect.gen(function* () {
      const turn = yield* runTurn("review", { outputSchema: review })
      assert.strictEqual((yield* (yield* ScriptedLLM).requests).length, 3)
      const info = turn.result.info as AssistantMessage
      assert.strictEqual(info.error?.name, "OutputSchemaMismatch")
      if (info.error?.name !== "OutputSchemaMismatch") return
      assert.deepStrictEqual(
        info.error.errors.map((e) => e.split(":")[0]),
        ["verdict"]
      )
      assert.include(info.error.message, "sent back 2 times")
      assert.isUndefined(info.structured)
      assert.isTrue(turn.events.some((e) => e.type === "session.error" && e.error.name === "OutputSchemaMismatch"))
    }).pipe(
      Effect.provide(
        testLoopLayer({
          root: tempRoot(),
          steps: [
            answer('{"verdict":1,"issues":[]}'),
            answer('{"verdict":2,"issues":[]}'),
            answer('{"verdict":3,"issues":[]}')
          ]
        })
      )
    )
  )
})

describe("native structured output", () => {
  /** One step on a mock model; returns the call options the provider SDK was given. */
  const sent = (request: Partial<LLMRequest>, structuredOutput: boolean) =>
    Effect.gen(function* () {
      const model = new MockLanguageModelV4({
        doStream: async () => ({
          stream: new ReadableStream({
            start(controller) {
              for (const part of [...chunks.text("{}"), ...chunks.finish(usage)]) controller.enqueue(part)
              controller.close()
            }
          })
        })
      })
      const base: LLMRequest = {
        sessionID: "s",
        model: scriptedModelInfo(),
        system: ["sys"],
        messages: [{ role: "user", content: "hi" }],
        tools: { read: { description: "Read", inputSchema: { type: "object", properties: {} } } },
        abort: new AbortController().signal
      }
      yield* Stream.runDrain(streamWithModel(model, { ...base, ...request }, { structuredOutput }))
      return model.doStreamCalls[0]
    })

  it.effect("sends an object schema as the call's responseFormat, beside the tools, where the provider takes one", () =>
    Effect.gen(function* () {
      const answerSchema = nativeSchema(review)
      assert.isDefined(answerSchema)
      const call = yield* sent(answerSchema ? { answerSchema } : {}, true)
      assert.deepStrictEqual(call?.responseFormat, { type: "json", schema: review.schema })
      assert.strictEqual(call?.tools?.length, 1)
      // Elsewhere (OpenAI-compatible servers, Gemini, …) the instruction and the validation alone ask for it.
      const other = yield* sent(answerSchema ? { answerSchema } : {}, false)
      assert.isUndefined(other?.responseFormat)
      // A schema whose root is not an object is asked for in words only.
      assert.isUndefined(nativeSchema(schemaOf({ type: "array", items: { type: "string" } })))
    })
  )
})
