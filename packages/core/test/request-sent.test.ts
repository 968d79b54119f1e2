import { type ClientRequest, createServer, request, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { afterNextRequestSent } from "../src/process/request-sent.js"

/** A server on 127.0.0.1 that reads each body whole, then answers with its length. */
let server: Server
let url: string
beforeAll(async () => {
  server = createServer((incoming, answer) => {
    let bytes = 0
    incoming.on("data", (chunk: Buffer) => {
      bytes += chunk.length
    })
    incoming.on("end", () => answer.end(String(bytes)))
  })
  await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
})
afterAll(() => new Promise<void>((closed) => server.close(() => closed())))

/** Posts `body` with `node:http`; the request, and its answer's text once it comes. */
const post = (body: Buffer): { readonly sent: ClientRequest; readonly answer: Promise<string> } => {
  let sent: ClientRequest | undefined
  const answer = new Promise<string>((done, fail) => {
    sent = request(url, { method: "POST", headers: { "content-length": String(body.length) } }, (response) => {
      let text = ""
      response.on("data", (chunk: Buffer) => {
        text += chunk.toString()
      })
      response.on("end", () => done(text))
    })
    sent.on("error", fail)
    sent.end(body)
  })
  return { sent: sent as ClientRequest, answer }
}

describe("afterNextRequestSent", () => {
  it("calls once the next request's body is written out, on a later turn, and only once", async () => {
    const seen: Array<boolean> = []
    let current: ClientRequest | undefined
    afterNextRequestSent(() => seen.push(current?.writableFinished === true))
    await new Promise((turn) => setImmediate(turn))
    assert.deepStrictEqual(seen, [], "no request yet")
    const first = post(Buffer.alloc(4 * 1024 * 1024, 120))
    current = first.sent
    assert.deepStrictEqual(seen, [], "not while the request is being made")
    assert.strictEqual(await first.answer, String(4 * 1024 * 1024))
    assert.deepStrictEqual(seen, [true], "after its body was written")
    await post(Buffer.from("again")).answer
    assert.deepStrictEqual(seen, [true], "once")
  })

  it("calls at once through the function it returns, when someone needs the work before a request goes out", async () => {
    let calls = 0
    const now = afterNextRequestSent(() => calls++)
    now()
    assert.strictEqual(calls, 1)
    now()
    await post(Buffer.from("later")).answer
    await new Promise((turn) => setImmediate(turn))
    assert.strictEqual(calls, 1, "neither a second call nor the request calls again")
  })

  it("counts a request sent through the global fetch (undici) once its body is sent", async () => {
    let calls = 0
    afterNextRequestSent(() => calls++)
    const response = await fetch(url, { method: "POST", body: "through fetch" })
    assert.strictEqual(await response.text(), "13")
    await new Promise((turn) => setImmediate(turn))
    assert.strictEqual(calls, 1)
  })
})
