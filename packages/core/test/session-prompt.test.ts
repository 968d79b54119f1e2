import { assert, describe, it } from "@effect/vitest"
import { definePlugin, rejected } from "@lathe/plugin"
import type { StepFinishPart } from "@lathe/plugin/schema"
import { Duration, Effect, Fiber, Layer, Option } from "effect"
import { PermissionNext } from "../src/contracts/permission-next.js"
import type { LLM } from "../src/llm/llm.js"
import { ProviderError } from "../src/llm/provider-error.js"
import { Retry } from "../src/loop/retry.js"
import { SessionPrompt } from "../src/loop/session-prompt.js"
import { createSession, discardIfEmpty } from "../src/store/session.js"
import { SessionStore } from "../src/store/session-store.js"
import { chunks, ScriptedLLM, testLoopLayer } from "../src/testing/index.js"
import { AskTool, allParts, EchoTool, runTurn, tempRoot, toolParts } from "./loop-helpers.js"

const tools = definePlugin({ name: "test-tools", setup: () => ({ tools: [EchoTool, AskTool] }) })
const usage = { input: 100, output: 20 }
const echo = (id: string, text = "same") => [chunks.toolCall(id, "echo", { text }), chunks.finish(usage, "tool-calls")]
const done = [chunks.text("done"), chunks.finish(usage)]

/** A permission layer that records doom_loop asks and answers them with `answer`. */
const doomAsks = (answer: "allow" | "reject", asked: Array<unknown>) =>
  Layer.succeed(
    PermissionNext,
    PermissionNext.of({
      ask: (request) => {
        if (request.permission !== "doom_loop") return Effect.void
        asked.push(request.metadata?.count)
        return answer === "allow" ? Effect.void : Effect.fail(rejected("doom_loop", request.patterns))
      },
      reply: () => Effect.void,
      pending: Effect.succeed([])
    })
  )

describe("doom-loop guard", () => {
  it.live("asks at exactly N identical calls and not at N-1; a rejection ends the turn with DoomLoopDetected", () => {
    const asked: Array<unknown> = []
    return Effect.gen(function* () {
      const error = yield* runTurn("loop").pipe(Effect.flip)
      assert.strictEqual(error._tag, "DoomLoopDetected")
      if (error._tag !== "DoomLoopDetected") return
      assert.strictEqual(error.count, 3)
      assert.strictEqual(error.tool, "echo")
      assert.include(error.message, 'echo {"text":"same"}')
      assert.deepStrictEqual(asked, [3])
      assert.strictEqual((yield* (yield* ScriptedLLM).requests).length, 3)
    }).pipe(
      Effect.provide(
        testLoopLayer({
          root: tempRoot(),
          plugins: [tools],
          permissionLayer: doomAsks("reject", asked),
          steps: [echo("a"), echo("b"), echo("c"), done]
        })
      )
    )
  })

  it.live("an allowed ask lets the loop go on; a different input resets the count", () => {
    const asked: Array<unknown> = []
    return Effect.gen(function* () {
      const turn = yield* runTurn("loop")
      assert.deepStrictEqual(asked, [3])
      assert.strictEqual(toolParts(turn).filter((p) => p.state.status === "completed").length, 5)
    }).pipe(
      Effect.provide(
        testLoopLayer({
          root: tempRoot(),
          plugins: [tools],
          permissionLayer: doomAsks("allow", asked),
          steps: [echo("a"), echo("b", "other"), echo("c"), echo("d"), echo("e"), done]
        })
      )
    )
  })

  it.live("ignored tools and threshold 0 never ask", () => {
    const asked: Array<unknown> = []
    return Effect.gen(function* () {
      yield* runTurn("loop")
      assert.deepStrictEqual(asked, [])
    }).pipe(
      Effect.provide(
        testLoopLayer({
          root: tempRoot(),
          plugins: [tools],
          config: { doom_loop: { ignored_tools: ["echo"] } },
          permissionLayer: doomAsks("reject", asked),
          steps: [echo("a"), echo("b"), echo("c"), echo("d"), done]
        })
      )
    )
  })

  it.live("threshold 0 disables the guard", () => {
    const asked: Array<unknown> = []
    return Effect.gen(function* () {
      yield* runTurn("loop")
      assert.deepStrictEqual(asked, [])
    }).pipe(
      Effect.provide(
        testLoopLayer({
          root: tempRoot(),
          plugins: [tools],
          config: { doom_loop: { threshold: 0 } },
          permissionLayer: doomAsks("reject", asked),
          steps: [echo("a"), echo("b"), echo("c"), echo("d"), done]
        })
      )
    )
  })
})

