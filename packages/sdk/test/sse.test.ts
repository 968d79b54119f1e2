import { describe, expect, it } from "@effect/vitest"
import { parseSse, type SseMessage } from "../src/sse.js"

/** A body that delivers `chunks` one read at a time, as a network would. */
const body = (chunks: ReadonlyArray<string | Uint8Array>): ReadableStream<Uint8Array> => {
  const encoder = new TextEncoder()
  let i = 0
  return new ReadableStream({
    pull(controller) {
      const chunk = chunks[i++]
      if (chunk === undefined) controller.close()
      else controller.enqueue(typeof chunk === "string" ? encoder.encode(chunk) : chunk)
    }
  })
}

const collect = async (chunks: ReadonlyArray<string | Uint8Array>): Promise<Array<SseMessage>> => {
  const messages: Array<SseMessage> = []
  for await (const message of parseSse(body(chunks))) messages.push(message)
  return messages
}

describe("parseSse", () => {
  it("reads id, event and data, skips comments, and joins data lines", async () => {
    const messages = await collect([
      ": keep-alive\n\n",
      'id: 1\nevent: notice\ndata: {"a":1}\n\n',
      "id: 2\ndata: line one\ndata: line two\n\n"
    ])
    expect(messages).toEqual([
      { id: "1", event: "notice", data: '{"a":1}', retry: undefined },
      { id: "2", event: "message", data: "line one\nline two", retry: undefined }
    ])
  })

  it("handles messages split anywhere across chunks, CRLF and CR line ends, and a BOM", async () => {
    const text = "\uFEFFid: 7\r\nevent: x\r\ndata: é😀\r\n\r\nid:8\rdata:no space\r\r"
    const bytes = new TextEncoder().encode(text)
    // one byte per chunk: splits CRLF pairs and multi-byte characters
    const messages = await collect(Array.from(bytes, (b) => Uint8Array.of(b)))
    expect(messages).toEqual([
      { id: "7", event: "x", data: "é😀", retry: undefined },
      { id: "8", event: "message", data: "no space", retry: undefined }
    ])
  })

  it("keeps the last id for later messages, reads retry, ignores NUL ids, unknown fields and empty messages", async () => {
    const messages = await collect([
      "id: 3\n\n", // no data: not dispatched, but the id counts
      "retry: 250\nfoo: bar\ndata: a\n\n",
      "id: 4\u0000x\ndata: b\n\n",
      "retry: soon\ndata: c\n\n",
      "data: unterminated"
    ])
    expect(messages).toEqual([
      { id: "3", event: "message", data: "a", retry: 250 },
      { id: "3", event: "message", data: "b", retry: undefined },
      { id: "3", event: "message", data: "c", retry: undefined }
    ])
  })

  it("cancels the body when the reader stops early", async () => {
    let cancelled = false
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode("data: 1\n\ndata: 2\n\n"))
      },
      cancel() {
        cancelled = true
      }
    })
    for await (const message of parseSse(stream)) {
      expect(message.data).toBe("1")
      break
    }
    expect(cancelled).toBe(true)
  })
})
