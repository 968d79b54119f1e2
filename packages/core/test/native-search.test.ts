/**
 * The model provider's own web search: when a step may search (`LLMRequest.nativeSearch`, set when the `websearch`
 * permission allows it outright), the request carries the provider's search tool — Anthropic's `web_search_20250305`
 * server tool, the OpenAI Responses `web_search` tool — in place of Lathe's `websearch` tool; otherwise, or with
 * config `websearch.native: false`, it does not. A search the provider ran goes back in later requests as the
 * provider's own call and result. Real SDKs against HTTP servers on 127.0.0.1 speaking each provider's wire format.
 */
import { assert, describe, it } from "@effect/vitest"
import type { AgentInfo, Rule } from "@lathe/plugin"
import { definePlugin } from "@lathe/plugin"
import type { MessageWithParts } from "@lathe/plugin/schema"
import type { ModelMessage } from "ai"
import { Effect, Layer, Stream } from "effect"
import { Config, type ConfigTestInput } from "../src/config/config.js"
import { Paths } from "../src/config/paths.js"
import { Bus } from "../src/contracts/bus.js"
import { PermissionNext } from "../src/contracts/permission-next.js"
import { Snapshot } from "../src/contracts/snapshot.js"
import { LLM, type LLMRequest, type ProviderEnv } from "../src/llm/llm.js"
import { toModelMessages } from "../src/llm/model-messages.js"
import { loopLayer } from "../src/loop/loop-layer.js"
import { nativeSearchAllowed } from "../src/loop/offered-tools.js"
import { Question } from "../src/loop/question.js"
import { Retry } from "../src/loop/retry.js"
import { Subagents } from "../src/loop/subagents.js"
import { Plugins } from "../src/plugin-host/plugins.js"
import { SessionStore } from "../src/store/session-store.js"
import { SessionWriter } from "../src/store/session-writer.js"
import { startWireServer, type WireFormat } from "../src/testing/scripted-wire.js"
import { EchoTool, runTurn, tempRoot } from "./loop-helpers.js"

const wireServer = (format: WireFormat) =>
  Effect.acquireRelease(
    Effect.promise(() => startWireServer(format, [{ text: "Done." }])),
    (server) => Effect.promise(() => server.close())
  )

const llmLayer = (config: ConfigTestInput, env: ProviderEnv) =>
  LLM.layerWith(env).pipe(Layer.provide(Config.layerTest(config)))

const schema = { type: "object" as const, properties: { query: { type: "string" as const } }, required: ["query"] }

/** One step offering `read` and Lathe's own `websearch` (a configured backend's). */
const step = (messages: ReadonlyArray<ModelMessage>, nativeSearch: boolean | undefined) =>
  Effect.gen(function* () {
    const llm = yield* LLM
    const model = yield* Effect.orDie(llm.resolve())
    const request: LLMRequest = {
      sessionID: "ses_search",
      model,
      system: ["You are Lathe."],
      messages,
      tools: {
        read: { description: "Read a file", inputSchema: schema },
        websearch: { description: "Search the web", inputSchema: schema }
      },
      abort: new AbortController().signal,
      ...(nativeSearch === undefined ? {} : { nativeSearch })
    }
    const events = yield* Stream.runCollect(llm.stream(request))
    assert.strictEqual([...events].at(-1)?.type, "finish")
  })

const prompt: ReadonlyArray<ModelMessage> = [{ role: "user", content: "What changed in zod 4.6?" }]

type Tools = ReadonlyArray<Record<string, unknown>>
const toolsOf = (body: unknown): Tools => (body as { tools?: Tools }).tools ?? []

const anthropic = (server: { readonly url: string }, extra: Record<string, unknown> = {}): ConfigTestInput => ({
  model: "anthropic/claude-sonnet-4-5",
  provider: { anthropic: { baseURL: server.url } },
  ...extra
})
const ANTHROPIC_ENV = { ANTHROPIC_API_KEY: "sk-ant-test" }

