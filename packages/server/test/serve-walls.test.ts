import { mkdtempSync } from "node:fs"
import { request } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { chunks, testLoopLayer } from "@lathe/core/testing"
import { Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type LatheServer, ServeError, type ServeOptions, serve } from "../src/index.js"

// The walls in front of the API, against a real server on 127.0.0.1 spoken to with raw node:http (so the Host and
// Origin headers are exactly what a browser or a rebinding page would send). Each refusal is paired with the same
// request minus the one thing the wall looks at, which succeeds: only that wall stands between the page and the agent.

const start = (options: Partial<ServeOptions> = {}) =>
  serve({
    app: (directory) =>
      testLoopLayer({
        root: directory,
        steps: Array(4).fill([...chunks.text("Hello."), ...chunks.finish({ input: 5, output: 3 })])
      }),
    directory: mkdtempSync(join(tmpdir(), "lathe-walls-")),
    port: 0,
    ...options
  })

interface Answer {
  readonly status: number
  readonly headers: Record<string, string | Array<string> | undefined>
  readonly body: { error?: { code: string; message: string }; id?: string } & Record<string, unknown>
}

/** One raw HTTP request to `server`; `host` defaults to the address it listens on. */
const send = (
  server: LatheServer,
  path: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {}
): Promise<Answer> =>
  new Promise((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port: server.port,
        path,
        method: options.method ?? (options.body === undefined ? "GET" : "POST"),
        headers: { host: `127.0.0.1:${server.port}`, ...options.headers }
      },
      (res) => {
        let text = ""
        res.on("data", (chunk: Buffer) => {
          text += chunk.toString("utf8")
        })
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text === "" ? {} : JSON.parse(text) })
        )
      }
    )
    req.on("error", reject)
    req.end(options.body)
  })

const json = { "content-type": "application/json" }

describe("lathe serve walls", () => {
  let server: LatheServer
  let bearer: { authorization: string }
  beforeAll(async () => {
    server = await start()
    bearer = { authorization: `Bearer ${server.token}` }
  })
  afterAll(() => server.close(5_000))

  it("makes a strong token when none is given; no token or a wrong one is 401", async () => {
    expect(server.token).toMatch(/^[A-Za-z0-9_-]{43}$/)
    for (const headers of [{}, { authorization: "Bearer nope" }]) {
      const answer = await send(server, "/sessions", { headers })
      expect(answer.status).toBe(401)
      expect(answer.body.error?.code).toBe("unauthorized")
      expect(answer.body.error?.message).toContain("printed at start")
    }
    expect((await send(server, "/no/such/route")).status).toBe(401)
    expect((await send(server, "/sessions", { headers: bearer })).status).toBe(200)
  })

  it("refuses a Host that is not this server's name (DNS rebinding), even with the right token", async () => {
    const rebound = await send(server, "/sessions", {
      headers: { ...bearer, ...json, host: `evil.example:${server.port}` },
      body: "{}"
    })
    expect(rebound.status).toBe(421)
    expect(rebound.body.error?.code).toBe("misdirected")
    expect(rebound.body.error?.message).toContain("DNS rebinding")
    expect((await send(server, "/health", { headers: { ...bearer, host: "evil.example" } })).status).toBe(421)
    expect((await send(server, "/health", { headers: { ...bearer, host: "127.0.0.1.evil.example" } })).status).toBe(421)
    // The control: the same request naming the server is accepted, by each loopback name.
    for (const host of [`127.0.0.1:${server.port}`, `localhost:${server.port}`, `[::1]:${server.port}`]) {
      const created = await send(server, "/sessions", { headers: { ...bearer, ...json, host }, body: "{}" })
      expect(created.status, host).toBe(201)
    }
  })

  it("refuses a web page of another origin (CORS simple request or no-cors), even with the right token", async () => {
    const page = await send(server, "/sessions", {
      headers: { ...bearer, ...json, origin: "http://evil.example" },
      body: "{}"
    })
    expect(page.status).toBe(403)
    expect(page.body.error?.code).toBe("forbidden")
    expect(page.body.error?.message).toContain("--cors http://evil.example")
    expect(page.headers["access-control-allow-origin"]).toBeUndefined()
    expect((await send(server, "/health", { headers: { ...bearer, origin: "null" } })).status).toBe(403)
    expect((await send(server, "/health", { headers: { ...bearer, "sec-fetch-site": "cross-site" } })).status).toBe(403)
    const preflight = await send(server, "/sessions", {
      method: "OPTIONS",
      headers: { origin: "http://evil.example", "access-control-request-method": "POST" }
    })
    expect(preflight.status).toBe(403)
    expect((await send(server, "/sessions", { headers: { ...bearer, ...json }, body: "{}" })).status).toBe(201)
  })

  it("answers a JSON body sent as text/plain (or without a type) with 415 and does nothing", async () => {
    const before = (await send(server, "/sessions", { headers: bearer })).body as unknown as Array<unknown>
    for (const type of ["text/plain;charset=UTF-8", "application/x-www-form-urlencoded", "multipart/form-data"]) {
      const answer = await send(server, "/sessions", { headers: { ...bearer, "content-type": type }, body: "{}" })
      expect(answer.status, type).toBe(415)
      expect(answer.body.error?.code).toBe("unsupported_media_type")
    }
    expect((await send(server, "/sessions", { headers: bearer, body: "{}" })).status).toBe(415)
    const after = (await send(server, "/sessions", { headers: bearer })).body as unknown as Array<unknown>
    expect(after.length).toBe(before.length)
    const created = await send(server, "/sessions", {
      headers: { ...bearer, "content-type": "application/json; charset=utf-8" },
      body: "{}"
    })
    expect(created.status).toBe(201)
  })

  it("serves the right request, the event stream included", async () => {
    const created = await send(server, "/sessions", { headers: { ...bearer, ...json }, body: "{}" })
    expect(created.status).toBe(201)
    const events = await fetch(`${server.url}/events?sessionID=${created.body.id}`, { headers: bearer })
    expect(events.status).toBe(200)
    expect(events.headers.get("content-type")).toContain("text/event-stream")
    await events.body?.cancel()
    expect((await fetch(`${server.url}/events`)).status).toBe(401)
  })
})

