import { assert, describe, it } from "@effect/vitest"
import { definePlugin, Tool } from "@lathe/plugin"
import { Effect } from "effect"
import { z } from "zod"
import { TurnRunner } from "../src/loop/turn-runner.js"
import { createSession } from "../src/store/session.js"
import { SessionStore } from "../src/store/session-store.js"
import { chunks, ScriptedLLM, testLoopLayer } from "../src/testing/index.js"
import { tempRoot } from "./loop-helpers.js"

const usage = { input: 10, output: 2 }
const answer = (text: string) => [chunks.text(text), chunks.finish(usage)]
const callGate = [chunks.toolCall("g1", "gate", {}), chunks.finish(usage, "tool-calls")]

/** A tool that holds its step until the test opens the gate (or the turn is aborted): no guessed delays. */
const gate = () => {
  let open: () => void = () => undefined
  let started: () => void = () => undefined
  const opened = new Promise<void>((resolve) => {
    open = resolve
  })
  const running = new Promise<void>((resolve) => {
    started = resolve
  })
  const tool = Tool.define("gate", {
    description: "Waits for the test",
    parameters: z.object({}),
    mutates: false,
    execute: async (_args, ctx) => {
      started()
      await Promise.race([opened, new Promise((resolve) => ctx.abort.addEventListener("abort", resolve))])
      return { title: "gate", output: "opened" }
    }
  })
  return { tool, open, running }
}

/** A plugin with a command (`/greet <name>`, on the `plan` agent) and a resource (`memo:today`). */
const contributions = definePlugin({
  name: "kit",
  setup: () => ({
    commands: [
      {
        name: "greet",
        description: "Greets someone",
        agent: "plan",
        run: async (args: ReadonlyArray<string>) => {
          if (args.length === 0) throw new Error("greet needs a name")
          return [
            { type: "text" as const, text: `Say hello to ${args.join(" and ")}` },
            { type: "text" as const, text: "context from the command", synthetic: true }
          ]
        }
      }
    ],
    resources: {
      list: async () => [{ uri: "memo:today", name: "today" }],
      accepts: (uri: string) => uri.startsWith("memo:"),
      read: async (uri: string) => {
        if (uri !== "memo:today") throw new Error(`could not read ${uri}`)
        return [{ type: "text" as const, text: "the memo says: ship it", synthetic: true }]
      }
    }
  })
})

/** What the model was sent, as JSON text, per request. */
const sent = Effect.map(
  Effect.flatMap(ScriptedLLM, (llm) => llm.requests),
  (requests) => requests.map((request) => JSON.stringify(request.messages))
)

