import type { LanguageModelV4StreamPart } from "@ai-sdk/provider"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { chunks, testLoopLayer } from "../src/testing/index.js"
import { runTurn, tempRoot } from "./loop-helpers.js"

const usage = { input: 10, output: 5 }
/** An answer streamed in pieces, the last of which is only whitespace. */
const answer: Array<LanguageModelV4StreamPart> = [
  { type: "text-start", id: "t1" },
  { type: "text-delta", id: "t1", delta: "Done: two files changed.  " },
  { type: "text-delta", id: "t1", delta: "\n\n \t\n" },
  { type: "text-end", id: "t1" }
]

describe("text-end", () => {
  it.live("trims the answer's trailing whitespace in the stored part and the final part.updated", () =>
    Effect.gen(function* () {
      const turn = yield* runTurn("go")
      const texts = turn.result.parts.filter((part) => part.type === "text")
      assert.deepStrictEqual(
        texts.map((part) => part.text),
        ["Done: two files changed."]
      )
      const stored = turn.messages.flatMap((m) => m.parts.flatMap((part) => (part.type === "text" ? [part.text] : [])))
      assert.strictEqual(stored.at(-1), "Done: two files changed.")
      const ended = turn.events.flatMap((e) =>
        e.type === "part.updated" && e.part.type === "text" && e.part.time?.end !== undefined ? [e.part.text] : []
      )
      assert.deepStrictEqual(ended, ["Done: two files changed."])
    }).pipe(Effect.provide(testLoopLayer({ root: tempRoot(), steps: [[...answer, ...chunks.finish(usage)]] })))
  )

  it.live("keeps leading whitespace (indented code starts the answer)", () =>
    Effect.gen(function* () {
      const turn = yield* runTurn("go")
      const text = turn.result.parts.find((part) => part.type === "text")
      assert.strictEqual(text?.type === "text" && text.text, "    indented\n  ok")
    }).pipe(
      Effect.provide(
        testLoopLayer({
          root: tempRoot(),
          steps: [[...chunks.text("    indented\n  ok\n\n"), ...chunks.finish(usage)]]
        })
      )
    )
  )
})
