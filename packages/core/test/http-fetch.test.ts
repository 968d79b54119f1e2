import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { gzipSync } from "node:zlib"
import { afterEach, assert, describe, it } from "vitest"
import { toProviderError } from "../src/llm/provider-error.js"
import { nodeFetch, proxyConfigured } from "../src/provider/http-fetch.js"

type Handler = (request: IncomingMessage, response: ServerResponse, body: string) => void

const servers: Array<Server> = []
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  }
})

/** A real HTTP server on 127.0.0.1; counts the connections it accepted. */
const serve = async (handler: Handler) => {
  let connections = 0
  const server = createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => handler(request, response, Buffer.concat(chunks).toString("utf8")))
  })
  server.on("connection", () => {
    connections++
  })
  servers.push(server)
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return { url: `http://127.0.0.1:${port}`, connections: () => connections }
}

const freePort = async () => {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  await new Promise((resolve) => server.close(resolve))
  return port
}

const rejection = async (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => assert.fail("expected a rejection"),
    (error: unknown) => error
  )

describe("nodeFetch", () => {
  it("posts the body with its byte length and streams the answer chunk by chunk", async () => {
    let seen: Record<string, string | undefined> = {}
    const server = await serve((request, response, body) => {
      seen = {
        method: request.method,
        type: request.headers["content-type"],
        length: request.headers["content-length"],
        body
      }
      response.writeHead(200, { "content-type": "text/event-stream", "x-request-id": "r1" })
      response.write("data: one\n\n")
      setTimeout(() => response.end("data: two\n\n"), 30)
    })
    const response = await nodeFetch(`${server.url}/v1/chat`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ text: "héllo" })
    })
    assert.strictEqual(response.status, 200)
    assert.isTrue(response.ok)
    assert.strictEqual(response.headers.get("x-request-id"), "r1")
    assert.deepStrictEqual(seen, {
      method: "POST",
      type: "application/json",
      length: String(Buffer.byteLength('{"text":"héllo"}')),
      body: '{"text":"héllo"}'
    })
    const reader = response.body?.getReader()
    const decoder = new TextDecoder()
    const first = await reader?.read()
    assert.strictEqual(
      decoder.decode(first?.value),
      "data: one\n\n",
      "the first chunk arrives before the second is sent"
    )
    let rest = ""
    for (let next = await reader?.read(); next && !next.done; next = await reader?.read())
      rest += decoder.decode(next.value)
    assert.strictEqual(rest, "data: two\n\n")
  })

  it("reuses one keep-alive connection for the loop's requests; errors keep their bodies; 204 has none", async () => {
    const server = await serve((request, response) => {
      if (request.url === "/empty") {
        response.writeHead(204)
        response.end()
        return
      }
      if (request.url === "/bad") {
        response.writeHead(429, { "content-type": "application/json", "retry-after": "2" })
        response.end('{"error":{"message":"slow down"}}')
        return
      }
      response.end("ok")
    })
    for (let i = 0; i < 3; i++) assert.strictEqual(await (await nodeFetch(`${server.url}/`)).text(), "ok")
    const bad = await nodeFetch(`${server.url}/bad`, { method: "POST", body: "{}" })
    assert.isFalse(bad.ok)
    assert.strictEqual(bad.status, 429)
    assert.strictEqual(bad.headers.get("retry-after"), "2")
    assert.deepStrictEqual(await bad.json(), { error: { message: "slow down" } })
    const empty = await nodeFetch(`${server.url}/empty`)
    assert.strictEqual(empty.status, 204)
    assert.isNull(empty.body)
    assert.strictEqual(server.connections(), 1)
  })

  it("sends headers given as a record, as pairs or as Headers the way fetch would", async () => {
    const seen: Array<Record<string, string | Array<string> | undefined>> = []
    const server = await serve((request, response) => {
      seen.push({ a: request.headers["x-a"], b: request.headers["x-b"], type: request.headers["content-type"] })
      response.end()
    })
    const forms: Array<NonNullable<RequestInit["headers"]>> = [
      { "X-A": " one ", "Content-Type": "text/plain" },
      [
        ["x-a", "one"],
        ["X-B", "two"],
        ["x-b", "three"]
      ],
      new Headers([
        ["X-A", "one"],
        ["x-b", "two"],
        ["X-B", "three"]
      ])
    ]
    for (const headers of forms)
      await (await nodeFetch(`${server.url}/`, { method: "POST", headers, body: "x" })).text()
    assert.deepStrictEqual(seen, [
      { a: "one", b: undefined, type: "text/plain" },
      { a: "one", b: "two, three", type: undefined },
      { a: "one", b: "two, three", type: undefined }
    ])
  })

  it("decodes a gzip body and follows a redirect (through the global fetch)", async () => {
    const server = await serve((request, response) => {
      if (request.url === "/old") {
        response.writeHead(307, { location: "/new" })
        response.end()
        return
      }
      if (request.url === "/new") {
        response.end(`moved ${request.method}`)
        return
      }
      response.writeHead(200, { "content-encoding": "gzip" })
      response.end(gzipSync("packed text"))
    })
    assert.strictEqual(await (await nodeFetch(`${server.url}/zip`)).text(), "packed text")
    assert.strictEqual(await (await nodeFetch(`${server.url}/old`, { method: "POST", body: "x" })).text(), "moved POST")
  })

  it("a refused connection rejects like fetch, and Lathe retries it as a cut stream", async () => {
    const url = `http://127.0.0.1:${await freePort()}/v1`
    const error = await rejection(nodeFetch(url, { method: "POST", body: "{}" }))
    assert.instanceOf(error, TypeError)
    assert.strictEqual((error as Error).message, "fetch failed")
    assert.strictEqual(((error as Error).cause as { code?: string }).code, "ECONNREFUSED")
    // Through the SDK (which wraps this as "Cannot connect to API") it reads "Cannot connect to …": see llm.test.ts.
    assert.strictEqual(toProviderError(error, "local", "m", { url }).reason._tag, "StreamCut")
  })

  it("a body cut mid-way errors the stream with 'terminated', which Lathe retries as a cut stream", async () => {
    const server = await serve((_request, response) => {
      response.writeHead(200, { "content-type": "text/event-stream" })
      response.write("data: partial\n\n")
      setTimeout(() => response.socket?.destroy(), 20)
    })
    const response = await nodeFetch(`${server.url}/`)
    const reader = response.body?.getReader()
    await reader?.read()
    const error = await rejection(reader?.read() ?? Promise.resolve())
    assert.instanceOf(error, TypeError)
    assert.strictEqual((error as Error).message, "terminated")
    const classified = toProviderError(error, "local", "m", { url: server.url })
    assert.strictEqual(classified.reason._tag, "StreamCut")
    assert.match(classified.message, /cut mid-response/)
  })

  it("an abort before the answer rejects, and one during the body errors the stream, both as AbortError", async () => {
    const server = await serve((request, response) => {
      if (request.url === "/slow") return // never answers
      response.writeHead(200)
      response.write("first")
    })
    const early = new AbortController()
    const pending = nodeFetch(`${server.url}/slow`, { signal: early.signal })
    setTimeout(() => early.abort(), 20)
    const before = await rejection(pending)
    assert.strictEqual((before as Error).name, "AbortError")
    assert.strictEqual(toProviderError(before, "local", "m").reason._tag, "Aborted")

    const late = new AbortController()
    const response = await nodeFetch(`${server.url}/stream`, { signal: late.signal })
    const reader = response.body?.getReader()
    await reader?.read()
    late.abort()
    const during = await rejection(reader?.read() ?? Promise.resolve())
    assert.strictEqual((during as Error).name, "AbortError")

    const already = new AbortController()
    already.abort()
    assert.strictEqual(
      ((await rejection(nodeFetch(`${server.url}/`, { signal: already.signal }))) as Error).name,
      "AbortError"
    )
  })

  it("leaves proxied set-ups to the global fetch", () => {
    assert.isFalse(proxyConfigured({}))
    assert.isFalse(proxyConfigured({ HTTPS_PROXY: "" }))
    assert.isTrue(proxyConfigured({ HTTPS_PROXY: "http://proxy:3128" }))
    assert.isTrue(proxyConfigured({ NODE_USE_ENV_PROXY: "1" }))
  })
})