describe("TurnRunner", () => {
  it.live("expands a command with its arguments and attaches a mentioned resource, in one place", () =>
    Effect.gen(function* () {
      const runner = yield* TurnRunner
      const session = yield* createSession({ title: "t" })
      const input = {
        sessionID: session.id,
        text: "Ada @memo:today",
        command: "greet",
        arguments: ["Ada", "@memo:today"],
        mentions: true
      }
      // The command names its agent; the person's choice wins over it.
      assert.strictEqual((yield* runner.prepare(input)).agent, "plan")
      const done = yield* runner.run({ ...input, agent: "build", title: false })
      assert.deepStrictEqual(done.problems, [])
      const [request] = yield* sent
      assert.include(request, "Say hello to Ada and @memo:today")
      assert.include(request, "context from the command")
      assert.include(request, "the memo says: ship it")
      const messages = yield* (yield* SessionStore).messages(session.id)
      assert.strictEqual(messages[0]?.info.role === "user" ? messages[0].info.agent : undefined, "build")
    }).pipe(Effect.provide(testLoopLayer({ root: tempRoot(), plugins: [contributions], steps: [answer("hi")] })))
  )

  it.live("a command that does not expand fails before anything is stored; an unreadable mention is a problem", () =>
    Effect.gen(function* () {
      const runner = yield* TurnRunner
      const store = yield* SessionStore
      const session = yield* createSession({ title: "t" })
      const unknown = yield* Effect.flip(runner.run({ sessionID: session.id, text: "", command: "nope" }))
      assert.strictEqual(unknown._tag, "UnknownCommand")
      const refused = yield* Effect.flip(runner.submit({ sessionID: session.id, text: "", command: "greet" }))
      assert.strictEqual(refused._tag, "PluginRequestError")
      assert.include(refused.message, "greet needs a name")
      assert.deepStrictEqual(yield* store.messages(session.id), [])
      assert.deepStrictEqual(yield* sent, [])
      const done = yield* runner.run({
        sessionID: session.id,
        text: "read @memo:tomorrow",
        mentions: true,
        title: false
      })
      assert.deepStrictEqual(done.problems.length, 1)
      assert.include(done.problems[0] ?? "", "could not read memo:tomorrow")
    }).pipe(Effect.provide(testLoopLayer({ root: tempRoot(), plugins: [contributions], steps: [answer("ok")] })))
  )

  it.live(
    "runs one series of turns per session: a prompt sent meanwhile is queued and seen by the running turn",
    () => {
      const { tool, open, running } = gate()
      const tools = definePlugin({ name: "gate", setup: () => ({ tools: [tool] }) })
      return Effect.gen(function* () {
        const runner = yield* TurnRunner
        const session = yield* createSession({ title: "t" })
        const first = yield* runner.submit({ sessionID: session.id, text: "first", title: false })
        assert.isFalse(first.queued)
        yield* Effect.promise(() => running)
        assert.isTrue(yield* runner.isRunning(session.id))
        const busy = yield* Effect.flip(runner.run({ sessionID: session.id, text: "now" }))
        assert.strictEqual(busy._tag, "SessionBusy")
        const second = yield* runner.submit({ sessionID: session.id, text: "second", title: false })
        assert.isTrue(second.queued)
        open()
        yield* runner.idle(session.id)
        assert.isFalse(yield* runner.isRunning(session.id))
        const requests = yield* sent
        // The running turn's next step saw the queued prompt and answered it: no third model call.
        assert.strictEqual(requests.length, 2)
        assert.include(requests[1] ?? "", "second")
        const messages = yield* (yield* SessionStore).messages(session.id)
        assert.strictEqual(messages.at(-1)?.info.role, "assistant")
      }).pipe(Effect.provide(testLoopLayer({ root: tempRoot(), plugins: [tools], steps: [callGate, answer("both")] })))
    }
  )

  it.live("abort ends the running turn and starts nothing more; answer gives up when the caller's rule says so", () => {
    const { tool, running } = gate()
    const tools = definePlugin({ name: "gate", setup: () => ({ tools: [tool] }) })
    return Effect.gen(function* () {
      const runner = yield* TurnRunner
      const store = yield* SessionStore
      const session = yield* createSession({ title: "t" })
      yield* runner.submit({ sessionID: session.id, text: "first", title: false })
      yield* Effect.promise(() => running)
      assert.isTrue(yield* runner.abort(session.id))
      yield* runner.idle(session.id)
      assert.isFalse(yield* runner.abort(session.id))
      assert.strictEqual((yield* sent).length, 1)
      const messages = yield* store.messages(session.id)
      const assistant = messages.at(-1)?.info
      assert.strictEqual(assistant?.role === "assistant" ? assistant.error?.name : undefined, "Aborted")

      const stored = yield* runner.append({ sessionID: session.id, text: "later" })
      const refused = yield* runner.answer({
        sessionID: session.id,
        messageID: stored.message.id,
        admit: (messageID) => `not ${messageID}`
      })
      assert.deepStrictEqual(refused, { status: "failed", message: `not ${stored.message.id}` })
      assert.strictEqual((yield* sent).length, 1)
      const answered = yield* runner.answer({ sessionID: session.id, messageID: stored.message.id, title: false })
      assert.deepStrictEqual(answered, { status: "done" })
      assert.include((yield* sent)[1] ?? "", "later")
    }).pipe(Effect.provide(testLoopLayer({ root: tempRoot(), plugins: [tools], steps: [callGate, answer("after")] })))
  })
})
