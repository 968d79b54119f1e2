/**
 * Gemini 3 signs its function calls (`thoughtSignature`) and wants each signature back on the same call in the next
 * request; without it the SDK sends the `skip_thought_signature_validator` placeholder and the model's reasoning
 * does not carry over across tool steps. Through the real loop (SessionPrompt, Processor, the LLM layer on config)
 * against wire servers on 127.0.0.1 (the Gemini API, and Google's OpenAI-compatible endpoint, which signs a call in
 * `extra_content`): the signature is kept on the stored tool part and sent back with the call. The part's new field
 * is optional (older sessions load) and survives a store's JSON round trip.
 */
import { assert, describe, it } from "@effect/vitest"
import { definePlugin } from "@lathe/plugin"
import type { MessageWithParts } from "@lathe/plugin/schema"
import { Part, type ToolPart } from "@lathe/plugin/schema"
import { Effect, Layer, Schema } from "effect"
import { Config, type ConfigTestInput } from "../src/config/config.js"
import { Paths } from "../src/config/paths.js"
import { Bus } from "../src/contracts/bus.js"
import { PermissionNext } from "../src/contracts/permission-next.js"
import { Snapshot } from "../src/contracts/snapshot.js"
import { LLM } from "../src/llm/llm.js"
import { toModelMessages } from "../src/llm/model-messages.js"
import { loopLayer } from "../src/loop/loop-layer.js"
import { Question } from "../src/loop/question.js"
import { Retry } from "../src/loop/retry.js"
import { Subagents } from "../src/loop/subagents.js"
import { Plugins } from "../src/plugin-host/plugins.js"
import { SessionStore } from "../src/store/session-store.js"
import { SessionWriter } from "../src/store/session-writer.js"
import { startChatWire } from "../src/testing/wire-chat.js"
import { type GeminiScript, startGeminiServer } from "../src/testing/wire-gemini.js"
import { EchoTool, runTurn, tempRoot, toolParts } from "./loop-helpers.js"

const SIGNATURE = "CiQB0e2Kb7sig-of-the-echo-call=="
const SKIP = "skip_thought_signature_validator"

const tools = definePlugin({ name: "signature-tools", setup: () => ({ tools: [EchoTool] }) })

/** The agent loop for real (its model from `config`, on the real LLM layer); only the wire server is scripted. */
const geminiLoop = (config: ConfigTestInput) => {
  const root = tempRoot()
  const services = SessionWriter.layer.pipe(
    Layer.provideMerge(
      Layer.mergeAll(Paths.layerTest(root, {}), Config.layerTest(config), Bus.layer, SessionStore.memory)
    )
  )
  const features = Layer.mergeAll(
    Plugins.layer([tools]),
    Question.layer,
    Subagents.layer,
    PermissionNext.allowAll,
    Snapshot.disabled,
    Retry.layerTest(),
    LLM.layerWith({ LATHE_DATA_DIR: root })
  ).pipe(Layer.provideMerge(services))
  return loopLayer().pipe(Layer.provideMerge(features))
}

const geminiServer = (script: GeminiScript) =>
  Effect.acquireRelease(
    Effect.promise(() => startGeminiServer(script)),
    (server) => Effect.promise(() => server.close())
  )

interface GeminiBody {
  readonly contents: ReadonlyArray<{ readonly role: string; readonly parts: ReadonlyArray<Record<string, unknown>> }>
}

/** A signed `echo` call, then the answer. */
const script: GeminiScript = [
  { thought: "Echo it first.", tool: { name: "echo", input: { text: "hi" }, signature: SIGNATURE } },
  { text: "Echoed." }
]