describe("lathe serve options", () => {
  it("lets a configured origin in, with CORS headers and a preflight answer", async () => {
    const server = await start({ token: "given-token", corsOrigins: ["https://app.example"] })
    try {
      expect(server.token).toBe("given-token")
      const preflight = await send(server, "/sessions", {
        method: "OPTIONS",
        headers: { origin: "https://app.example", "access-control-request-method": "POST" }
      })
      expect(preflight.status).toBe(204)
      expect(preflight.headers["access-control-allow-origin"]).toBe("https://app.example")
      expect(preflight.headers["access-control-allow-headers"]).toContain("authorization")
      const answer = await send(server, "/health", {
        headers: { authorization: "Bearer given-token", origin: "https://app.example" }
      })
      expect(answer.status).toBe(200)
      expect(answer.headers["access-control-allow-origin"]).toBe("https://app.example")
      // The origin still needs the token.
      expect((await send(server, "/health", { headers: { origin: "https://app.example" } })).status).toBe(401)
    } finally {
      await server.close(5_000)
    }
  })

  it("takes --allow-host names; --no-auth only on loopback, and the Host and Origin walls stay", async () => {
    await expect(
      serve({ app: () => Layer.empty as never, hostname: "0.0.0.0", port: 0, noAuth: true })
    ).rejects.toBeInstanceOf(ServeError)
    const server = await start({ noAuth: true, allowedHosts: ["lathe.internal"] })
    try {
      expect(server.token).toBeUndefined()
      expect((await send(server, "/health")).status).toBe(200)
      expect((await send(server, "/health", { headers: { host: "lathe.internal:8080" } })).status).toBe(200)
      expect((await send(server, "/health", { headers: { host: "evil.example" } })).status).toBe(421)
      expect((await send(server, "/health", { headers: { origin: "http://evil.example" } })).status).toBe(403)
    } finally {
      await server.close(5_000)
    }
  })
})
