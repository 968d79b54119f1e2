import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { chunks, testLoopLayer } from "@lathe/core/testing"
import { Authorization, LatheApi } from "@lathe/sdk"
import { Effect, Fiber, Layer, Stream } from "effect"
import { FetchHttpClient, HttpClientRequest } from "effect/http"
import { HttpApiClient, HttpApiMiddleware } from "effect/http-api"
import { isLoopback, ServeError, serve } from "../src/index.js"

// The server in-process over the test loop (scripted model, in-memory store), driven by effect's own HttpApiClient:
// what a typed client sees, including the SSE stream decoded with the API's `ServerEvent` schema.
const TOKEN = "t0k"

const start = () => {
  const root = mkdtempSync(join(tmpdir(), "lathe-server-"))
  return serve({
    app: (directory) =>
      testLoopLayer({
        root: directory,
        steps: Array(4).fill([...chunks.text("Hello from the model."), ...chunks.finish({ input: 5, output: 3 })])
      }),
    directory: root,
    port: 0,
    token: TOKEN,
    version: "1.2.3"
  })
}

const clientLayer = Layer.mergeAll(
  FetchHttpClient.layer,
  HttpApiMiddleware.layerClient(Authorization, ({ next, request }) =>
    next(HttpClientRequest.bearerToken(request, TOKEN))
  )
)

describe("serve", () => {
  it.live("serves the API to effect's typed client, SSE events included, and drains", () =>
    Effect.gen(function* () {
      const server = yield* Effect.promise(start)
      const client = yield* HttpApiClient.make(LatheApi, { baseUrl: server.url })
      expect(yield* client.system.health()).toEqual({ ok: true, version: "1.2.3" })
      const session = yield* client.sessions.create({ payload: { title: "typed" } })
      expect(session.status).toBe("idle")
      const events = yield* client.events.subscribe({ query: { sessionID: session.id } })
      const fiber = yield* Stream.runCollect(
        events.pipe(
          Stream.takeUntil((e) => e.data.type === "session.idle"),
          Stream.timeout("10 seconds")
        )
      ).pipe(Effect.forkChild)
      yield* Effect.sleep("100 millis")
      const accepted = yield* client.sessions.prompt({ params: { id: session.id }, payload: { text: "hi" } })
      expect(accepted.queued).toBe(false)
      const collected = yield* Fiber.join(fiber)
      expect(collected.map((e) => e.data.type)).toContain("step.finished")
      expect(collected.every((e, i) => i === 0 || Number(e.id) > Number(collected[i - 1]?.id))).toBe(true)
      const messages = yield* client.sessions.messages({ params: { id: session.id } })
      expect(messages.map((m) => m.info.role)).toEqual(["user", "assistant"])
      const missing = yield* client.sessions.get({ params: { id: "ses_missing" } }).pipe(Effect.flip)
      expect(missing).toMatchObject({ error: { code: "not_found" } })
      expect(yield* Effect.promise(() => server.close(5_000))).toBe(true)
    }).pipe(Effect.provide(clientLayer))
  )

  it("answers a body it cannot decode with 400 in the error shape, and no token with 401", async () => {
    const server = await start()
    try {
      const post = (
        body: string,
        headers: Record<string, string> = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" }
      ) => fetch(`${server.url}/sessions/ses_x/prompt`, { method: "POST", body, headers })
      const bad = await post("{")
      expect(bad.status).toBe(400)
      expect(await bad.json()).toMatchObject({
        error: { code: "bad_request", message: expect.stringContaining("JSON") }
      })
      const missing = await post(JSON.stringify({ text: "" }))
      expect(missing.status).toBe(400)
      expect(await missing.json()).toMatchObject({ error: { code: "bad_request" } })
      const anonymous = await post("{}", {})
      expect(anonymous.status).toBe(401)
      expect(await anonymous.json()).toMatchObject({ error: { code: "unauthorized" } })
    } finally {
      await server.close(5_000)
    }
  })

  it("answers new work with 503 while it drains", async () => {
    const server = await start()
    const auth = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" }
    const created = await fetch(`${server.url}/sessions`, { method: "POST", body: "{}", headers: auth })
    const { id } = (await created.json()) as { id: string }
    const closing = server.close(5_000)
    const late = await fetch(`${server.url}/sessions`, { method: "POST", body: "{}", headers: auth })
    expect(late.status).toBe(503)
    expect(await late.json()).toMatchObject({ error: { code: "unavailable" } })
    const prompt = await fetch(`${server.url}/sessions/${id}/prompt`, {
      method: "POST",
      body: JSON.stringify({ text: "too late" }),
      headers: auth
    })
    expect(prompt.status).toBe(503)
    expect(await closing).toBe(true)
  })

  it("refuses to listen beyond loopback without a token", async () => {
    expect(isLoopback("127.0.0.1") && isLoopback("::1") && !isLoopback("0.0.0.0")).toBe(true)
    await expect(
      serve({ app: () => Layer.empty as never, hostname: "0.0.0.0", port: 0, noAuth: true })
    ).rejects.toBeInstanceOf(ServeError)
  })
})
