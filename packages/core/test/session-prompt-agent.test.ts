import { assert, describe, it } from "@effect/vitest"
import type { LatheEvent } from "@lathe/plugin/schema"
import { Effect } from "effect"
import { Bus } from "../src/contracts/bus.js"
import { SessionPrompt } from "../src/loop/session-prompt.js"
import { createSession } from "../src/store/session.js"
import { SessionStore } from "../src/store/session-store.js"
import { chunks, ScriptedLLM, testLoopLayer } from "../src/testing/index.js"
import { tempRoot } from "./loop-helpers.js"

// Which agent and model a turn runs with: a mentioned subagent runs for one prompt only, on its caller's model; a
// session whose stored agent can no longer take a prompt falls back to the default agent with a notice.
const done = [chunks.text("done"), chunks.finish({ input: 10, output: 5 })]
const config = {
  model: "local/alpha",
  agent: { build: { model: "local/gamma" }, scout: { mode: "subagent" as const, description: "looks" } }
}

/** Runs one prompt in a session stored with `agent`, collecting the notices it publishes. */
const promptIn = (agent: string | undefined, input: { agent?: string; allowSubagents?: boolean } = {}) =>
  Effect.gen(function* () {
    const notices: Array<string> = []
    yield* (yield* Bus).listen(
      (event: LatheEvent) => {
        if (event.type === "notice") notices.push(event.message)
      },
      ["notice"]
    )
    const session = yield* createSession(agent ? { agent } : {})
    const result = yield* (yield* SessionPrompt).prompt({
      sessionID: session.id,
      parts: [{ type: "text", text: "hello" }],
      title: false,
      ...input
    })
    yield* Effect.sleep("20 millis") // the listener runs on its own fiber
    const stored = yield* (yield* SessionStore).getSession(session.id)
    const [request] = yield* (yield* ScriptedLLM).requests
    return {
      ranAs: result.info.agent,
      model: `${request?.model.providerID}/${request?.model.modelID}`,
      sessionAgent: stored.agent,
      notices
    }
  })

const layer = () => testLoopLayer({ root: tempRoot(), config, steps: [done] })

describe("the agent and model of a turn", () => {
  it.live("a mentioned subagent runs for that prompt only, on the model the session's agent would have used", () =>
    Effect.gen(function* () {
      const turn = yield* promptIn("build", { agent: "scout", allowSubagents: true })
      // Regression: the mention stored `scout` as the session's agent, and the next prompt failed.
      assert.deepStrictEqual(turn, { ranAs: "scout", model: "local/gamma", sessionAgent: "build", notices: [] })
    }).pipe(Effect.provide(layer()))
  )

  it.live("a session whose stored agent is a subagent falls back to the default agent, with a notice", () =>
    Effect.gen(function* () {
      const turn = yield* promptIn("scout")
      assert.strictEqual(turn.ranAs, "build")
      assert.strictEqual(turn.model, "local/gamma")
      assert.strictEqual(turn.sessionAgent, "build", "the session now has an agent that can take prompts")
      assert.lengthOf(turn.notices, 1)
      assert.match(turn.notices[0] ?? "", /agent "scout" cannot take a prompt \(it is a subagent\); the "build" agent/)
    }).pipe(Effect.provide(layer()))
  )

  it.live("a session whose stored agent no longer exists falls back too, and says so", () =>
    Effect.gen(function* () {
      const turn = yield* promptIn("reviewer")
      assert.strictEqual(turn.ranAs, "build")
      assert.match(turn.notices[0] ?? "", /agent "reviewer" cannot take a prompt \(no agent has that name now\)/)
    }).pipe(Effect.provide(layer()))
  )

  it.live("an agent named for the prompt must still take prompts: a subagent without a mention is refused", () =>
    Effect.gen(function* () {
      const failure = yield* promptIn("build", { agent: "scout" }).pipe(Effect.flip)
      assert.strictEqual(failure._tag, "AgentNotFound")
      assert.include(failure.message, 'No agent "scout" can take a prompt')
    }).pipe(Effect.provide(layer()))
  )
})
