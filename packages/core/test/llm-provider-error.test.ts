import { assert, describe, it } from "@effect/vitest"
import { APICallError, StreamProviderError } from "ai"
import { parseRetryAfter, StreamCutError, toProviderError } from "../src/llm/provider-error.js"

const url = "https://api.example.test/v1/messages"
const apiError = (statusCode: number, body = "", headers: Record<string, string> = {}) =>
  new APICallError({
    message: `HTTP ${statusCode}`,
    url,
    requestBodyValues: {},
    statusCode,
    responseHeaders: headers,
    responseBody: body
  })
const classify = (error: unknown, now = 0) => toProviderError(error, "anthropic", "claude-sonnet-4-5", { now })
const json = (message: string, type = "invalid_request_error") => JSON.stringify({ error: { type, message } })

describe("parseRetryAfter", () => {
  const now = Date.parse("2026-11-22T10:00:00Z")
  it("prefers retry-after-ms, then seconds, then an HTTP date", () => {
    assert.strictEqual(parseRetryAfter({ "retry-after-ms": "1500", "retry-after": "9" }, now), 1500)
    assert.strictEqual(parseRetryAfter({ "Retry-After": "2" }, now), 2000)
    assert.strictEqual(parseRetryAfter({ "retry-after": "0.5" }, now), 500)
    assert.strictEqual(parseRetryAfter({ "retry-after": "Sun, 22 Nov 2026 10:01:00 GMT" }, now), 60_000)
  })
  it("treats a past date as 0 and garbage or nothing as no hint", () => {
    assert.strictEqual(parseRetryAfter({ "retry-after": "Sun, 22 Nov 2026 09:00:00 GMT" }, now), 0)
    for (const value of ["soon", "-3", "2 seconds", "", "Tomorrow, 10 am"])
      assert.strictEqual(parseRetryAfter({ "retry-after": value }, now), undefined, value)
    assert.strictEqual(parseRetryAfter({ "retry-after-ms": "abc" }, now), undefined)
    assert.strictEqual(parseRetryAfter(undefined, now), undefined)
  })
})

