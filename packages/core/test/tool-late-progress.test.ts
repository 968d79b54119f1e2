import { assert, describe, it } from "@effect/vitest"
import { definePlugin, Tool } from "@lathe/plugin"
import { Effect } from "effect"
import { z } from "zod"
import { SessionStore } from "../src/store/session-store.js"
import { chunks, testLoopLayer } from "../src/testing/index.js"
import { runTurn, tempRoot, toolParts } from "./loop-helpers.js"

// A tool that leaves a progress timer behind (as the bash tool's output preview did when a rerun outside the sandbox
// was rejected): the update fires after the call has settled. Before the fix it turned the finished call back into
// `running`, so the stored call lost its result and the next request carried no tool result at all.
const LATE_MS = 20
const late = (fail: boolean) =>
  Tool.define(fail ? "late_fail" : "late_ok", {
    description: "Leaves a progress update behind",
    parameters: z.object({}),
    mutates: false,
    execute: async (_args, ctx) => {
      ctx.metadata({ title: "started" })
      setTimeout(() => ctx.metadata({ title: "late", metadata: { output: "late preview" } }), LATE_MS)
      if (fail) throw new Error("refused")
      return { title: "done", output: "the result" }
    }
  })

const tools = definePlugin({ name: "late-tools", setup: () => ({ tools: [late(true), late(false)] }) })

describe("a tool's progress update that arrives after the call settled", () => {
  it.live("leaves the failed and the completed call stored as they ended", () =>
    Effect.gen(function* () {
      const turn = yield* runTurn("go")
      // Give the stray timers time to fire, then read what is stored.
      yield* Effect.sleep(`${LATE_MS * 5} millis`)
      const store = yield* SessionStore
      const stored = toolParts({ ...turn, messages: yield* store.messages(turn.sessionID) })
      assert.deepStrictEqual(
        stored.map((part) => [part.tool, part.state.status]),
        [
          ["late_fail", "error"],
          ["late_ok", "completed"]
        ]
      )
      const ok = stored.find((part) => part.tool === "late_ok")
      assert.strictEqual(ok?.state.status === "completed" ? ok.state.output : undefined, "the result")
    }).pipe(
      Effect.provide(
        testLoopLayer({
          root: tempRoot(),
          plugins: [tools],
          steps: [
            [
              chunks.toolCall("c1", "late_fail", {}),
              chunks.toolCall("c2", "late_ok", {}),
              chunks.finish({ input: 1, output: 1 }, "tool-calls")
            ],
            [chunks.text("ok"), chunks.finish({ input: 1, output: 1 })]
          ]
        })
      )
    )
  )
})
