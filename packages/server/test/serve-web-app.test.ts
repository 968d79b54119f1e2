import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs"
import { request } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { chunks, testLoopLayer } from "@lathe/core/testing"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type LatheServer, serve } from "../src/index.js"

// `serve({ webApp })` (what `lathe web` starts): the app's files at `/` without a token but behind the Host and
// Origin walls, the API still behind the token, and the page's own origin allowed to call it. A real server on
// 127.0.0.1 spoken to with raw node:http, so Host and Origin are exactly what a browser would send.

const TOKEN = "web-app-token"
let server: LatheServer

const send = (
  path: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {}
): Promise<{ status: number; headers: Record<string, unknown>; text: string }> =>
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
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }))
      }
    )
    req.on("error", reject)
    req.end(options.body)
  })

beforeAll(async () => {
  const app = mkdtempSync(join(tmpdir(), "lathe-web-app-"))
  writeFileSync(join(app, "index.html"), "<!doctype html><title>app</title>")
  writeFileSync(join(app, "app.js"), "console.log(1)")
  writeFileSync(join(app, "notes.md"), "private")
  mkdirSync(join(app, "sub"))
  server = await serve({
    app: (directory) =>
      testLoopLayer({ root: directory, steps: [[...chunks.text("Hi."), ...chunks.finish({ input: 1, output: 1 })]] }),
    directory: mkdtempSync(join(tmpdir(), "lathe-web-home-")),
    port: 0,
    token: TOKEN,
    webApp: app
  })
})

afterAll(async () => {
  await server?.close()
})

describe("serve with a web app", () => {
  it("serves the app's files without a token, and the API only with one", async () => {
    const page = await send("/")
    expect(page.status).toBe(200)
    expect(page.text).toContain("<title>app</title>")
    expect(String(page.headers["content-security-policy"])).toContain("connect-src 'self'")
    expect((await send("/app.js")).headers["content-type"]).toMatch(/^text\/javascript/)
    // Only files of the app's kinds: anything else in the folder is no route (behind the token, as any path).
    expect((await send("/notes.md")).status).toBe(401)
    expect((await send("/notes.md", { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(404)
    expect((await send("/sessions")).status).toBe(401)
    expect((await send("/sessions", { headers: { authorization: "Bearer wrong" } })).status).toBe(401)
    expect((await send("/sessions", { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(200)
  })

  it("keeps the Host and Origin walls in front of the app's files", async () => {
    expect((await send("/", { headers: { host: "evil.example" } })).status).toBe(421)
    expect((await send("/", { headers: { "sec-fetch-site": "cross-site" } })).status).toBe(403)
  })

  it("lets the page's own origin call the API, and no other origin", async () => {
    const call = (origin: string) =>
      send("/sessions", {
        body: "{}",
        headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json", origin }
      })
    expect((await call(`http://127.0.0.1:${server.port}`)).status).toBe(201)
    expect((await call("http://evil.example")).status).toBe(403)
    // Another port of this machine is another origin (another local web page).
    expect((await call(`http://127.0.0.1:${server.port + 1}`)).status).toBe(403)
  })
})
