/**
 * Secrets masked by value and by shape: the masker itself, the config as `lathe config` shows it, and the session
 * writer, which masks what it stores (read back from the SQLite file's bytes) and what it announces.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { assistant, session, user } from "@lathe/core/testing/store-contract"
import type { LatheEvent, TextPart, ToolPart } from "@lathe/plugin/schema"
import { Effect, Layer, Stream } from "effect"
import { maskConfig, maskDeep, maskOf, maskSecrets, SecretMask, secretMasker } from "../src/config/secret-mask.js"
import { Bus } from "../src/contracts/bus.js"
import { SessionStore } from "../src/store/session-store.js"
import { SqliteSessionStore } from "../src/store/session-store-sqlite.js"
import { SessionWriter } from "../src/store/session-writer.js"

const KEY = "sk-live-5f1e9c2a7b3d4e6f8a0b1c2d"
const HEADER_TOKEN = "hdr-token-0a9b8c7d6e5f"

describe("secretMasker", () => {
  it("masks every known value of 8 characters or more, also JSON-escaped or URL-encoded, longest first", () => {
    const quoted = 'pa"ss/wo rd+1'
    const mask = secretMasker([KEY, `${KEY}-extended`, quoted, "none"])
    const text = `key=${KEY}; long=${KEY}-extended; json=${JSON.stringify(quoted)}; url=${encodeURIComponent(quoted)}; none`
    const masked = mask(text)
    for (const spelling of [KEY, quoted, JSON.stringify(quoted).slice(1, -1), encodeURIComponent(quoted)])
      assert.notInclude(masked, spelling)
    assert.include(masked, `key=${maskOf(KEY)};`)
    assert.include(masked, `long=${maskOf(`${KEY}-extended`)};`)
    assert.isTrue(masked.endsWith("; none"), "a secret under 8 characters is left alone")
  })

  it("shows a long secret by its ends and a short one as ***", () => {
    assert.strictEqual(maskOf(KEY), "sk-…2c2d".replace("2c2d", KEY.slice(-4)))
    assert.strictEqual(maskOf("short-secret"), "***")
  })

  it("with shapes, masks echoed credential headers, ?key= and well-known key prefixes it was never told", () => {
    const echo = [
      "Authorization: Bearer unknown-token-1234567890",
      '{"headers":{"authorization":"Bearer unknown-json-token-1234","x-api-key":"unknown-x-api-key-99"}}',
      "GET https://api.example.test/v1?key=AIzaUnknownGoogleKey123456&alt=sse",
      "Incorrect API key provided: sk-proj-AbCdEfGhIjKlMnOpQrStUv",
      "proxy-authorization=Basic dXNlcjpwYXNzd29yZA=="
    ].join("\n")
    const masked = maskSecrets(echo, [], { shapes: true })
    for (const secret of [
      "unknown-token-1234567890",
      "unknown-json-token-1234",
      "unknown-x-api-key-99",
      "AIzaUnknownGoogleKey123456",
      "sk-proj-AbCdEfGhIjKlMnOpQrStUv",
      "dXNlcjpwYXNzd29yZA=="
    ])
      assert.notInclude(masked, secret)
    assert.include(masked, "Authorization: Bearer ")
    assert.include(masked, "&alt=sse")
    // Without shapes, only known values go.
    assert.strictEqual(maskSecrets(echo, []), echo)
  })

  it("leaves ordinary error text as it is", () => {
    const text = 'Provider "openai" rejected the API key (HTTP 401). To fix it, set OPENAI_API_KEY.'
    assert.strictEqual(maskSecrets(text, [KEY], { shapes: true }), text)
  })
})

describe("maskDeep", () => {
  it("masks strings at any depth and keeps the identity of what holds no secret", () => {
    const clean = { a: ["x", { b: "y" }], n: 1 }
    assert.strictEqual(
      maskDeep(clean, (text) => maskSecrets(text, [KEY])),
      clean
    )
    const dirty = { a: ["x", { b: `token ${KEY}` }], n: 1 }
    const masked = maskDeep(dirty, (text) => maskSecrets(text, [KEY]))
    assert.notInclude(JSON.stringify(masked), KEY)
    assert.strictEqual(masked.a[0], "x")
    assert.include(JSON.stringify(dirty), KEY, "the input is not changed")
  })
})

describe("maskConfig", () => {
  it("masks provider keys and headers whatever their length, MCP secrets and URL passwords, nothing else", () => {
    const info = {
      model: "local/m",
      provider: {
        local: {
          apiKey: "short",
          baseURL: "https://user:hunter2pass@llm.example.test/v1",
          headers: { Authorization: `Bearer ${HEADER_TOKEN}` },
          options: { auth: { token: "tok" }, timeout: 5 }
        }
      },
      mcp: { srv: { type: "remote", url: "https://mcp.example.test", oauth: { clientSecret: "cs-1" } } },
      store: { type: "postgres", url: "postgres://lathe:dbpassword@db/lathe" }
    }
    const shown = JSON.stringify(maskConfig(info))
    for (const secret of ["short", "hunter2pass", HEADER_TOKEN, '"tok"', "cs-1", "dbpassword"])
      assert.notInclude(shown, secret)
    assert.include(shown, '"model":"local/m"')
    assert.include(shown, "https://user:***@llm.example.test/v1")
    assert.include(shown, '"timeout":5')
    assert.include(JSON.stringify(info), "hunter2pass", "the config itself is not changed")
  })
})

const root = mkdtempSync(join(tmpdir(), "lathe-secret-mask-test-"))
afterAll(() => rmSync(root, { recursive: true, force: true }))

describe("SessionWriter with a SecretMask", () => {
  const file = join(root, "lathe.db")
  const layer = SessionWriter.layer.pipe(
    Layer.provideMerge(
      Layer.mergeAll(SqliteSessionStore.layerFile(file), Bus.layer, SecretMask.layerTest([KEY, HEADER_TOKEN]))
    )
  )

  it.effect("stores and announces tool output, errors, text and deltas with the secrets masked", () =>
    Effect.gen(function* () {
      const writer = yield* SessionWriter
      const events = yield* (yield* Bus).subscribe
      yield* writer.createSession(session("ses_m", 1))
      yield* writer.putMessage(user("ses_m", "msg_1"))
      yield* writer.putMessage(assistant("ses_m", "msg_2", "msg_1"))
      const tool: ToolPart = {
        id: "prt_1",
        sessionID: "ses_m",
        messageID: "msg_2",
        type: "tool",
        callID: "call_1",
        tool: "bash",
        state: {
          status: "completed",
          input: { command: "cat .env" },
          output: `OPENAI_API_KEY=${KEY}\n`,
          title: "cat .env",
          metadata: {},
          time: { start: 1, end: 2 }
        }
      }
      yield* writer.putPart(tool)
      const failed: ToolPart = {
        ...tool,
        id: "prt_2",
        callID: "call_2",
        state: {
          status: "error",
          input: { command: "curl" },
          error: "HTTP 401: Authorization: Bearer never-told-token-123456",
          time: { start: 1, end: 2 }
        }
      }
      yield* writer.putPart(failed)
      const part: TextPart = { id: "prt_3", sessionID: "ses_m", messageID: "msg_2", type: "text", text: `use ${KEY}` }
      yield* writer.delta(part, `use ${KEY}`)
      yield* writer.putMessage({
        ...assistant("ses_m", "msg_2", "msg_1"),
        error: { name: "Unknown", message: `echo x-api-key: ${HEADER_TOKEN} and Bearer also-never-told-98765` }
      })
      yield* writer.flush
      const seen: Array<LatheEvent> = Array.from(yield* events.pipe(Stream.take(9), Stream.runCollect))
      const announced = JSON.stringify(seen)
      const stored = JSON.stringify(yield* (yield* SessionStore).getMessage("ses_m", "msg_2"))
      // The database and its write-ahead log, as bytes; the unmasked output would be in one of them.
      const bytes = readdirSync(root)
        .filter((name) => name.startsWith("lathe.db"))
        .map((name) => readFileSync(join(root, name)).toString("latin1"))
        .join("")
      assert.include(bytes, `OPENAI_API_KEY=${maskOf(KEY).slice(0, 3)}`)
      for (const [where, text] of [
        ["events", announced],
        ["store", stored],
        ["file", bytes]
      ] as const) {
        for (const secret of [KEY, HEADER_TOKEN, "never-told-token-123456", "also-never-told-98765"])
          assert.notInclude(text, secret, `${where} holds ${secret}`)
      }
      assert.include(stored, `OPENAI_API_KEY=${maskOf(KEY)}`)
      assert.include(announced, '"type":"part.delta"')
      assert.include(announced, `use ${maskOf(KEY)}`)
    }).pipe(Effect.provide(layer))
  )
})
