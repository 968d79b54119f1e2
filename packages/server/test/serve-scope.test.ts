import { mkdirSync, mkdtempSync, realpathSync, symlinkSync } from "node:fs"
import { request } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { chunks, testLoopLayer } from "@lathe/core/testing"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type LatheServer, MAX_BODY_BYTES, ServeError, type ServeOptions, serve } from "../src/index.js"

// "Walls, round three": `lathe serve` let its token holder run the agent in any folder of the machine and read
// request bodies of any size. Here a real server on 127.0.0.1, spoken to with raw node:http.

const app: ServeOptions["app"] = (directory) =>
  testLoopLayer({ root: directory, steps: [[...chunks.text("Hello."), ...chunks.finish({ input: 5, output: 3 })]] })

interface Answer {
  readonly status: number
  readonly body: { error?: { code: string; message: string }; directory?: string } & Record<string, unknown>
}

/**
 * One raw request. `body` is sent whole; `stream` sends `stream.chunks` chunks of `stream.size` bytes (chunked, or
 * with `stream.length` as Content-Length) and stops writing once the answer arrives. Resolves with the answer.
 */
const send = (
  server: LatheServer,
  path: string,
  options: {
    readonly body?: string
    readonly headers?: Record<string, string>
    readonly stream?: { readonly size: number; readonly chunks: number; readonly length?: number }
  } = {}
): Promise<Answer & { written: number }> =>
  new Promise((resolve, reject) => {
    let written = 0
    let answered = false
    const req = request(
      {
        host: "127.0.0.1",
        port: server.port,
        path,
        method: options.body === undefined && options.stream === undefined ? "GET" : "POST",
        headers: {
          host: `127.0.0.1:${server.port}`,
          authorization: `Bearer ${server.token}`,
          "content-type": "application/json",
          ...(options.stream?.length !== undefined ? { "content-length": String(options.stream.length) } : {}),
          ...options.headers
        }
      },
      (res) => {
        answered = true
        let text = ""
        res.on("data", (chunk: Buffer) => {
          text += chunk.toString("utf8")
        })
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, body: text === "" ? {} : JSON.parse(text), written })
        )
      }
    )
    // After the answer the server closes the connection: the rest of the upload fails, as it should.
    req.on("error", (error) => (answered ? undefined : reject(error)))
    if (options.stream) {
      const chunk = Buffer.alloc(options.stream.size, 0x20)
      let left = options.stream.chunks
      const pump = () => {
        while (left > 0 && !answered && !req.destroyed) {
          left -= 1
          written += chunk.length
          if (!req.write(chunk)) return void req.once("drain", pump)
        }
        if (left === 0 && !answered) req.end()
      }
      pump()
    } else req.end(options.body)
  })

describe("lathe serve: directories a request may name", () => {
  let served: string
  let outside: string
  let server: LatheServer
  beforeAll(async () => {
    const box = realpathSync(mkdtempSync(join(tmpdir(), "lathe-scope-")))
    served = join(box, "served")
    outside = join(box, "outside")
    mkdirSync(join(served, "sub"), { recursive: true })
    mkdirSync(outside)
    // A link committed inside the served directory that leads out of it.
    symlinkSync(outside, join(served, "link-out"))
    server = await start({ directory: served })
  })
  afterAll(() => server.close(5_000))

  const start = (options: Partial<ServeOptions>) => serve({ app, port: 0, ...options })

  it("takes the served directory and the folders below it", async () => {
    for (const directory of [served, "sub", join(served, "sub")]) {
      const created = await send(server, "/sessions", { body: JSON.stringify({ directory }) })
      expect(created.status, JSON.stringify(created.body)).toBe(201)
    }
  })

  it("refuses a folder outside, by name, through `..` or through a symlink inside, with 403 naming the flag", async () => {
    for (const directory of [outside, "sub/../../outside", "link-out", join(served, "link-out")]) {
      const refused = await send(server, "/sessions", { body: JSON.stringify({ directory }) })
      expect(refused.status).toBe(403)
      expect(refused.body.error?.code).toBe("forbidden")
      expect(refused.body.error?.message).toContain(`--allow-directory ${outside}`)
    }
    const listed = await send(server, `/sessions?directory=${encodeURIComponent(outside)}`)
    expect(listed.status).toBe(403)
  })

  it("takes a folder allowed with allowedDirectories (and below it); a missing one stops the start", async () => {
    mkdirSync(join(outside, "deeper"), { recursive: true })
    const wider = await start({ directory: served, allowedDirectories: [outside] })
    try {
      for (const directory of [outside, join(outside, "deeper"), "link-out"]) {
        const created = await send(wider, "/sessions", { body: JSON.stringify({ directory }) })
        expect(created.status, JSON.stringify(created.body)).toBe(201)
        expect(String(created.body.directory).startsWith(outside)).toBe(true)
      }
    } finally {
      await wider.close(5_000)
    }
    await expect(start({ directory: served, allowedDirectories: [join(outside, "nope")] })).rejects.toThrow(ServeError)
  })
})

describe("lathe serve: request bodies", () => {
  let server: LatheServer
  beforeAll(async () => {
    server = await serve({ app, port: 0, directory: mkdtempSync(join(tmpdir(), "lathe-body-")) })
  })
  afterAll(() => server.close(5_000))

  it("answers a Content-Length over the cap with 413 before reading any of the body", async () => {
    // Only the headers are sent: the answer cannot have waited for a body.
    const answer = await send(server, "/sessions", { stream: { size: 1, chunks: 0, length: MAX_BODY_BYTES + 1 } })
    expect(answer.status).toBe(413)
    expect(answer.body.error?.code).toBe("payload_too_large")
    expect(answer.body.error?.message).toContain("at most 10 MB")
  })

  it("cuts a chunked body off with 413 once it passes the cap, before the sender is done", async () => {
    const chunk = 1024 * 1024
    const answer = await send(server, "/sessions", { stream: { size: chunk, chunks: 200 } })
    expect(answer.status).toBe(413)
    expect(answer.body.error?.code).toBe("payload_too_large")
    expect(answer.written).toBeLessThan(200 * chunk)
  })

  it("takes a body under the cap", async () => {
    const title = "t".repeat(1024 * 1024)
    const created = await send(server, "/sessions", { body: JSON.stringify({ title }) })
    expect(created.status).toBe(201)
    expect(created.body.title).toBe(title)
  })
})
