import { existsSync, readFileSync, statSync } from "node:fs"
import { request } from "node:http"
import { join } from "node:path"
import { type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { runLathe, sandbox } from "./helpers.js"
import { type ServeProcess, startServe } from "./serve-helpers.js"

// "Walls that hold", end to end: the real `lathe serve` started with no token at all, as a person would. A web page
// (another origin, a DNS-rebound name, a text/plain body) and a program without the token are refused; what the
// server printed is enough to attach from this machine, with no --token.

let model: ScriptedServer
let server: ServeProcess
let box: ReturnType<typeof sandbox>
let env: Record<string, string>

/** A raw request (node:http, so Host and Origin are sent exactly as given). */
const send = (
  path: string,
  headers: Record<string, string>,
  body?: string
): Promise<{ status: number; code: string | undefined }> =>
  new Promise((resolve, reject) => {
    const url = new URL(server.url)
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path,
        method: body === undefined ? "GET" : "POST",
        headers: { host: url.host, ...headers }
      },
      (res) => {
        let text = ""
        res.on("data", (chunk: Buffer) => {
          text += chunk.toString("utf8")
        })
        res.on("end", () => {
          const parsed = text === "" ? {} : (JSON.parse(text) as { error?: { code?: string } })
          resolve({ status: res.statusCode ?? 0, code: parsed.error?.code })
        })
      }
    )
    req.on("error", reject)
    req.end(body)
  })

beforeAll(async () => {
  model = await startScriptedServer(() => ({ steps: [{ text: "Hello through the wall." }] }))
  box = sandbox()
  env = { ...box.env, LATHE_BASE_URL: model.url, LATHE_MODEL: "m" }
  server = await startServe(["--port", "0"], { cwd: box.project, env })
}, 40_000)

afterAll(async () => {
  server?.child.kill("SIGTERM")
  await server?.exited
  await model?.close()
})

describe("lathe serve, started with no token", () => {
  it("makes a token, prints it and how to attach, and saves it for this user only", () => {
    assert.match(server.token ?? "", /^[A-Za-z0-9_-]{43}$/)
    const port = new URL(server.url).port
    const file = join(box.env.LATHE_DATA_DIR ?? "", "servers", `${port}.token`)
    assert.include(server.stdout(), `attach with: lathe --attach ${server.url}`)
    assert.include(server.stdout(), file)
    assert.strictEqual(readFileSync(file, "utf8").trim(), server.token)
    assert.strictEqual(statSync(file).mode & 0o777, 0o600)
  })

  it("refuses no token, another origin, a rebound Host and a text/plain body; the right request works", async () => {
    const bearer = { authorization: `Bearer ${server.token}` }
    const json = { "content-type": "application/json" }
    assert.deepStrictEqual(await send("/sessions", json, "{}"), { status: 401, code: "unauthorized" })
    assert.deepStrictEqual(await send("/sessions", { ...bearer, ...json, origin: "http://evil.example" }, "{}"), {
      status: 403,
      code: "forbidden"
    })
    const port = new URL(server.url).port
    assert.deepStrictEqual(await send("/sessions", { ...bearer, ...json, host: `evil.example:${port}` }, "{}"), {
      status: 421,
      code: "misdirected"
    })
    assert.deepStrictEqual(await send("/sessions", { ...bearer, "content-type": "text/plain" }, "{}"), {
      status: 415,
      code: "unsupported_media_type"
    })
    // None of them made a session; the right request does.
    const listed = await fetch(`${server.url}/sessions`, { headers: bearer })
    assert.deepStrictEqual(await listed.json(), [])
    assert.strictEqual((await send("/sessions", { ...bearer, ...json }, "{}")).status, 201)
  })

  it("`lathe run --attach` with the printed address works with no --token (the saved token)", async () => {
    const attached = await runLathe(["run", "--attach", server.url, "say hello"], { cwd: box.project, env })
    assert.strictEqual(attached.code, 0, attached.stderr)
    assert.include(attached.stdout, "Hello through the wall.")
    // Without the saved file (another user, another data dir) the token is needed and the message says so.
    const stranger = sandbox()
    const refused = await runLathe(["run", "--attach", server.url, "say hello"], {
      cwd: stranger.project,
      env: stranger.env
    })
    assert.strictEqual(refused.code, 1)
    assert.match(refused.stderr, /token/)
  }, 40_000)

  it("removes the saved token when it stops", async () => {
    const own = sandbox()
    const other = await startServe(["--port", "0"], {
      cwd: own.project,
      env: { ...own.env, LATHE_BASE_URL: model.url, LATHE_MODEL: "m" }
    })
    const file = join(own.env.LATHE_DATA_DIR ?? "", "servers", `${new URL(other.url).port}.token`)
    assert.isTrue(existsSync(file))
    other.child.kill("SIGTERM")
    const code = await other.exited
    assert.strictEqual(code, 0, `stderr: ${other.stderr()}`)
    assert.isFalse(existsSync(file))
  }, 40_000)
})
