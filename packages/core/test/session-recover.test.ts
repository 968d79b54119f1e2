import { assert, describe, it } from "@effect/vitest"
import type { AssistantMessage, Part, ToolPart, UserMessage } from "@lathe/plugin/schema"
import { Effect } from "effect"
import { toModelMessages } from "../src/llm/model-messages.js"
import { SessionPrompt } from "../src/loop/session-prompt.js"
import { createSession } from "../src/store/session.js"
import { INTERRUPTED_MESSAGE_ERROR, INTERRUPTED_TOOL_ERROR, recoverSession } from "../src/store/session-recover.js"
import { SessionStore } from "../src/store/session-store.js"
import { chunks, ScriptedLLM, testLayer, testLoopLayer } from "../src/testing/index.js"
import { tempRoot } from "./loop-helpers.js"

const tokens = { input: 0, output: 0, reasoning: 0, cache: { read: 0, write: 0 } }

/**
 * Stores what a process killed in the middle of a step leaves: a finished earlier step, then an assistant message
 * never completed, with streamed text, open reasoning, a running call and a call whose input was still streaming.
 */
const seedCrashedStep = (sessionID: string) =>
  Effect.gen(function* () {
    const store = yield* SessionStore
    const user: UserMessage = {
      id: "msg_01",
      sessionID,
      role: "user",
      time: { created: 1 },
      agent: "build",
      model: { providerID: "scripted", modelID: "scripted" }
    }
    const assistant = (id: string, completed?: number): AssistantMessage => ({
      id,
      sessionID,
      role: "assistant",
      parentID: user.id,
      agent: "build",
      model: { providerID: "scripted", modelID: "scripted" },
      path: { cwd: "/", root: "/" },
      time: completed === undefined ? { created: 2 } : { created: 2, completed },
      tokens,
      cost: 0
    })
    const ids = (messageID: string, id: string) => ({ id, sessionID, messageID })
    const parts: Array<Part> = [
      { ...ids("msg_01", "prt_01"), type: "text", text: "run the tests" },
      {
        ...ids("msg_02", "prt_02"),
        type: "tool",
        callID: "call_done",
        tool: "echo",
        state: {
          status: "completed",
          input: { text: "a" },
          output: "a",
          title: "echo",
          metadata: {},
          time: { start: 2, end: 3 }
        }
      },
      { ...ids("msg_03", "prt_03"), type: "reasoning", text: "Thinking about", time: { start: 4 } },
      { ...ids("msg_03", "prt_04"), type: "text", text: "Running the tests now", time: { start: 5 } },
      {
        ...ids("msg_03", "prt_05"),
        type: "tool",
        callID: "call_running",
        tool: "bash",
        state: { status: "running", input: { command: "sleep 60" }, time: { start: 6 } }
      },
      {
        ...ids("msg_03", "prt_06"),
        type: "tool",
        callID: "call_pending",
        tool: "read",
        state: { status: "pending", input: {}, raw: '{"filePa' }
      }
    ]
    yield* store.putMessage(user)
    yield* store.putMessage(assistant("msg_02", 3))
    yield* store.putMessage(assistant("msg_03"))
    for (const part of parts) yield* store.putPart(part)
    yield* store.flush
  })

const toolsOf = (parts: ReadonlyArray<Part>) => parts.filter((part): part is ToolPart => part.type === "tool")

describe("recoverSession", () => {
  it.effect("closes what a dead process left open, keeps what was streamed, and is idempotent", () =>
    Effect.gen(function* () {
      const store = yield* SessionStore
      const session = yield* createSession()
      yield* seedCrashedStep(session.id)
      assert.deepStrictEqual(yield* recoverSession(session.id), { tools: 2, messages: 1 })
      const messages = yield* store.messages(session.id)
      const [, done, open] = messages
      assert.deepStrictEqual(done?.info.role === "assistant" ? done.info.error : "", undefined)
      const info = open?.info
      assert.strictEqual(info?.role === "assistant" ? info.error?.message : "", INTERRUPTED_MESSAGE_ERROR)
      assert.isDefined(info?.role === "assistant" ? info.time.completed : undefined)
      const states = toolsOf(messages.flatMap((m) => m.parts)).map((part) => part.state)
      assert.deepStrictEqual(
        states.map((state) => [state.status, state.status === "error" ? state.error : ""]),
        [
          ["completed", ""],
          ["error", INTERRUPTED_TOOL_ERROR],
          ["error", INTERRUPTED_TOOL_ERROR]
        ]
      )
      const running = states[1]
      assert.strictEqual(running?.status === "error" ? running.time.start : -1, 6)
      for (const part of open?.parts ?? [])
        if (part.type === "text" || part.type === "reasoning") assert.isDefined(part.time?.end, part.id)

      // Every call has its result, and the streamed text is still there.
      const model = toModelMessages(messages)
      const calls = model.flatMap((m) =>
        m.role === "assistant" && typeof m.content !== "string"
          ? m.content.flatMap((c) => (c.type === "tool-call" ? [c.toolCallId] : []))
          : []
      )
      const results = model.flatMap((m) =>
        m.role === "tool" ? m.content.flatMap((c) => (c.type === "tool-result" ? [c.toolCallId] : [])) : []
      )
      assert.deepStrictEqual(calls, ["call_done", "call_running", "call_pending"])
      assert.deepStrictEqual(results, calls)
      assert.include(JSON.stringify(model), "Running the tests now")
      assert.include(JSON.stringify(model), INTERRUPTED_TOOL_ERROR)

      assert.deepStrictEqual(yield* recoverSession(session.id), { tools: 0, messages: 0 })
    }).pipe(Effect.provide(testLayer({ root: tempRoot() })))
  )

  it.effect("a new prompt on a crashed session sends the model a history where the open calls have results", () =>
    Effect.gen(function* () {
      const session = yield* createSession()
      yield* seedCrashedStep(session.id)
      const prompt = yield* SessionPrompt
      yield* prompt.prompt({ sessionID: session.id, parts: [{ type: "text", text: "go on" }], title: false })
      const [request] = yield* (yield* ScriptedLLM).requests
      const sent = JSON.stringify(request?.messages)
      assert.include(sent, '"toolCallId":"call_running"')
      assert.include(sent, INTERRUPTED_TOOL_ERROR)
      assert.include(sent, "go on")
    }).pipe(
      Effect.provide(
        testLoopLayer({ root: tempRoot(), steps: [[chunks.text("resumed"), chunks.finish({ input: 1, output: 1 })]] })
      )
    )
  )
})
