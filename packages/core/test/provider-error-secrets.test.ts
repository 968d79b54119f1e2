/**
 * A provider error that echoes the key: a real server on 127.0.0.1 answers 401 quoting the request's Authorization
 * header. The raw answer holds the key; the `ProviderError` Lathe makes of it does not, wherever the key falls in the
 * body (also across the point where the body is shortened).
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { APICallError } from "ai"
import { Effect, Layer, Stream } from "effect"
import { afterAll } from "vitest"
import { Config } from "../src/config/config.js"
import { LLM } from "../src/llm/llm.js"
import { toProviderError } from "../src/llm/provider-error.js"
import { startScriptedServer } from "../src/testing/scripted-server.js"

const KEY = "sk-echo-7d3c9b1a5e2f4d6c8b0a"
const dirs: Array<string> = []
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

/** No 10-character piece of `secret` appears in `text`. */
const holdsNoPiece = (text: string, secret: string) => {
  for (let at = 0; at + 10 <= secret.length; at++) assert.notInclude(text, secret.slice(at, at + 10))
}

describe("toProviderError with secrets", () => {
  it("masks a known key even where the body is cut short, and shapes it was never told", () => {
    // The key straddles the 300th character of the detail, where the message is shortened.
    const body = JSON.stringify({ error: { message: `${"x".repeat(290)} ${KEY} and Bearer other-token-123456789` } })
    const error = new APICallError({
      message: "Unauthorized",
      url: "https://api.example.test/v1/chat/completions?key=AIzaUrlKey1234567890abcd",
      requestBodyValues: {},
      statusCode: 401,
      responseHeaders: {},
      responseBody: body
    })
    assert.include(body, KEY) // the payload holds the key
    const failure = toProviderError(error, "openai", "gpt-5", { secrets: () => [KEY] })
    assert.strictEqual(failure.reason._tag, "Auth")
    holdsNoPiece(failure.message, KEY)
    assert.notInclude(failure.message, "AIzaUrlKey1234567890abcd")
    const other = toProviderError(
      new APICallError({
        message: "Bad",
        url: "https://api.example.test/v1",
        requestBodyValues: {},
        statusCode: 400,
        responseBody: JSON.stringify({ error: { message: "echo: Authorization: Bearer other-token-123456789" } })
      }),
      "openai",
      "gpt-5"
    )
    assert.notInclude(other.message, "other-token-123456789")
    assert.include(other.message, "Authorization: Bearer")
  })
})

describe("LLM.stream against a server that echoes the Authorization header", () => {
  it.effect("the raw answer holds the key; the ProviderError holds none", () =>
    Effect.gen(function* () {
      const server = yield* Effect.acquireRelease(
        Effect.promise(() =>
          startScriptedServer((request) => ({
            type: "error",
            status: 401,
            body: { error: { message: `Invalid key. You sent: authorization=${request.headers.authorization}` } }
          }))
        ),
        (s) => Effect.promise(() => s.close())
      )
      const raw = yield* Effect.promise(() =>
        fetch(`${server.url}/chat/completions`, {
          method: "POST",
          headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
          body: "{}"
        }).then((response) => response.text())
      )
      assert.include(raw, KEY) // the payload bites without Lathe
      const dir = mkdtempSync(join(tmpdir(), "lathe-provider-secrets-"))
      dirs.push(dir)
      const config = {
        model: "local/m",
        provider: { local: { type: "openai-compatible" as const, baseURL: server.url, apiKey: KEY, models: { m: {} } } }
      }
      const error = yield* Effect.gen(function* () {
        const llm = yield* LLM
        const model = yield* Effect.orDie(llm.resolve("local/m"))
        const abort = new AbortController().signal
        return yield* Stream.runDrain(
          llm.stream({
            sessionID: "ses_k",
            model,
            system: [],
            messages: [{ role: "user", content: "hi" }],
            tools: {},
            abort
          })
        )
      }).pipe(
        Effect.provide(LLM.layerWith({ LATHE_DATA_DIR: dir }).pipe(Layer.provide(Config.layerTest(config)))),
        Effect.flip
      )
      assert.strictEqual(error.reason._tag, "Auth")
      assert.include(error.message, "Invalid key")
      holdsNoPiece(error.message, KEY)
      assert.include(server.requests.at(-1)?.headers.authorization ?? "", KEY) // Lathe did send it
    })
  )
})
