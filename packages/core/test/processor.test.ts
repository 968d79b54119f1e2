import { assert, describe, it } from "@effect/vitest"
import { definePlugin } from "@lathe/plugin"
import type { ReasoningPart, StepFinishPart, TextPart } from "@lathe/plugin/schema"
import { Effect, Layer } from "effect"
import { makeMemoryStore, SessionStore } from "../src/store/session-store.js"
import { chunks, ScriptedLLM, testLoopLayer } from "../src/testing/index.js"
import {
  AskTool,
  allParts,
  BoomTool,
  EchoTool,
  runTurn,
  SlowTool,
  slowToolStarted,
  tempRoot,
  toolParts
} from "./loop-helpers.js"

const tools = definePlugin({ name: "test-tools", setup: () => ({ tools: [EchoTool, BoomTool, SlowTool, AskTool] }) })
const usage = { input: 1_000, output: 200, reasoning: 50, cacheRead: 400, cacheWrite: 100 }

describe("Processor", () => {
  it.live("turns text, reasoning and a tool call into parts, runs the tool, and continues", () =>
    Effect.gen(function* () {
      const turn = yield* runTurn("say hi")
      const parts = allParts(turn)
      const reasoning = parts.find((p): p is ReasoningPart => p.type === "reasoning")
      assert.strictEqual(reasoning?.text, "let me think")
      assert.isNumber(reasoning?.time.end)
      assert.isAtLeast(reasoning?.time.end ?? 0, reasoning?.time.start ?? Infinity)
      const [call] = toolParts(turn)
      assert.strictEqual(call?.state.status, "completed")
      if (call?.state.status !== "completed") return
      assert.strictEqual(call.state.output, "echoed: hi")
      assert.strictEqual(call.state.title, "echo hi")
      assert.deepStrictEqual(call.state.input, { text: "hi" })
      assert.isAtLeast(call.state.time.end, call.state.time.start)
      const texts = parts.filter((p): p is TextPart => p.type === "text" && p.messageID !== turn.messages[0]?.info.id)
      assert.deepStrictEqual(
        texts.map((t) => t.text),
        ["Calling echo.", "Done: hi"]
      )
      // Tool lifecycle events in order, each with the state machine's status; `tool.pending` once per call.
      const lifecycle = turn.events.filter((e) => e.type.startsWith("tool.")).map((e) => e.type)
      assert.deepStrictEqual(lifecycle, ["tool.pending", "tool.running", "tool.completed"])
      // Two steps, two assistant messages; the second request carried the tool result.
      const requests = yield* (yield* ScriptedLLM).requests
      assert.strictEqual(requests.length, 2)
      const second = JSON.stringify(requests[1]?.messages)
      assert.include(second, '"type":"tool-result"')
      assert.include(second, "echoed: hi")
      assert.deepStrictEqual(
        turn.events.filter((e) => e.type === "step.started").map((e) => (e.type === "step.started" ? e.step : 0)),
        [1, 2]
      )
    }).pipe(
      Effect.provide(
        testLoopLayer({
          root: tempRoot(),
          plugins: [tools],
          steps: [
            [
              chunks.reasoning("let me think"),
              chunks.text("Calling echo."),
              chunks.toolCall("c1", "echo", { text: "hi" }),
              chunks.finish(usage, "tool-calls")
            ],
            [chunks.text("Done: hi"), chunks.finish({ input: 10, output: 3 })]
          ]
        })
      )
    )
  )

  it.live("records tokens from ai 7's nested usage and prices them", () =>
    Effect.gen(function* () {
      const turn = yield* runTurn("price it")
      const finish = allParts(turn).find((p): p is StepFinishPart => p.type === "step-finish")
      // input excludes cache (1000 - 400 - 100), output excludes reasoning (200 - 50).
      assert.deepStrictEqual(finish?.tokens, {
        input: 500,
        output: 150,
        reasoning: 50,
        cache: { read: 400, write: 100 }
      })
      // Prices per million: input 3, output 15 (reasoning billed as output), cache read 0.3, cache write 3.75.
      const expected = (500 * 3 + 200 * 15 + 400 * 0.3 + 100 * 3.75) / 1_000_000
      assert.closeTo(finish?.cost ?? 0, expected, 1e-12)
      const assistant = turn.result.info
      assert.strictEqual(assistant.role, "assistant")
      if (assistant.role !== "assistant") return
      assert.closeTo(assistant.cost, expected, 1e-12)
      assert.strictEqual(assistant.finish, "stop")
      assert.isNumber(assistant.time.completed)
    }).pipe(Effect.provide(testLoopLayer({ root: tempRoot(), steps: [[chunks.text("ok"), chunks.finish(usage)]] })))
  )

  it.live("a tool that throws becomes an error part whose message the model sees next step", () =>
    Effect.gen(function* () {
      const turn = yield* runTurn("boom")
      const [call] = toolParts(turn)
      assert.strictEqual(call?.state.status, "error")
      if (call?.state.status === "error") assert.strictEqual(call.state.error, "kaboom")
      const requests = yield* (yield* ScriptedLLM).requests
      assert.include(JSON.stringify(requests[1]?.messages), '"type":"error-text","value":"kaboom"')
    }).pipe(
      Effect.provide(
        testLoopLayer({
          root: tempRoot(),
          plugins: [tools],
          steps: [
            [chunks.toolCall("c1", "boom", {}), chunks.finish(usage, "tool-calls")],
            [chunks.text("It failed."), chunks.finish(usage)]
          ]
        })
      )
    )
  )

  it.live("invalid tool input and unknown tools become errors the model can act on", () =>
    Effect.gen(function* () {
      const turn = yield* runTurn("bad input")
      const [bad, unknown] = toolParts(turn)
      assert.strictEqual(bad?.state.status, "error")
      if (bad?.state.status === "error")
        assert.strictEqual(
          bad.state.error,
          "The echo tool was called with invalid arguments:\n- text: Invalid input: expected string, received number\n" +
            "Rewrite the input so it satisfies the tool's schema and call it again."
        )
      assert.strictEqual(unknown?.state.status, "error")
      if (unknown?.state.status === "error") assert.match(unknown.state.error, /^There is no tool named "nope"\./)
    }).pipe(
      Effect.provide(
        testLoopLayer({
          root: tempRoot(),
          plugins: [tools],
          steps: [
            [
              chunks.toolCall("c1", "echo", { text: 5 }),
              chunks.toolCall("c2", "nope", {}),
              chunks.finish(usage, "tool-calls")
            ],
            [chunks.text("ok"), chunks.finish(usage)]
          ]
        })
      )
    )
  )

  it.live("abort mid-tool: the running tool ends as error 'aborted' and the turn stops", () =>
    Effect.gen(function* () {
      const controller = new AbortController()
      // Once the tool runs (a fixed 150 ms was too short on a loaded CI machine: the tool had not started yet).
      slowToolStarted.current = () => setTimeout(() => controller.abort(), 20)
      const turn = yield* runTurn("wait", { abort: controller.signal }).pipe(
        Effect.ensuring(Effect.sync(() => (slowToolStarted.current = undefined)))
      )
      const [call] = toolParts(turn)
      assert.strictEqual(call?.state.status, "error")
      if (call?.state.status === "error") assert.strictEqual(call.state.error, "aborted")
      const info = turn.result.info
      assert.strictEqual(info.role === "assistant" ? info.error?.name : undefined, "Aborted")
      assert.strictEqual((yield* (yield* ScriptedLLM).requests).length, 1)
      assert.strictEqual(turn.events.at(-1)?.type, "session.idle")
    }).pipe(
      Effect.provide(
        testLoopLayer({
          root: tempRoot(),
          plugins: [tools],
          steps: [[chunks.toolCall("c1", "slow", {}), chunks.finish(usage, "tool-calls")], [chunks.text("never")]]
        })
      )
    )
  )

  it.live("a stream that ends mid tool-input leaves no tool pending", () =>
    Effect.gen(function* () {
      const error = yield* runTurn("cut").pipe(Effect.flip)
      assert.strictEqual(error._tag, "ProviderError")
      const store = yield* SessionStore
      const [session] = yield* store.listSessions()
      const parts = (yield* store.messages(session?.id ?? "")).flatMap((m) => m.parts)
      const tools = parts.flatMap((p) => (p.type === "tool" ? [p.state] : []))
      assert.strictEqual(tools.length, 1, "earlier attempts' parts were removed; the last attempt's call remains")
      assert.deepStrictEqual(
        tools.map((state) => (state.status === "error" ? state.error : state.status)),
        ["aborted"]
      )
      const last = (yield* store.messages(session?.id ?? "")).at(-1)?.info
      assert.strictEqual(last?.role === "assistant" ? last.error?.name : "", "ProviderError")
    }).pipe(
      Effect.provide(
        testLoopLayer({
          root: tempRoot(),
          plugins: [tools],
          // Three attempts cut mid-input, then the zero-delay test policy gives up after 3 retries.
          steps: Array.from({ length: 4 }, () => [
            { type: "tool-input-start" as const, id: "c1", toolName: "echo" },
            { type: "tool-input-delta" as const, id: "c1", delta: '{"te' }
          ])
        })
      )
    )
  )

  it.live("the text.complete hook changes a finished text part", () =>
    Effect.gen(function* () {
      const turn = yield* runTurn("hook")
      const text = allParts(turn).find((p): p is TextPart => p.type === "text" && p.text.startsWith("Hello"))
      assert.strictEqual(text?.text, "Hello world [checked]")
    }).pipe(
      Effect.provide(
        testLoopLayer({
          root: tempRoot(),
          plugins: [
            definePlugin({
              name: "checker",
              setup: () => ({
                "text.complete": (_input, output) => {
                  output.text = `${output.text} [checked]`
                }
              })
            })
          ],
          steps: [[chunks.text("Hello world"), chunks.finish(usage)]]
        })
      )
    )
  )

  it.live("tool.before changes a call's arguments and tool.after its result, in that order", () => {
    const seen: Array<string> = []
    return Effect.gen(function* () {
      const turn = yield* runTurn("hooks")
      const [call] = toolParts(turn)
      assert.strictEqual(call?.state.status, "completed")
      if (call?.state.status !== "completed") return
      assert.deepStrictEqual(call.state.input, { text: "rewritten" })
      assert.strictEqual(call.state.output, "echoed: rewritten [after]")
      assert.strictEqual(call.state.metadata.audited, true)
      assert.deepStrictEqual(seen, ["before echo", "after echo rewritten"])
    }).pipe(
      Effect.provide(
        testLoopLayer({
          root: tempRoot(),
          plugins: [
            tools,
            definePlugin({
              name: "auditor",
              setup: () => ({
                "tool.before": (input, output) => {
                  seen.push(`before ${input.tool}`)
                  output.args = { ...output.args, text: "rewritten" }
                },
                "tool.after": (input, output) => {
                  seen.push(`after ${input.tool} ${String(input.args.text)}`)
                  output.output = `${output.output} [after]`
                  output.metadata = { ...output.metadata, audited: true }
                }
              })
            })
          ],
          steps: [
            [chunks.toolCall("c1", "echo", { text: "original" }), chunks.finish(usage, "tool-calls")],
            [chunks.text("ok"), chunks.finish(usage)]
          ]
        })
      )
    )
  })

  it.live("a provider-executed tool is not run by Lathe: its call and result come from the stream", () =>
    Effect.gen(function* () {
      const turn = yield* runTurn("search the web")
      const [call] = toolParts(turn)
      assert.strictEqual(call?.tool, "web_search")
      assert.strictEqual(call?.state.status, "completed")
      if (call?.state.status !== "completed") return
      assert.strictEqual(call.state.output, '{"hits":["lathe.dev"]}')
      assert.deepStrictEqual(call.state.metadata, { providerExecuted: true })
    }).pipe(
      Effect.provide(
        testLoopLayer({
          root: tempRoot(),
          steps: [
            [
              {
                type: "tool-call",
                toolCallId: "ws1",
                toolName: "web_search",
                input: JSON.stringify({ query: "lathe" }),
                providerExecuted: true
              },
              { type: "tool-result", toolCallId: "ws1", toolName: "web_search", result: { hits: ["lathe.dev"] } },
              chunks.text("Found it."),
              chunks.finish(usage)
            ]
          ]
        })
      )
    )
  )

  it.live("a mutating tool call's result is written out before it is announced; a read-only one's is batched", () => {
    // What reached the store, in order: "put <tool> <status>" and "flush" (the processor flushes, then publishes).
    const log: Array<string> = []
    const inner = makeMemoryStore()
    const store = Layer.succeed(
      SessionStore,
      SessionStore.of({
        ...inner,
        putPart: (part) =>
          Effect.sync(() => {
            if (part.type === "tool") log.push(`put ${part.tool} ${part.state.status}`)
          }).pipe(Effect.andThen(inner.putPart(part))),
        flush: Effect.sync(() => void log.push("flush"))
      })
    )
    return Effect.gen(function* () {
      const turn = yield* runTurn("write then echo")
      assert.deepStrictEqual(turn.events.flatMap((e) => (e.type === "tool.completed" ? [e.tool] : [])).sort(), [
        "echo",
        "echo",
        "guarded"
      ])
      const guarded = log.indexOf("put guarded completed")
      assert.isAtLeast(guarded, 0, log.join(" | "))
      assert.strictEqual(log[guarded + 1], "flush", log.join(" | "))
      const echo = log.indexOf("put echo completed")
      assert.isAtLeast(echo, 0, log.join(" | "))
      assert.notStrictEqual(log[echo + 1], "flush", log.join(" | "))
    }).pipe(
      Effect.provide(
        testLoopLayer({
          root: tempRoot(),
          plugins: [tools],
          storeLayer: store,
          steps: [
            [
              chunks.toolCall("c1", "echo", { text: "hi" }),
              chunks.toolCall("c2", "guarded", { path: "a.ts" }),
              chunks.toolCall("c3", "echo", { text: "bye" }),
              chunks.finish(usage, "tool-calls")
            ],
            [chunks.text("done"), chunks.finish(usage)]
          ]
        })
      )
    )
  })
})
