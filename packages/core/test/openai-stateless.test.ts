/**
 * OpenAI's Responses API without stored responses: every request sends `store: false`, asks for
 * `reasoning.encrypted_content` and for reasoning summaries (`auto`), and keeps the per-session prompt cache key;
 * each reasoning item the model returns (its summary, its encrypted content) is kept on the stored reasoning part and
 * goes back whole in every later step of the turn, never as a reference to a stored item (which organisations with
 * zero data retention cannot use). Through the real loop (SessionPrompt, Processor, the LLM layer on config) against
 * a server on 127.0.0.1 speaking the Responses SSE wire format; `provider.openai.options.store: true` turns stored
 * responses back on.
 */
import { assert, describe, it } from "@effect/vitest"
import { definePlugin } from "@lathe/plugin"
import { Part, type ReasoningPart } from "@lathe/plugin/schema"
import { Effect, Layer, Schema } from "effect"
import { Config, type ConfigTestInput } from "../src/config/config.js"
import { Paths } from "../src/config/paths.js"
import { Bus } from "../src/contracts/bus.js"
import { PermissionNext } from "../src/contracts/permission-next.js"
import { Snapshot } from "../src/contracts/snapshot.js"
import { LLM } from "../src/llm/llm.js"
import { loopLayer } from "../src/loop/loop-layer.js"
import { Question } from "../src/loop/question.js"
import { Retry } from "../src/loop/retry.js"
import { Subagents } from "../src/loop/subagents.js"
import { Plugins } from "../src/plugin-host/plugins.js"
import { SessionStore } from "../src/store/session-store.js"
import { SessionWriter } from "../src/store/session-writer.js"
import { type ResponsesWireReply, startResponsesWire } from "../src/testing/wire-responses.js"
import { allParts, EchoTool, runTurn, tempRoot, toolParts } from "./loop-helpers.js"

const tools = definePlugin({ name: "stateless-tools", setup: () => ({ tools: [EchoTool] }) })

/** The agent loop for real (its model from `config`, on the real LLM layer); only the wire server is scripted. */
const openaiLoop = (config: ConfigTestInput) => {
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
    LLM.layerWith({ LATHE_DATA_DIR: root, OPENAI_API_KEY: "sk-oai-test" })
  ).pipe(Layer.provideMerge(services))
  return loopLayer().pipe(Layer.provideMerge(features))
}

/**
 * Three steps, each with a reasoning item: an `echo` call (with a summary), another call (reasoning with no summary
 * at all: its encrypted content must still go back), then the answer.
 */
const script: ReadonlyArray<ResponsesWireReply> = [
  {
    reasoning: { summary: ["Echo a first."], encrypted: "enc-step-1" },
    tool: { name: "echo", input: { text: "a" }, id: "call_a" }
  },
  { reasoning: { summary: [], encrypted: "enc-step-2" }, tool: { name: "echo", input: { text: "b" }, id: "call_b" } },
  { reasoning: { summary: ["Both echoed."], encrypted: "enc-step-3" }, text: "Echoed a and b." }
]

interface ResponsesBody {
  readonly store?: boolean
  readonly include?: ReadonlyArray<string>
  readonly reasoning?: { readonly summary?: string; readonly effort?: string }
  readonly prompt_cache_key?: string
  readonly input: ReadonlyArray<Record<string, unknown>>
}

const bodies = (server: { readonly requests: ReadonlyArray<{ readonly body: unknown }> }) =>
  server.requests.map((request) => request.body as ResponsesBody)

const reasoningItems = (body: ResponsesBody | undefined) => body?.input.filter((item) => item.type === "reasoning")

const serve = Effect.acquireRelease(
  Effect.promise(() => startResponsesWire(script)),
  (server) => Effect.promise(() => server.close())
)

describe("OpenAI Responses, stateless (store: false)", () => {
  it.live("store false, encrypted reasoning and summaries asked for; each reasoning item goes back whole", () =>
    Effect.gen(function* () {
      const server = yield* serve
      const config = { model: "openai/gpt-5", provider: { openai: { baseURL: server.url } } }
      const turn = yield* runTurn("echo a, then b").pipe(Effect.provide(openaiLoop(config)))

      assert.deepStrictEqual(
        toolParts(turn).map((part) => part.state.status),
        ["completed", "completed"]
      )
      const sent = bodies(server)
      assert.strictEqual(sent.length, 3)
      for (const body of sent) {
        assert.strictEqual(body.store, false)
        assert.deepStrictEqual(body.include, ["reasoning.encrypted_content"])
        assert.strictEqual(body.reasoning?.summary, "auto")
        assert.strictEqual(body.prompt_cache_key, turn.sessionID, "the prompt cache key stays the session's")
        assert.notInclude(JSON.stringify(body.input), "item_reference")
      }
      const first = {
        type: "reasoning",
        id: "rs_0",
        encrypted_content: "enc-step-1",
        summary: [{ type: "summary_text", text: "Echo a first." }]
      }
      const second = { type: "reasoning", id: "rs_1", encrypted_content: "enc-step-2", summary: [] }
      assert.deepStrictEqual(reasoningItems(sent[0]), [])
      assert.deepStrictEqual(reasoningItems(sent[1]), [first])
      assert.deepStrictEqual(reasoningItems(sent[2]), [first, second])
      // Each reasoning item sits before the call it led to, as the API wants it.
      const order = (sent[2]?.input ?? []).map((item) => item.id ?? item.call_id ?? item.type)
      assert.isBelow(order.indexOf("rs_0"), order.indexOf("call_a"))
      assert.isBelow(order.indexOf("rs_1"), order.indexOf("call_b"))

      // The summaries are the session's reasoning parts, which the UI shows; each keeps its encrypted content, and
      // that survives a store's JSON round trip.
      const reasoning = allParts(turn).filter((part): part is ReasoningPart => part.type === "reasoning")
      assert.deepStrictEqual(
        reasoning.map((part) => part.text),
        ["Echo a first.", "", "Both echoed."]
      )
      const stored = Schema.decodeUnknownSync(Part)(JSON.parse(JSON.stringify(reasoning[0]))) as ReasoningPart
      assert.deepStrictEqual(stored.metadata, {
        openai: { itemId: "rs_0", reasoningEncryptedContent: "enc-step-1" }
      })
      assert.strictEqual(turn.result.parts.find((part) => part.type === "text")?.text, "Echoed a and b.")
    }).pipe(Effect.scoped)
  )

  it.live("provider.openai.options.store: true turns stored responses back on", () =>
    Effect.gen(function* () {
      const server = yield* serve
      const config = { model: "openai/gpt-5", provider: { openai: { baseURL: server.url, options: { store: true } } } }
      yield* runTurn("echo a, then b").pipe(Effect.provide(openaiLoop(config)))

      const sent = bodies(server)
      assert.strictEqual(sent.length, 3)
      for (const body of sent) {
        assert.isUndefined(body.store, "the API's default (stored) applies")
        assert.isUndefined(body.include)
        assert.strictEqual(body.reasoning?.summary, "auto")
      }
      assert.deepInclude(sent[2]?.input ?? [], { type: "item_reference", id: "rs_0" })
      assert.deepStrictEqual(reasoningItems(sent[2]), [])
    }).pipe(Effect.scoped)
  )
})
