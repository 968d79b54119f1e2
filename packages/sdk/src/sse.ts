/**
 * A Server-Sent Events parser for `fetch` response bodies, written to the WHATWG "event stream interpretation"
 * rules: lines end with CRLF, LF or CR; `:` starts a comment (ignored: the server's keep-alives); `data` lines are
 * joined with newlines; an `id` containing NUL is ignored; a message without data is not dispatched (its `id` still
 * counts). Plain TypeScript over web streams, so it runs in Node, Deno, Bun and browsers.
 */

/** One dispatched message. */
export interface SseMessage {
  /** The `id` in force when the message was dispatched (the stream's last event ID), if any was sent. */
  readonly id: string | undefined
  /** The `event` field; `message` when the server sent none. */
  readonly event: string
  readonly data: string
  /** The reconnection delay the server asked for with `retry:`, in milliseconds, if it did in this message. */
  readonly retry: number | undefined
}

/**
 * Parses an event stream body. Yields each message as soon as its blank line arrives; returns when the body ends
 * (an unterminated last message is dropped, as the standard says). Cancelling the iteration cancels the body.
 */
export async function* parseSse(body: ReadableStream<Uint8Array>): AsyncGenerator<SseMessage, void, undefined> {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader()
  let buffer = ""
  let lastId: string | undefined
  let event = ""
  let data: Array<string> = []
  let retry: number | undefined
  let first = true
  try {
    for (;;) {
      const chunk = await reader.read()
      if (chunk.done) {
        // a CR that ended the body ended its line too
        if (!buffer.endsWith("\r")) return
        buffer += "\n"
      } else buffer += chunk.value
      if (first && buffer.length > 0) {
        if (buffer.charCodeAt(0) === 0xfeff) buffer = buffer.slice(1)
        first = false
      }
      let position = 0
      for (;;) {
        const end = lineEnd(buffer, position)
        if (end === undefined) break
        const line = buffer.slice(position, end.index)
        position = end.index + end.length
        if (line === "") {
          if (data.length > 0)
            yield { id: lastId, event: event === "" ? "message" : event, data: data.join("\n"), retry }
          event = ""
          data = []
          retry = undefined
          continue
        }
        if (line.startsWith(":")) continue
        const colon = line.indexOf(":")
        const field = colon === -1 ? line : line.slice(0, colon)
        let value = colon === -1 ? "" : line.slice(colon + 1)
        if (value.startsWith(" ")) value = value.slice(1)
        if (field === "data") data.push(value)
        else if (field === "event") event = value
        else if (field === "id" && !value.includes("\0")) lastId = value
        else if (field === "retry" && /^\d+$/.test(value)) retry = Number(value)
      }
      buffer = buffer.slice(position)
      if (chunk.done) return
    }
  } finally {
    await reader.cancel().catch(() => undefined)
  }
}

/**
 * Where the first complete line of `buffer` from `from` on ends. A CR at the very end is not yet a line end: the next chunk may
 * start with its LF.
 */
const lineEnd = (buffer: string, from: number): { index: number; length: number } | undefined => {
  for (let i = from; i < buffer.length; i++) {
    const c = buffer.charCodeAt(i)
    if (c === 10) return { index: i, length: 1 }
    if (c === 13) {
      if (i + 1 === buffer.length) return undefined
      return { index: i, length: buffer.charCodeAt(i + 1) === 10 ? 2 : 1 }
    }
  }
  return undefined
}