describe("toProviderError", () => {
  it("classifies HTTP statuses", () => {
    assert.deepStrictEqual(classify(apiError(429, "", { "retry-after": "3" })).reason, {
      _tag: "RateLimited",
      retryAfterMs: 3000
    })
    assert.deepStrictEqual(classify(apiError(529)).reason, { _tag: "Overloaded" })
    assert.deepStrictEqual(classify(apiError(500, json("Overloaded", "overloaded_error"))).reason, {
      _tag: "Overloaded"
    })
    assert.deepStrictEqual(classify(apiError(502)).reason, { _tag: "ServerError", status: 502 })
    assert.deepStrictEqual(classify(apiError(403)).reason, { _tag: "Auth" })
    assert.deepStrictEqual(classify(apiError(404)).reason, { _tag: "InvalidRequest", status: 404 })
    assert.deepStrictEqual(classify(apiError(400, json("messages: field required"))).reason, {
      _tag: "InvalidRequest",
      status: 400
    })
  })

  it("tells an account without quota (not retried) from a rate limit (retried), though both are 429", () => {
    const text = "You exceeded your current quota, please check your plan and billing details."
    const quota = toProviderError(apiError(429, json(text, "insufficient_quota")), "openai", "gpt-5")
    assert.deepStrictEqual(quota.reason, { _tag: "QuotaExceeded" })
    assert.strictEqual(
      quota.message,
      `openai/gpt-5 refused the request: the account has no quota left (HTTP 429): ${text} Check the plan and ` +
        'billing of the account this key belongs to (provider "openai"), or switch to another model.'
    )
    const inBand = new StreamProviderError({ message: text, type: "insufficient_quota" })
    assert.deepStrictEqual(classify(inBand).reason, { _tag: "QuotaExceeded" })
    // The same status with a rate-limit body (or none) still waits and retries.
    const limited = classify(apiError(429, json("Rate limit reached for requests", "requests")))
    assert.deepStrictEqual(limited.reason, { _tag: "RateLimited" })
    assert.include(limited.message, "is rate-limited (HTTP 429)")
  })

  it("finds context overflow in 400, 413 and 422 bodies, and only there", () => {
    const overflow = [
      [400, json("prompt is too long: 210000 tokens > 200000 maximum")],
      [400, json("This model's maximum context length is 128000 tokens", "context_length_exceeded")],
      [413, json("Request exceeds the maximum size: input is too long")],
      [422, "context window exceeded"]
    ] as const
    for (const [status, body] of overflow)
      assert.deepStrictEqual(classify(apiError(status, body)).reason, { _tag: "ContextOverflow" })
    assert.strictEqual(classify(apiError(413, "payload too large")).reason._tag, "InvalidRequest")
    const message = classify(apiError(400, json("prompt is too long"))).message
    assert.include(message, "too long for anthropic/claude-sonnet-4-5's context window")
    assert.include(message, "Compact the session")
  })

  it("writes messages that say what failed, where and how to fix it", () => {
    const auth = classify(apiError(401, json("invalid x-api-key", "authentication_error")))
    assert.strictEqual(
      auth.message,
      `Provider "anthropic" rejected the API key (HTTP 401) at ${url}: invalid x-api-key. ` +
        "To fix it, set ANTHROPIC_API_KEY, or provider.anthropic.apiKey in lathe.json, or run `lathe auth login " +
        "anthropic` to store one."
    )
    const hinted = toProviderError(apiError(401), "work", "m", { keyHint: "set WORK_KEY" })
    assert.include(hinted.message, "To fix it, set WORK_KEY.")
    assert.include(
      classify(apiError(404)).message,
      `Check that provider "anthropic" (${url}) serves a model named "claude-sonnet-4-5".`
    )
  })

  it("a 404 hint names the provider as the person configured it and the model as the server knows it", () => {
    const notFound = apiError(404, json("model 'qwen-nope' not found", "not_found_error"))
    const base = "http://127.0.0.1:8080/v1"
    // LATHE_BASE_URL + LATHE_MODEL: Lathe's internal provider id "env" never shows.
    const fromEnv = toProviderError(notFound, "env", "qwen-nope", { url: base })
    assert.include(
      fromEnv.message,
      `Check that the server at LATHE_BASE_URL (${base}) serves a model named "qwen-nope"`
    )
    assert.notInclude(fromEnv.message, "env/")
    assert.notInclude(fromEnv.message, '"env"')
    // A provider key in lathe.json is named as written there, with its baseURL.
    const fromConfig = toProviderError(notFound, "my-ollama", "qwen-nope", { url: base })
    assert.include(fromConfig.message, `Check that provider "my-ollama" (${base}) serves a model named "qwen-nope".`)
    assert.include(fromConfig.message, "model 'qwen-nope' not found")
  })

  it("turns refused, reset and cut connections into StreamCut with the URL", () => {
    const cannotConnect = (code: string, text: string) =>
      new APICallError({
        message: "Cannot connect to API",
        url,
        requestBodyValues: {},
        cause: Object.assign(new Error(text), { code })
      })
    const error = classify(cannotConnect("ECONNREFUSED", "connect ECONNREFUSED 127.0.0.1:9"))
    // No connection at all: retried only a few times (see retry.test.ts).
    assert.deepStrictEqual(error.reason, { _tag: "StreamCut", unreachable: true })
    assert.strictEqual(
      error.message,
      `Cannot connect to ${url} (connection refused); is the server running and the base URL right?`
    )
    const unknownHost = classify(cannotConnect("ENOTFOUND", "getaddrinfo ENOTFOUND api.example.invalid"))
    assert.deepStrictEqual(unknownHost.reason, { _tag: "StreamCut", unreachable: true })
    assert.strictEqual(
      unknownHost.message,
      `Cannot connect to ${url} (ENOTFOUND); the host name does not resolve: check the base URL and the network connection.`
    )
    // A temporary DNS failure may heal: the full retries.
    const dnsAgain = classify(cannotConnect("EAI_AGAIN", "getaddrinfo EAI_AGAIN api.example.com"))
    assert.deepStrictEqual(dnsAgain.reason, { _tag: "StreamCut" })
    assert.include(
      dnsAgain.message,
      `Cannot connect to ${url} (EAI_AGAIN); the host name could not be resolved just now`
    )
    const reset = Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" })
    const cut = toProviderError(reset, "p", "m", { url: "http://x/v1" })
    assert.deepStrictEqual(cut.reason, { _tag: "StreamCut" })
    assert.strictEqual(cut.message, "The connection to http://x/v1 was cut mid-response (ECONNRESET).")
    assert.include(
      toProviderError(new TypeError("fetch failed"), "p", "m", { url: "http://x/v1" }).message,
      "http://x/v1"
    )
    assert.deepStrictEqual(classify(new StreamCutError()).reason, { _tag: "StreamCut" })
  })

  it("classifies in-band provider errors by type and status", () => {
    const inBand = (type: string, statusCode?: number) =>
      new StreamProviderError({ message: "upstream said no", type, ...(statusCode ? { statusCode } : {}) })
    assert.strictEqual(classify(inBand("overloaded_error")).reason._tag, "Overloaded")
    assert.strictEqual(classify(inBand("rate_limit_error")).reason._tag, "RateLimited")
    assert.strictEqual(classify(inBand("api_error", 500)).reason._tag, "ServerError")
    assert.strictEqual(classify(inBand("invalid_request_error")).reason._tag, "InvalidRequest")
  })

  it("is Aborted whenever the signal fired, and total for anything else", () => {
    assert.strictEqual(toProviderError(apiError(500), "p", "m", { aborted: true }).reason._tag, "Aborted")
    const abortError = Object.assign(new Error("This operation was aborted"), { name: "AbortError" })
    assert.strictEqual(classify(abortError).reason._tag, "Aborted")
    const odd = classify("a string thrown by someone")
    assert.deepStrictEqual(odd.reason, { _tag: "InvalidRequest" })
    assert.include(odd.message, "a string thrown by someone")
    assert.strictEqual(classify(odd), odd, "a ProviderError passes through")
  })
})
