import { mkdtemp, rm } from "node:fs/promises"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Stream } from "effect"
import { TestClock } from "effect/testing"
import type { ModelInfo } from "../src/catalog/model-info.js"
import { Config, type ConfigTestInput } from "../src/config/config.js"
import { Paths } from "../src/config/paths.js"
import { LLM, type LLMEvent, type LLMRequest, type ProviderEnv } from "../src/llm/llm.js"
import { type ServerScript, startScriptedServer } from "../src/testing/scripted-server.js"

const scriptedServer = (script: ServerScript) =>
  Effect.acquireRelease(
    Effect.promise(() => startScriptedServer(script)),
    (server) => Effect.promise(() => server.close())
  )

const llmLayer = (config: ConfigTestInput, env: ProviderEnv = {}) =>
  LLM.layerWith(env).pipe(Layer.provide(Config.layerTest(config)))

const local = (url: string): ConfigTestInput => ({
  model: "local/qwen3-coder",
  provider: { local: { type: "openai-compatible", baseURL: url, apiKey: "sk-local", headers: { "x-team": "lathe" } } }
})

const request = (model: ModelInfo, abort = new AbortController().signal): LLMRequest => ({
  sessionID: "ses_1",
  model,
  system: ["You are terse."],
  messages: [{ role: "user", content: "read a.txt" }],
  tools: {
    read: {
      description: "Read a file",
      inputSchema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] }
    }
  },
  temperature: 0.2,
  abort
})

/** Resolves the default model and streams one step, collecting the events. */
const step = (abort?: AbortSignal) =>
  Effect.gen(function* () {
    const llm = yield* LLM
    const model = yield* Effect.orDie(llm.resolve())
    return yield* Stream.runCollect(llm.stream(request(model, abort)))
  })

const types = (events: ReadonlyArray<LLMEvent>) => events.map((e) => e.type)

