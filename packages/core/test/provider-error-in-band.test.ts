import { assert, describe, it } from "@effect/vitest"
import { StreamProviderError } from "ai"
import { Effect, Layer, Stream } from "effect"
import { Config } from "../src/config/config.js"
import { LLM } from "../src/llm/llm.js"
import type { ProviderError } from "../src/llm/provider-error.js"
import { toProviderError } from "../src/llm/provider-error.js"
import { isRetryable } from "../src/loop/retry.js"
import { startScriptedServer } from "../src/testing/scripted-server.js"

// Errors a server reports inside a 200 stream, with no HTTP status: each is classified as its HTTP twin would be.
const cases: ReadonlyArray<{ readonly error: Record<string, unknown>; readonly reason: string }> = [
  { error: { message: "Too many requests, slow down", type: "too_many_requests" }, reason: "RateLimited" },
  { error: { message: "Rate limit reached for requests", code: "rate_limit_exceeded" }, reason: "RateLimited" },
  {
    error: { message: "The server had an error processing your request", type: "server_error" },
    reason: "ServerError"
  },
  { error: { message: "Upstream is overloaded", type: "overloaded" }, reason: "Overloaded" },
  { error: { message: "no space left in the KV cache for this request", type: "no_kv_space" }, reason: "Overloaded" },
  { error: { message: "Service temporarily unavailable", code: "service_unavailable" }, reason: "ServerError" },
  {
    error: { message: "This model's maximum context length is 8192 tokens", type: "context_length_exceeded" },
    reason: "ContextOverflow"
  },
  { error: { message: "too many requests" }, reason: "RateLimited" },
  { error: { message: "You exceeded your current quota", type: "insufficient_quota" }, reason: "QuotaExceeded" },
  { error: { message: "messages: field required", type: "invalid_request_error" }, reason: "InvalidRequest" }
]

const retried = new Set(["RateLimited", "Overloaded", "ServerError"])

/** Streams one step of the real openai-compatible provider against a server answering `error` in-band. */
const streamInBand = (error: Record<string, unknown>) =>
  Effect.gen(function* () {
    const server = yield* Effect.acquireRelease(
      Effect.promise(() => startScriptedServer([{ type: "in-band-error", steps: [{ text: "Sta" }], error }])),
      (s) => Effect.promise(() => s.close())
    )
    const layer = LLM.layerWith({}).pipe(
      Layer.provide(
        Config.layerTest({
          model: "local/m",
          provider: { local: { type: "openai-compatible", baseURL: server.url, apiKey: "k" } }
        })
      )
    )
    return yield* Effect.gen(function* () {
      const llm = yield* LLM
      const model = yield* Effect.orDie(llm.resolve())
      const request = {
        sessionID: "ses_1",
        model,
        system: [],
        messages: [{ role: "user" as const, content: "hi" }],
        tools: {},
        abort: new AbortController().signal
      }
      return yield* Stream.runDrain(llm.stream(request)).pipe(Effect.flip)
    }).pipe(Effect.provide(layer))
  })

describe("in-band stream errors", () => {
  for (const { error, reason } of cases)
    it.live(`${JSON.stringify(error.type ?? error.code ?? error.message)} mid-stream is ${reason}`, () =>
      Effect.gen(function* () {
        const failure: ProviderError = yield* streamInBand(error)
        assert.strictEqual(failure.reason._tag, reason, failure.message)
        assert.strictEqual(isRetryable(failure), retried.has(reason), "retried like its HTTP twin")
        assert.include(failure.message, "local/m")
        assert.include(failure.message, String(error.message).slice(0, 20))
      }).pipe(Effect.scoped)
    )

  it("an explicit status wins over the type, and an unknown type keeps the provider's retry hint", () => {
    const classify = (error: unknown) => toProviderError(error, "p", "m")
    const explicit = new StreamProviderError({ message: "x", type: "too_many_requests", statusCode: 400 })
    assert.strictEqual(classify(explicit).reason._tag, "InvalidRequest")
    const hinted = new StreamProviderError({ message: "weird", type: "mystery", isRetryable: true })
    assert.strictEqual(classify(hinted).reason._tag, "ServerError")
    const plain = new StreamProviderError({ message: "weird", type: "mystery" })
    assert.strictEqual(classify(plain).reason._tag, "InvalidRequest")
    assert.include(classify(new StreamProviderError({ message: "busy", type: "server_error" })).message, "mid-stream")
  })
})
