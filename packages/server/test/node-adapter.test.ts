import { createServer } from "node:http"
import { connect } from "node:net"
import { describe, expect, it } from "@effect/vitest"
import { writeWebResponse } from "../src/node-adapter.js"

describe("writeWebResponse", () => {
  it("reads no further than a slow client takes (backpressure), and stops when it leaves", async () => {
    let produced = 0
    const chunk = new Uint8Array(64 * 1024)
    let cancelled = false
    const server = createServer((_req, res) => {
      const body = new ReadableStream<Uint8Array>(
        {
          pull: (controller) => {
            produced += chunk.byteLength
            controller.enqueue(chunk)
          },
          cancel: () => {
            cancelled = true
          }
        },
        { highWaterMark: 0 }
      )
      void writeWebResponse(new Response(body, { headers: { "content-type": "application/octet-stream" } }), res)
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const { port } = server.address() as { port: number }
    // A client that sends its request and then reads nothing.
    const socket = connect(port, "127.0.0.1")
    socket.pause()
    socket.write(`GET / HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n`)
    await new Promise((resolve) => setTimeout(resolve, 500))
    // An unread socket holds a few MB at most (kernel buffers + one chunk); without backpressure this grows by
    // hundreds of MB in half a second.
    expect(produced).toBeLessThan(32 * 1024 * 1024)
    socket.destroy()
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(cancelled).toBe(true)
    await new Promise<void>((resolve) => server.close(() => resolve()))
  })
})