describe("LLM.layer with the real openai-compatible provider", () => {
  it.effect("streams reasoning, text and a tool call, with usage mapped", () =>
    Effect.gen(function* () {
      const server = yield* scriptedServer([
        {
          steps: [{ reasoning: "Let me look." }, { text: "Reading it." }, { tool: "read", input: { path: "a.txt" } }],
          usage: { input: 120, output: 30, cached: 100, reasoning: 8 }
        }
      ])
      const events = yield* step().pipe(Effect.provide(llmLayer(local(server.url))))
      const seen = types(events)
      for (const t of [
        "start",
        "reasoning-delta",
        "text-delta",
        "tool-input-delta",
        "tool-call",
        "finish-step",
        "finish"
      ])
        assert.include(seen, t)
      assert.notInclude(seen, "tool-result", "tools are never executed by the LLM layer")
      const call = events.find((e) => e.type === "tool-call")
      assert.deepStrictEqual(call?.type === "tool-call" ? [call.toolName, call.input] : [], ["read", { path: "a.txt" }])
      const text = events.flatMap((e) => (e.type === "text-delta" ? [e.text] : [])).join("")
      assert.strictEqual(text, "Reading it.")
      const finish = events.at(-1)
      assert.strictEqual(finish?.type, "finish")
      if (finish?.type === "finish") {
        assert.strictEqual(finish.finishReason, "tool-calls")
        assert.strictEqual(finish.totalUsage.inputTokens, 120)
        assert.strictEqual(finish.totalUsage.inputTokenDetails.cacheReadTokens, 100)
        assert.strictEqual(finish.totalUsage.outputTokenDetails.reasoningTokens, 8)
      }
      const sent = server.requests[0]
      assert.strictEqual(sent?.path, "/v1/chat/completions")
      assert.strictEqual(sent?.headers.authorization, "Bearer sk-local")
      assert.strictEqual(sent?.headers["x-team"], "lathe")
      const body = sent?.body as { model: string; stream: boolean; temperature: number; messages: Array<unknown> }
      assert.strictEqual(body.model, "qwen3-coder")
      assert.strictEqual(body.stream, true)
      assert.strictEqual(body.temperature, 0.2)
      assert.deepStrictEqual(body.messages[0], { role: "system", content: "You are terse." })
      assert.strictEqual(server.requests.length, 1, "no SDK-level retry")
    })
  )

  it.effect("events the model's stream has ready come together: a few batches, the same events in order", () =>
    Effect.gen(function* () {
      const server = yield* scriptedServer([
        { steps: [{ text: "Reading it." }, { tool: "read", input: { path: "a.txt" } }] },
        { steps: [{ text: "Reading it." }, { tool: "read", input: { path: "a.txt" } }] }
      ])
      const layer = llmLayer(local(server.url))
      const one = yield* step().pipe(Effect.provide(layer))
      const batches = yield* Effect.gen(function* () {
        const llm = yield* LLM
        const model = yield* Effect.orDie(llm.resolve())
        return yield* Stream.runCollect(Stream.chunks(llm.stream(request(model))))
      }).pipe(Effect.provide(layer))
      // The whole reply is written at once: its events do not cost the consumer a wait each.
      assert.isBelow(batches.length, one.length / 2, `${batches.length} batches for ${one.length} events`)
      assert.deepStrictEqual(types(batches.flat()), types(one))
      assert.strictEqual(types(one)[0], "start")
      assert.strictEqual(types(one).at(-1), "finish")
    })
  )

  it.effect("429 with retry-after: 2 is RateLimited with 2000 ms, and the SDK does not retry", () =>
    Effect.gen(function* () {
      const server = yield* scriptedServer([{ type: "error", status: 429, headers: { "retry-after": "2" } }])
      const error = yield* step().pipe(Effect.provide(llmLayer(local(server.url))), Effect.flip)
      assert.deepStrictEqual(error.reason, { _tag: "RateLimited", retryAfterMs: 2000 })
      assert.include(error.message, "local/qwen3-coder is rate-limited (HTTP 429)")
      assert.strictEqual(server.requests.length, 1)
    })
  )

  it.effect("an HTTP-date retry-after counts from the Clock's now", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(Date.parse("2026-11-22T10:00:00Z"))
      const retryAfter = "Sun, 22 Nov 2026 10:00:45 GMT"
      const server = yield* scriptedServer([{ type: "error", status: 429, headers: { "retry-after": retryAfter } }])
      const error = yield* step().pipe(Effect.provide(llmLayer(local(server.url))), Effect.flip)
      assert.deepStrictEqual(error.reason, { _tag: "RateLimited", retryAfterMs: 45_000 })
    })
  )

  it.effect("a garbage retry-after gives no hint", () =>
    Effect.gen(function* () {
      const server = yield* scriptedServer([{ type: "error", status: 429, headers: { "retry-after": "soon-ish" } }])
      const error = yield* step().pipe(Effect.provide(llmLayer(local(server.url))), Effect.flip)
      assert.deepStrictEqual(error.reason, { _tag: "RateLimited" })
    })
  )

  it.effect("401 is Auth, naming the provider and the config key to fix", () =>
    Effect.gen(function* () {
      const server = yield* scriptedServer([
        { type: "error", status: 401, body: { error: { message: "Invalid API key", type: "invalid_request_error" } } }
      ])
      const error = yield* step().pipe(Effect.provide(llmLayer(local(server.url))), Effect.flip)
      assert.deepStrictEqual(error.reason, { _tag: "Auth" })
      assert.strictEqual(
        error.message,
        `Provider "local" rejected the key in provider.local.apiKey (HTTP 401) at ${server.url}/chat/completions: ` +
          "Invalid API key. " +
          'To fix it, set provider.local.apiKey in lathe.json (for example "{env:MY_KEY}").'
      )
    })
  )

  it.effect("a socket reset in the middle of a tool call is StreamCut, after the events before it", () =>
    Effect.gen(function* () {
      const server = yield* scriptedServer([
        { type: "cut", steps: [{ text: "Reading" }, { tool: "read", input: { path: "a.txt" } }] }
      ])
      const seen: Array<string> = []
      const error = yield* Effect.gen(function* () {
        const llm = yield* LLM
        const model = yield* Effect.orDie(llm.resolve())
        return yield* Stream.runForEach(llm.stream(request(model)), (e) => Effect.sync(() => seen.push(e.type)))
      }).pipe(Effect.provide(llmLayer(local(server.url))), Effect.flip)
      assert.deepStrictEqual(error.reason, { _tag: "StreamCut" })
      assert.include(error.message, `${server.url}/chat/completions`)
      assert.include(seen, "tool-input-delta")
      assert.notInclude(seen, "tool-call")
      assert.notInclude(seen, "finish")
    })
  )

  it.effect("connection refused is StreamCut with the URL", () =>
    Effect.gen(function* () {
      const port = yield* Effect.promise(
        () =>
          new Promise<number>((resolve) => {
            const probe = createServer().listen(0, "127.0.0.1", () => {
              const address = probe.address()
              probe.close(() => resolve(typeof address === "object" && address ? address.port : 0))
            })
          })
      )
      const url = `http://127.0.0.1:${port}/v1`
      const error = yield* step().pipe(Effect.provide(llmLayer(local(url))), Effect.flip)
      assert.deepStrictEqual(error.reason, { _tag: "StreamCut", unreachable: true })
      assert.include(error.message, `Cannot connect to ${url}/chat/completions (connection refused)`)
    })
  )

  it.effect("an aborted signal ends the stream as Aborted", () =>
    Effect.gen(function* () {
      const server = yield* scriptedServer([{ steps: [{ text: "never read" }] }])
      const controller = new AbortController()
      controller.abort()
      const error = yield* step(controller.signal).pipe(Effect.provide(llmLayer(local(server.url))), Effect.flip)
      assert.deepStrictEqual(error.reason, { _tag: "Aborted" })
      assert.strictEqual(server.requests.length, 0)
    })
  )

  it.live("a stream its consumer leaves early stops the request; one read to its end leaves nothing to stop", () =>
    Effect.gen(function* () {
      // Ten chunks 60 ms apart: read whole, the reply finishes; left after the first events, the server sees it closed.
      const slow = { steps: Array.from({ length: 10 }, (_, i) => ({ text: `part ${i} ` })), delayMs: 60 }
      const server = yield* scriptedServer([slow, slow])
      const layer = llmLayer(local(server.url))
      const whole = yield* step().pipe(Effect.provide(layer))
      assert.strictEqual(whole.at(-1)?.type, "finish")
      assert.isDefined(server.requests[0]?.answeredAt)
      const first = yield* Effect.gen(function* () {
        const llm = yield* LLM
        const model = yield* Effect.orDie(llm.resolve())
        return yield* Stream.runCollect(Stream.take(llm.stream(request(model)), 3))
      }).pipe(Effect.provide(layer))
      assert.lengthOf(first, 3)
      yield* Effect.sleep("900 millis")
      assert.strictEqual(server.requests.length, 2)
      assert.isUndefined(server.requests[1]?.answeredAt, "the reply was cut off, not sent to its end")
    })
  )

  it.live("a stream interrupted before the model answers stops the request", () =>
    Effect.gen(function* () {
      const server = yield* scriptedServer([{ steps: [{ text: "late" }], firstByteMs: 400 }])
      const left = yield* step().pipe(Effect.provide(llmLayer(local(server.url))), Effect.timeoutOption("150 millis"))
      assert.isTrue(left._tag === "None")
      yield* Effect.sleep("600 millis")
      assert.strictEqual(server.requests.length, 1)
      assert.isUndefined(server.requests[0]?.answeredAt, "the request was left open until the model answered")
    })
  )

  it.effect("a server whose script ran out answers a non-retryable 400 saying so", () =>
    Effect.gen(function* () {
      const server = yield* scriptedServer((_, index) => (index === 0 ? { steps: [{ text: "once" }] } : undefined))
      const layer = llmLayer(local(server.url))
      const first = yield* step().pipe(Effect.provide(layer))
      assert.strictEqual(first.at(-1)?.type, "finish")
      const error = yield* step().pipe(Effect.provide(layer), Effect.flip)
      assert.deepStrictEqual(error.reason, { _tag: "InvalidRequest", status: 400 })
      assert.include(
        error.message,
        "The scripted server has no reply for request 2 (the script function returned nothing)"
      )
    })
  )

  it.effect("LATHE_BASE_URL + LATHE_MODEL from the config loader reach the server as provider env", () =>
    Effect.gen(function* () {
      const server = yield* scriptedServer([{ steps: [{ text: "hi" }] }])
      const root = yield* Effect.acquireRelease(
        Effect.promise(() => mkdtemp(join(tmpdir(), "lathe-llm-"))),
        (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
      )
      const env = { LATHE_BASE_URL: server.url, LATHE_MODEL: "qwen3-coder", LATHE_API_KEY: "sk-env" }
      const layer = LLM.layerWith(env).pipe(Layer.provide(Config.layerWith(env)), Layer.provide(Paths.layerTest(root)))
      const events = yield* step().pipe(Effect.provide(layer))
      assert.strictEqual(events.at(-1)?.type, "finish")
      assert.strictEqual(server.requests[0]?.headers.authorization, "Bearer sk-env")
      assert.strictEqual((server.requests[0]?.body as { model?: string } | undefined)?.model, "qwen3-coder")
    })
  )
})

