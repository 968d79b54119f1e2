import { assert, describe, it } from "vitest"
import { streamInputTurn } from "../src/commands/run-stream-input.js"
import { resultSubtype } from "../src/commands/run-tally.js"

describe("a turn's result subtype", () => {
  it("follows the recorded error, then the exit code", () => {
    assert.strictEqual(resultSubtype(0, undefined), "success")
    assert.strictEqual(resultSubtype(1, "StepLimit"), "error_max_turns")
    assert.strictEqual(resultSubtype(3, "BudgetExhausted"), "error_max_budget_usd")
    assert.strictEqual(resultSubtype(3, undefined), "error_max_budget_usd")
    assert.strictEqual(resultSubtype(1, "ProviderError"), "error_during_execution")
    assert.strictEqual(resultSubtype(130, "Aborted"), "error_during_execution")
    // An ask rejected for want of a terminal fails the run with no error on the answer.
    assert.strictEqual(resultSubtype(1, undefined), "error_during_execution")
  })
})

describe("--input-format stream-json lines", () => {
  it("take a user message's text, as a string or as text blocks", () => {
    const line = (content: unknown) => JSON.stringify({ type: "user", message: { role: "user", content } })
    assert.deepStrictEqual(streamInputTurn(line("fix it"), 1), { text: "fix it" })
    assert.deepStrictEqual(
      streamInputTurn(
        line([
          { type: "text", text: "one" },
          { type: "text", text: "two" }
        ]),
        1
      ),
      { text: "one\n\ntwo" }
    )
  })

  it("refuse anything else, naming the line", () => {
    const error = (line: string) => {
      const turn = streamInputTurn(line, 4)
      return "error" in turn ? turn.error : ""
    }
    assert.strictEqual(error("{"), "stdin line 4 is not JSON.")
    assert.include(error('{"type":"assistant"}'), "is not a user message")
    assert.include(error('{"type":"user","message":{"role":"user","content":"  "}}'), "empty message")
    assert.include(
      error('{"type":"user","message":{"role":"user","content":[{"type":"image","source":{}}]}}'),
      'a content block of type "image"'
    )
  })
})