describe("SessionPrompt", () => {
  it.live("maxSteps: the last step offers no tools and tells the model to wrap up", () =>
    Effect.gen(function* () {
      yield* runTurn("go")
      const requests = yield* (yield* ScriptedLLM).requests
      assert.strictEqual(requests.length, 2)
      assert.deepStrictEqual(Object.keys(requests[0]?.tools ?? {}).sort(), ["echo", "guarded"])
      assert.deepStrictEqual(Object.keys(requests[1]?.tools ?? {}), [])
      assert.include(requests[1]?.system.at(-1) ?? "", "last step")
    }).pipe(
      Effect.provide(
        testLoopLayer({
          root: tempRoot(),
          plugins: [tools],
          config: { agent: { build: { max_steps: 2 } } },
          steps: [echo("a"), [chunks.text("Summary: stopped."), chunks.finish(usage)]]
        })
      )
    )
  )

  it.live("a rejected permission (no guidance) stops the turn after the step", () =>
    Effect.gen(function* () {
      const turn = yield* runTurn("write it")
      const [call] = toolParts(turn)
      assert.strictEqual(call?.state.status, "error")
      if (call?.state.status === "error") assert.include(call.state.error, "The user rejected this edit request")
      assert.strictEqual((yield* (yield* ScriptedLLM).requests).length, 1)
    }).pipe(
      Effect.provide(
        testLoopLayer({
          root: tempRoot(),
          plugins: [tools],
          permission: "deny",
          steps: [[chunks.toolCall("c", "guarded", { path: "a.ts" }), chunks.finish(usage, "tool-calls")], done]
        })
      )
    )
  )

  it.live("a tool denied for * by config is not offered at all", () =>
    Effect.gen(function* () {
      yield* runTurn("hi")
      const [request] = yield* (yield* ScriptedLLM).requests
      assert.deepStrictEqual(Object.keys(request?.tools ?? {}), ["echo"])
    }).pipe(
      Effect.provide(
        testLoopLayer({
          root: tempRoot(),
          plugins: [tools],
          config: { permission: { guarded: "deny" } },
          steps: [done]
        })
      )
    )
  )

  it.live("a retryable failure is retried without duplicating parts, with retry status events", () =>
    Effect.gen(function* () {
      const turn = yield* runTurn("retry me")
      const texts = allParts(turn).filter((p) => p.type === "text" && p.messageID !== turn.messages[0]?.info.id)
      assert.deepStrictEqual(
        texts.map((p) => (p.type === "text" ? p.text : "")),
        ["second try"]
      )
      const retries = allParts(turn).filter((p) => p.type === "retry")
      assert.strictEqual(retries.length, 1)
      const statuses = turn.events.flatMap((e) => (e.type === "session.status" ? [e.status.type] : []))
      assert.deepStrictEqual(statuses, ["busy", "retry", "busy", "idle"])
      assert.strictEqual(turn.events.filter((e) => e.type === "part.removed").length, 2) // step-start + text
    }).pipe(
      Effect.provide(
        testLoopLayer({
          root: tempRoot(),
          steps: [
            [chunks.text("first try, cut")], // no finish: a cut stream (StreamCut, retryable)
            [chunks.text("second try"), chunks.finish(usage)]
          ]
        })
      )
    )
  )

  it.live("a non-retryable failure is recorded on the message and fails the turn at once", () =>
    Effect.gen(function* () {
      const error = yield* runTurn("auth").pipe(Effect.flip)
      assert.strictEqual(error._tag, "ProviderError")
      const store = yield* SessionStore
      const sessions = yield* store.listSessions()
      const messages = yield* store.messages(sessions[0]?.id ?? "")
      const last = messages.at(-1)?.info
      assert.strictEqual(last?.role === "assistant" ? last.error?.name : undefined, "ProviderError")
    }).pipe(
      Effect.provide(
        testLoopLayer({
          root: tempRoot(),
          steps: [
            [
              chunks.error(
                new ProviderError({ providerID: "p", modelID: "m", reason: { _tag: "Auth" }, message: "bad key" })
              )
            ]
          ]
        })
      )
    )
  )

  it.live("retries that run out fail the turn with the last error and how many attempts were made", () =>
    Effect.gen(function* () {
      const error = yield* runTurn("cut thrice").pipe(Effect.flip)
      assert.strictEqual(error._tag, "ProviderError")
      assert.match(error.message, /ended before its finish event.* Gave up after 3 attempts\.$/)
      const store = yield* SessionStore
      const sessions = yield* store.listSessions()
      const last = (yield* store.messages(sessions[0]?.id ?? "")).at(-1)?.info
      assert.strictEqual(last?.role === "assistant" ? last.error?.message : undefined, error.message)
      assert.strictEqual((yield* (yield* ScriptedLLM).requests).length, 3)
    }).pipe(
      Effect.provide(
        testLoopLayer({
          root: tempRoot(),
          steps: [[chunks.text("cut 1")], [chunks.text("cut 2")], [chunks.text("cut 3")], done],
          retryLayer: Retry.layerTest(2)
        })
      )
    )
  )

  it.live("a non-retryable failure after retries keeps its own message", () =>
    Effect.gen(function* () {
      const error = yield* runTurn("cut, then auth").pipe(Effect.flip)
      assert.strictEqual(error.message, "bad key")
    }).pipe(
      Effect.provide(
        testLoopLayer({
          root: tempRoot(),
          steps: [
            [chunks.text("cut")],
            [
              chunks.error(
                new ProviderError({ providerID: "p", modelID: "m", reason: { _tag: "Auth" }, message: "bad key" })
              )
            ]
          ]
        })
      )
    )
  )

  it.live("discardIfEmpty deletes a session with nothing stored in it, and keeps one with a prompt", () =>
    Effect.gen(function* () {
      const store = yield* SessionStore
      const empty = yield* createSession()
      assert.isTrue(yield* discardIfEmpty(empty.id))
      assert.strictEqual((yield* store.getSession(empty.id).pipe(Effect.flip))._tag, "SessionNotFound")
      const turn = yield* runTurn("keep me")
      assert.isFalse(yield* discardIfEmpty(turn.sessionID))
      assert.strictEqual((yield* store.getSession(turn.sessionID)).id, turn.sessionID)
    }).pipe(Effect.provide(testLoopLayer({ root: tempRoot(), steps: [done] })))
  )

  it.live("abort during a retry wait ends the turn as aborted, without another request", () => {
    const controller = new AbortController()
    return Effect.gen(function* () {
      const turn = yield* runTurn("wait", { abort: controller.signal })
      const info = turn.result.info
      assert.strictEqual(info.role === "assistant" ? info.error?.name : undefined, "Aborted")
      assert.strictEqual((yield* (yield* ScriptedLLM).requests).length, 1)
    }).pipe(
      Effect.provide(
        testLoopLayer({
          root: tempRoot(),
          steps: [[chunks.text("cut")], done],
          // A policy that waits an hour: only the abort, sent once the wait begins, can end it.
          retryLayer: Layer.succeed(
            Retry,
            Retry.of({
              delay: () =>
                Effect.sync(() => {
                  setTimeout(() => controller.abort(), 20)
                  return Option.some(Duration.hours(1))
                })
            })
          )
        })
      )
    )
  })

  it.live("compaction: a small context limit triggers a summary, and the loop continues after it", () =>
    Effect.gen(function* () {
      const first = yield* runTurn("first task")
      const prompt = yield* SessionPrompt
      yield* prompt.prompt({ sessionID: first.sessionID, parts: [{ type: "text", text: "second task" }], title: false })
      const requests = yield* (yield* ScriptedLLM).requests
      // 1: first turn → 2: second turn's step (overflows) → 3: the summary → 4: the next step.
      assert.strictEqual(requests.length, 4)
      assert.include(requests[2]?.system[0] ?? "", "You summarise a coding session")
      assert.deepStrictEqual(Object.keys(requests[2]?.tools ?? {}), [])
      // The summariser sees the older history, not the turn in progress.
      assert.include(JSON.stringify(requests[2]?.messages), "first task")
      assert.notInclude(JSON.stringify(requests[2]?.messages), "second task")
      // After it: the summary, then the turn in progress verbatim (its prompt and its tool result).
      const fourth = JSON.stringify(requests[3]?.messages)
      assert.include(fourth, "Task: summary of work")
      assert.include(fourth, "second task")
      assert.include(fourth, "echoed: same")
      assert.notInclude(fourth, "first task")
      const store = yield* SessionStore
      const messages = yield* store.messages(first.sessionID)
      assert.isTrue(messages.some((m) => m.info.role === "assistant" && m.info.summary === true))
      assert.isTrue(messages.some((m) => m.parts.some((p) => p.type === "compaction")))
    }).pipe(
      Effect.provide(
        testLoopLayer({
          root: tempRoot(),
          plugins: [tools],
          scripted: { model: { limit: { context: 1_000, output: 100 } } },
          steps: [
            [chunks.text("first answer"), chunks.finish({ input: 100, output: 20 })],
            [chunks.toolCall("c1", "echo", { text: "same" }), chunks.finish({ input: 950, output: 20 }, "tool-calls")],
            [chunks.text("Task: summary of work"), chunks.finish({ input: 300, output: 50 })],
            [chunks.text("continued"), chunks.finish({ input: 200, output: 10 })]
          ]
        })
      )
    )
  )

  it.live("compact on request summarises the whole history; the next turn sees only the summary", () =>
    Effect.gen(function* () {
      const first = yield* runTurn("first task")
      const prompt = yield* SessionPrompt
      yield* prompt.compact({ sessionID: first.sessionID })
      yield* prompt.prompt({ sessionID: first.sessionID, parts: [{ type: "text", text: "second task" }], title: false })
      const requests = yield* (yield* ScriptedLLM).requests
      assert.strictEqual(requests.length, 3)
      assert.include(requests[1]?.system[0] ?? "", "You summarise a coding session")
      assert.include(JSON.stringify(requests[1]?.messages), "first task")
      const third = JSON.stringify(requests[2]?.messages)
      assert.include(third, "Summary: the first task")
      assert.include(third, "second task")
      assert.notInclude(third, "first answer")
      const messages = yield* (yield* SessionStore).messages(first.sessionID)
      const marker = messages.flatMap((m) => m.parts).find((p) => p.type === "compaction")
      assert.strictEqual(marker?.type === "compaction" ? marker.auto : undefined, false)
    }).pipe(
      Effect.provide(
        testLoopLayer({
          root: tempRoot(),
          plugins: [tools],
          steps: [
            [chunks.text("first answer"), chunks.finish({ input: 100, output: 20 })],
            [chunks.text("Summary: the first task"), chunks.finish({ input: 300, output: 50 })],
            [chunks.text("continued"), chunks.finish({ input: 200, output: 10 })]
          ]
        })
      )
    )
  )

  it.live("compaction of a single overflowing turn repeats the request after the summary", () =>
    Effect.gen(function* () {
      const turn = yield* runTurn("the only task")
      const requests = yield* (yield* ScriptedLLM).requests
      assert.strictEqual(requests.length, 3)
      const third = JSON.stringify(requests[2]?.messages)
      assert.include(third, "Task: summary")
      assert.include(third, "Continue the task from the summary above")
      assert.include(third, "the only task")
      assert.isTrue(turn.events.some((e) => e.type === "session.compacted"))
    }).pipe(
      Effect.provide(
        testLoopLayer({
          root: tempRoot(),
          plugins: [tools],
          scripted: { model: { limit: { context: 1_000, output: 100 } } },
          steps: [
            [chunks.toolCall("c1", "echo", { text: "same" }), chunks.finish({ input: 950, output: 20 }, "tool-calls")],
            [chunks.text("Task: summary"), chunks.finish({ input: 300, output: 50 })],
            [chunks.text("continued"), chunks.finish({ input: 200, output: 10 })]
          ]
        })
      )
    )
  )

  it.live("an unknown agent is a clear error listing the agents", () =>
    Effect.gen(function* () {
      const error = yield* runTurn("hi", { agent: "nope" }).pipe(Effect.flip)
      assert.strictEqual(error.message, 'No agent "nope" can take a prompt. Available agents: build.')
    }).pipe(Effect.provide(testLoopLayer({ root: tempRoot(), steps: [] })))
  )

  it.live("the title agent names the session in the background", () =>
    Effect.gen(function* () {
      const turn = yield* runTurn("fix the login bug please", { title: true })
      yield* Effect.sleep("50 millis")
      const store = yield* SessionStore
      const session = yield* store.getSession(turn.sessionID)
      assert.strictEqual(session.title, "Fix login bug")
      const finish = allParts(turn).find((p): p is StepFinishPart => p.type === "step-finish")
      assert.isDefined(finish)
    }).pipe(
      Effect.provide(
        testLoopLayer({
          root: tempRoot(),
          steps: [
            (request) =>
              request.system[0]?.startsWith("Write a title")
                ? [chunks.text("Fix login bug"), chunks.finish(usage)]
                : [chunks.text("on it"), chunks.finish(usage)],
            (request) =>
              request.system[0]?.startsWith("Write a title")
                ? [chunks.text("Fix login bug"), chunks.finish(usage)]
                : [chunks.text("on it"), chunks.finish(usage)]
          ]
        })
      )
    )
  )
})