describe("LLM.layer request paths of the first-party providers", () => {
  it.effect("anthropic posts to /v1/messages with x-api-key; a 401 names ANTHROPIC_API_KEY", () =>
    Effect.gen(function* () {
      const server = yield* scriptedServer([{ type: "error", status: 401, body: { error: { message: "bad key" } } }])
      const config = { model: "anthropic/claude-sonnet-4-5", provider: { anthropic: { baseURL: server.url } } }
      const error = yield* step().pipe(
        Effect.provide(llmLayer(config, { ANTHROPIC_API_KEY: "sk-ant-test" })),
        Effect.flip
      )
      assert.strictEqual(server.requests[0]?.path, "/v1/messages")
      assert.strictEqual(server.requests[0]?.headers["x-api-key"], "sk-ant-test")
      assert.deepStrictEqual(error.reason, { _tag: "Auth" })
      assert.include(error.message, 'Provider "anthropic" rejected the key from ANTHROPIC_API_KEY')
      assert.include(error.message, "set ANTHROPIC_API_KEY, or provider.anthropic.apiKey in lathe.json")
    })
  )

  it.effect("openai uses the Responses API at /v1/responses with a bearer token", () =>
    Effect.gen(function* () {
      const server = yield* scriptedServer([{ type: "error", status: 503, headers: { "retry-after-ms": "1500" } }])
      const config = { model: "openai/gpt-5", provider: { openai: { baseURL: server.url } } }
      const error = yield* step().pipe(Effect.provide(llmLayer(config, { OPENAI_API_KEY: "sk-oai-test" })), Effect.flip)
      assert.strictEqual(server.requests[0]?.path, "/v1/responses")
      assert.strictEqual(server.requests[0]?.headers.authorization, "Bearer sk-oai-test")
      assert.deepStrictEqual(error.reason, { _tag: "ServerError", status: 503, retryAfterMs: 1500 })
    })
  )
})