describe("the provider's own web search in the request", () => {
  it.effect("Anthropic: the web_search_20250305 server tool replaces Lathe's websearch when the step may search", () =>
    Effect.gen(function* () {
      const server = yield* wireServer("anthropic")
      yield* step(prompt, true).pipe(Effect.provide(llmLayer(anthropic(server), ANTHROPIC_ENV)))
      const tools = toolsOf(server.requests[0]?.body)
      assert.deepStrictEqual(
        tools.map((tool) => tool.name),
        ["web_search", "read"]
      )
      assert.deepInclude(tools[0], { type: "web_search_20250305", name: "web_search", max_uses: 5 })
      // Lathe's tools keep the prompt-cache mark on the last of them.
      assert.deepStrictEqual(tools[1]?.cache_control, { type: "ephemeral" })
    })
  )

  it.effect("Anthropic: not sent when the step may not search, nor with websearch.native false", () =>
    Effect.gen(function* () {
      const server = yield* wireServer("anthropic")
      yield* step(prompt, undefined).pipe(Effect.provide(llmLayer(anthropic(server), ANTHROPIC_ENV)))
      yield* step(prompt, true).pipe(
        Effect.provide(llmLayer(anthropic(server, { websearch: { native: false } }), ANTHROPIC_ENV))
      )
      for (const request of server.requests)
        assert.deepStrictEqual(
          toolsOf(request.body).map((tool) => [tool.name, tool.type ?? "custom"]),
          [
            ["read", "custom"],
            ["websearch", "custom"]
          ]
        )
    })
  )

  it.effect("OpenAI Responses: the hosted web_search tool replaces Lathe's websearch", () =>
    Effect.gen(function* () {
      const server = yield* wireServer("openai-responses")
      const config = { model: "openai/gpt-5", provider: { openai: { baseURL: server.url } } }
      yield* step(prompt, true).pipe(Effect.provide(llmLayer(config, { OPENAI_API_KEY: "sk-oai-test" })))
      assert.strictEqual(server.requests[0]?.path, "/v1/responses")
      const tools = toolsOf(server.requests[0]?.body)
      assert.deepStrictEqual(
        tools.map((tool) => tool.type),
        ["web_search", "function"]
      )
      assert.strictEqual(tools[1]?.name, "read")
    })
  )

  it.effect("a search the provider ran goes back as Anthropic's server_tool_use and web_search_tool_result", () =>
    Effect.gen(function* () {
      const server = yield* wireServer("anthropic")
      const results = [
        {
          type: "web_search_result",
          url: "https://zod.dev/v4",
          title: "Zod 4",
          pageAge: null,
          encryptedContent: "enc1"
        }
      ]
      const stored: ReadonlyArray<MessageWithParts> = [
        {
          info: {
            id: "msg_1",
            sessionID: "s",
            role: "user",
            time: { created: 1 },
            agent: "explore",
            model: { providerID: "anthropic", modelID: "claude-sonnet-4-5" }
          },
          parts: [{ id: "prt_1", sessionID: "s", messageID: "msg_1", type: "text", text: "What changed in zod 4.6?" }]
        },
        {
          info: {
            id: "msg_2",
            sessionID: "s",
            role: "assistant",
            parentID: "msg_1",
            agent: "explore",
            model: { providerID: "anthropic", modelID: "claude-sonnet-4-5" },
            path: { cwd: "/", root: "/" },
            time: { created: 2, completed: 3 },
            tokens: { input: 0, output: 0, reasoning: 0, cache: { read: 0, write: 0 } },
            cost: 0
          },
          parts: [
            {
              id: "prt_2",
              sessionID: "s",
              messageID: "msg_2",
              type: "tool",
              callID: "srvtoolu_1",
              tool: "web_search",
              state: {
                status: "completed",
                input: { query: "zod 4.6 changelog" },
                output: JSON.stringify(results),
                title: "web_search",
                metadata: { providerExecuted: true },
                time: { start: 2, end: 3 }
              }
            },
            { id: "prt_3", sessionID: "s", messageID: "msg_2", type: "text", text: "Zod 4.6 adds …" }
          ]
        },
        {
          info: {
            id: "msg_3",
            sessionID: "s",
            role: "user",
            time: { created: 4 },
            agent: "explore",
            model: { providerID: "anthropic", modelID: "claude-sonnet-4-5" }
          },
          parts: [{ id: "prt_4", sessionID: "s", messageID: "msg_3", type: "text", text: "And 4.7?" }]
        }
      ]
      const messages = toModelMessages(stored)
      // The provider's call and its result stay in the assistant message: no `tool` message for them.
      assert.deepStrictEqual(
        messages.map((message) => message.role),
        ["user", "assistant", "user"]
      )
      yield* step(messages, true).pipe(Effect.provide(llmLayer(anthropic(server), ANTHROPIC_ENV)))
      const body = server.requests[0]?.body as {
        messages: ReadonlyArray<{ role: string; content: ReadonlyArray<Record<string, unknown>> }>
      }
      const blocks = body.messages[1]?.content ?? []
      assert.deepStrictEqual(
        blocks.map((block) => block.type),
        ["server_tool_use", "web_search_tool_result", "text"]
      )
      assert.deepInclude(blocks[0], { id: "srvtoolu_1", name: "web_search", input: { query: "zod 4.6 changelog" } })
      assert.deepInclude(blocks[1], { tool_use_id: "srvtoolu_1" })
      assert.deepInclude(((blocks[1]?.content ?? []) as ReadonlyArray<unknown>)[0], {
        url: "https://zod.dev/v4",
        encrypted_content: "enc1"
      })
    })
  )
})