/** Keeps `LLM` referenced for readers: the scripted layer provides it. */
export type _LLM = typeof LLM

describe("prompts stored ahead of their turn (append, messageID)", () => {
  it.live(
    "a prompt appended while a turn runs is seen by that turn's next step; messageID answers a stored prompt",
    () =>
      Effect.gen(function* () {
        const store = yield* SessionStore
        const prompt = yield* SessionPrompt
        const session = yield* createSession({ title: "steer" })
        // The first step calls a tool; while it runs, the person adds a message.
        const running = yield* prompt
          .prompt({ sessionID: session.id, parts: [{ type: "text", text: "first" }], title: false })
          .pipe(Effect.forkChild({ startImmediately: true }))
        yield* Effect.sleep(Duration.millis(20))
        const steer = yield* prompt.append({ sessionID: session.id, parts: [{ type: "text", text: "also do this" }] })
        yield* Fiber.join(running)
        const requests = yield* (yield* ScriptedLLM).requests
        assert.strictEqual(requests.length, 2)
        assert.notInclude(JSON.stringify(requests[0]?.messages), "also do this")
        assert.include(JSON.stringify(requests[1]?.messages), "also do this", "the turn's second step sees it")
        const messages = yield* store.messages(session.id)
        const ids = messages.map((m) => m.info.id)
        assert.deepStrictEqual(ids, [...ids].sort(), "messages stay in ID order")
        assert.ok(messages.some((m) => m.info.id === steer.id && m.info.role === "user"))

        // A prompt stored now and answered later by ID: no second user message is stored.
        const later = yield* prompt.append({ sessionID: session.id, parts: [{ type: "text", text: "third" }] })
        const answer = yield* prompt.prompt({ sessionID: session.id, messageID: later.id, parts: [], title: false })
        assert.strictEqual(answer.info.role === "assistant" ? answer.info.parentID : undefined, later.id)
        const users = (yield* store.messages(session.id)).filter((m) => m.info.role === "user")
        assert.strictEqual(users.length, 3)
      }).pipe(
        Effect.provide(
          testLoopLayer({
            root: tempRoot(),
            plugins: [tools],
            scripted: { chunkDelayMs: 15 },
            steps: [echo("a"), done, done]
          })
        )
      )
  )
})
