import { assert, describe, it } from "@effect/vitest"
import { definePlugin, type Hooks } from "@lathe/plugin"
import { Effect } from "effect"
import { MAX_TURN_CONTINUES } from "../src/loop/session-hooks.js"
import { SessionPrompt } from "../src/loop/session-prompt.js"
import { chunks, ScriptedLLM, testLoopLayer } from "../src/testing/index.js"
import { runTurn, tempRoot } from "./loop-helpers.js"

// The turn hooks: session.start and prompt.submit before the model sees a prompt, turn.stop when it ends the turn.
const usage = { input: 10, output: 5 }
const answer = (text: string) => [chunks.text(text), chunks.finish(usage)]

const loop = (hooks: Hooks, steps: number) =>
  testLoopLayer({
    root: tempRoot(),
    plugins: [definePlugin({ name: "turn-hooks", setup: () => hooks })],
    steps: Array.from({ length: steps }, (_, index) => answer(`answer ${index + 1}`))
  })

describe("turn hooks", () => {
  it.live("session.start runs once per session and prompt.submit on every prompt; both add context", () => {
    const seen: Array<string> = []
    return Effect.gen(function* () {
      const turn = yield* runTurn("hello")
      yield* (yield* SessionPrompt).prompt({ sessionID: turn.sessionID, parts: [{ type: "text", text: "again" }] })
      const [first, second] = yield* (yield* ScriptedLLM).requests
      const sent = JSON.stringify(first?.messages)
      assert.include(sent, "started: startup")
      assert.include(sent, "submitted: hello")
      assert.notInclude(JSON.stringify(second?.messages).split("again")[1] ?? "", "started:")
      assert.deepStrictEqual(seen, ["session.start startup", "prompt.submit hello", "prompt.submit again"])
      const stored = turn.messages[0]?.parts.filter((part) => part.type === "text")
      assert.deepStrictEqual(
        stored?.map((part) => (part.type === "text" ? [part.text, part.synthetic ?? false] : [])),
        [
          ["hello", false],
          ["started: startup", true],
          ["submitted: hello", true]
        ]
      )
    }).pipe(
      Effect.provide(
        loop(
          {
            "session.start": (input, output) => {
              seen.push(`session.start ${input.source}`)
              output.context.push(`started: ${input.source}`)
            },
            "prompt.submit": (input, output) => {
              seen.push(`prompt.submit ${input.text}`)
              output.context.push(`submitted: ${input.text}`)
            }
          },
          2
        )
      )
    )
  })

  it.live("a blocked prompt is withdrawn: no model call, the message removed, the person told why", () =>
    Effect.gen(function* () {
      const turn = yield* runTurn("deploy to prod")
      assert.lengthOf(yield* (yield* ScriptedLLM).requests, 0)
      assert.lengthOf(turn.messages, 0)
      const notice = turn.events.find((event) => event.type === "notice")
      assert.strictEqual(notice?.type === "notice" ? notice.message : "", "A plugin withdrew the prompt: not today")
    }).pipe(
      Effect.provide(
        loop(
          {
            "prompt.submit": (_input, output) => {
              output.block = "not today"
            }
          },
          1
        )
      )
    )
  )

  it.live("turn.stop sends the turn on with its instruction, at most MAX_TURN_CONTINUES times", () => {
    const counts: Array<number> = []
    return Effect.gen(function* () {
      const turn = yield* runTurn("work")
      const requests = yield* (yield* ScriptedLLM).requests
      assert.lengthOf(requests, MAX_TURN_CONTINUES + 1)
      assert.deepStrictEqual(counts, [0, 1, 2])
      assert.include(JSON.stringify(requests[1]?.messages), "keep going (0)")
      const prompts = turn.messages.filter((m) => m.info.role === "user")
      assert.lengthOf(prompts, MAX_TURN_CONTINUES + 1)
    }).pipe(
      Effect.provide(
        loop(
          {
            "turn.stop": (input, output) => {
              counts.push(input.continued)
              output.continue = `keep going (${input.continued})`
            }
          },
          MAX_TURN_CONTINUES + 2
        )
      )
    )
  })

  it.live("turn.stop that sets nothing ends the turn", () =>
    Effect.gen(function* () {
      yield* runTurn("work")
      assert.lengthOf(yield* (yield* ScriptedLLM).requests, 1)
    }).pipe(Effect.provide(loop({ "turn.stop": () => undefined }, 2)))
  )
})