describe("Gemini 3 thought signatures", () => {
  it.live("a signed function call goes back with its signature on the next step (no placeholder)", () =>
    Effect.gen(function* () {
      const server = yield* geminiServer(script)
      const config = {
        model: "google/gemini-3.1-pro-preview",
        provider: { google: { baseURL: `${server.origin}/v1beta`, apiKey: "AIza-test-key" } }
      }
      const turn = yield* runTurn("echo hi").pipe(Effect.provide(geminiLoop(config)))

      const [call] = toolParts(turn)
      assert.strictEqual(call?.state.status, "completed")

      assert.strictEqual(server.requests.length, 2)
      const body = server.requests[1]?.body as GeminiBody
      const calls = body.contents.flatMap((content) => content.parts.filter((part) => "functionCall" in part))
      assert.strictEqual(calls.length, 1)
      assert.deepInclude(calls[0], { functionCall: { id: call?.callID, name: "echo", args: { text: "hi" } } })
      assert.strictEqual(calls[0]?.thoughtSignature, SIGNATURE, "the call carries its own signature back")
      assert.notInclude(JSON.stringify(body), SKIP)
      assert.deepStrictEqual(call?.providerMetadata, { google: { thoughtSignature: SIGNATURE } }, "kept on the part")
    }).pipe(Effect.scoped)
  )

  it.live("through Google's OpenAI-compatible endpoint: the call's extra_content signature goes back", () =>
    Effect.gen(function* () {
      const server = yield* Effect.acquireRelease(
        Effect.promise(() =>
          startChatWire("openai", [
            { tool: { name: "echo", input: { text: "hi" }, signature: SIGNATURE } },
            { text: "Echoed." }
          ])
        ),
        (server) => Effect.promise(() => server.close())
      )
      const config = {
        model: "gemini-openai/gemini-3-flash-preview",
        provider: {
          "gemini-openai": {
            type: "openai-compatible" as const,
            baseURL: server.url,
            apiKey: "AIza-test-key",
            models: { "gemini-3-flash-preview": {} }
          }
        }
      }
      const turn = yield* runTurn("echo hi").pipe(Effect.provide(geminiLoop(config)))

      const [call] = toolParts(turn)
      assert.strictEqual(call?.state.status, "completed")
      assert.strictEqual(server.requests.length, 2)
      const body = server.requests[1]?.body as ChatBody
      const calls = body.messages.flatMap((message) => message.tool_calls ?? [])
      assert.strictEqual(calls.length, 1)
      assert.deepInclude(calls[0], { id: call?.callID, extra_content: { google: { thought_signature: SIGNATURE } } })
    }).pipe(Effect.scoped)
  )
})

interface ChatBody {
  readonly messages: ReadonlyArray<{ readonly role: string; readonly tool_calls?: ReadonlyArray<object> }>
}

describe("the stored tool part", () => {
  const ids = { sessionID: "ses_1", messageID: "msg_2" }
  const completed = {
    status: "completed",
    input: { text: "hi" },
    output: "echoed: hi",
    title: "echo hi",
    metadata: {},
    time: { start: 1, end: 2 }
  } as const
  const stored = { id: "prt_1", ...ids, type: "tool", callID: "call_1", tool: "echo", state: completed }
  const history = (part: Part): ReadonlyArray<MessageWithParts> => [
    {
      info: {
        id: "msg_2",
        sessionID: "ses_1",
        role: "assistant",
        parentID: "msg_1",
        agent: "build",
        model: { providerID: "google", modelID: "gemini-3.1-pro-preview" },
        path: { cwd: "/tmp", root: "/tmp" },
        tokens: { input: 0, output: 0, reasoning: 0, cache: { read: 0, write: 0 } },
        cost: 0,
        time: { created: 1 }
      },
      parts: [part]
    }
  ]
  const toolCall = (messages: ReadonlyArray<MessageWithParts>) =>
    toModelMessages(messages)
      .flatMap((message) => (message.role === "assistant" && Array.isArray(message.content) ? message.content : []))
      .find((content) => content.type === "tool-call")

  it("a part written before the field existed loads, and its call goes without provider options", () => {
    const part = Schema.decodeUnknownSync(Part)(JSON.parse(JSON.stringify(stored)))
    assert.isUndefined((part as ToolPart).providerMetadata)
    const call = toolCall(history(part))
    assert.deepStrictEqual(call, { type: "tool-call", toolCallId: "call_1", toolName: "echo", input: { text: "hi" } })
  })

  it("the provider metadata survives a store's JSON round trip and goes back as the call's provider options", () => {
    const signed = { ...stored, providerMetadata: { google: { thoughtSignature: SIGNATURE } } }
    const part = Schema.decodeUnknownSync(Part)(JSON.parse(JSON.stringify(signed)))
    assert.deepStrictEqual((part as ToolPart).providerMetadata, { google: { thoughtSignature: SIGNATURE } })
    const call = toolCall(history(part))
    assert.deepStrictEqual(call?.type === "tool-call" ? call.providerOptions : undefined, {
      google: { thoughtSignature: SIGNATURE }
    })
  })
})