const agent = (tools: Record<string, boolean> = {}): AgentInfo => ({ name: "a", tools }) as unknown as AgentInfo
const rule = (permission: string, action: Rule["action"], pattern = "*"): Rule => ({ permission, pattern, action })

describe("whether a step may use the provider's search", () => {
  // The built-in defaults ask for websearch; the explore agent allows it.
  const defaults = [rule("*", "allow"), rule("websearch", "ask")]
  const explore = [...defaults, rule("*", "deny"), rule("websearch", "allow")]

  it("an ask (the default) keeps it off; an outright allow turns it on", () => {
    assert.isFalse(nativeSearchAllowed(agent(), defaults))
    assert.isTrue(nativeSearchAllowed(agent(), explore))
    assert.isTrue(nativeSearchAllowed(agent(), [...defaults, rule("websearch", "allow")]))
    assert.isFalse(nativeSearchAllowed(agent(), [...explore, rule("websearch", "deny")]))
  })

  it("a caller's ask holds for its subagent, and an agent with websearch switched off never gets it", () => {
    assert.isFalse(nativeSearchAllowed(agent(), explore, [defaults]))
    assert.isTrue(nativeSearchAllowed(agent(), explore, [[...defaults, rule("websearch", "allow")]]))
    assert.isFalse(nativeSearchAllowed(agent({ websearch: false }), explore))
  })
})

/** The agent loop for real on the LLM layer (its model from `config`); only the Anthropic wire server is scripted. */
const anthropicLoop = (config: ConfigTestInput) => {
  const root = tempRoot()
  const services = SessionWriter.layer.pipe(
    Layer.provideMerge(
      Layer.mergeAll(Paths.layerTest(root, {}), Config.layerTest(config), Bus.layer, SessionStore.memory)
    )
  )
  const tools = definePlugin({ name: "search-tools", setup: () => ({ tools: [EchoTool] }) })
  const features = Layer.mergeAll(
    Plugins.layer([tools]),
    Question.layer,
    Subagents.layer,
    PermissionNext.allowAll,
    Snapshot.disabled,
    Retry.layerTest(),
    LLM.layerWith({ LATHE_DATA_DIR: root, ...ANTHROPIC_ENV })
  ).pipe(Layer.provideMerge(services))
  return loopLayer().pipe(Layer.provideMerge(features))
}

describe("a turn sends the provider's search when the websearch permission allows it", () => {
  it.live("permission websearch: allow → web_search in the request; no rule (an ask) → not", () =>
    Effect.gen(function* () {
      const server = yield* wireServer("anthropic")
      yield* runTurn("search").pipe(
        Effect.provide(anthropicLoop(anthropic(server, { permission: { websearch: "allow" } })))
      )
      yield* runTurn("search").pipe(Effect.provide(anthropicLoop(anthropic(server))))
      const names = server.requests.map((request) => toolsOf(request.body).map((tool) => tool.name))
      assert.deepStrictEqual(names, [["web_search", "echo"], ["echo"]])
    }).pipe(Effect.scoped)
  )
})
