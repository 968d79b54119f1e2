/**
 * JSON-RPC 2.0 over a byte stream with LSP's `Content-Length` framing: the few dozen lines a language-server client
 * needs, written here rather than taken from vscode-jsonrpc (its cancellation, tracing and message-reader layers are
 * more than Lathe uses, and each dependency is one more thing the published CLI carries).
 */
import type { Readable, Writable } from "node:stream"

/** A JSON-RPC error the server answered with. */
export class RpcError extends Error {
  override readonly name = "RpcError"
  constructor(
    message: string,
    readonly code: number
  ) {
    super(message)
  }
}

/** The connection closed (the server exited) before it answered. */
export class RpcClosed extends Error {
  override readonly name = "RpcClosed"
}

interface Pending {
  readonly resolve: (value: unknown) => void
  readonly reject: (error: Error) => void
  readonly timer: NodeJS.Timeout | undefined
}

type NotificationHandler = (params: unknown) => void
/** Answers a request the server sends the client (`workspace/configuration`, `client/registerCapability`, …). */
type RequestHandler = (params: unknown) => unknown

const HEADER_END = Buffer.from("\r\n\r\n")

/** One JSON-RPC connection: requests with timeouts, notifications both ways, and requests from the server. */
export class RpcConnection {
  private nextId = 1
  private buffer: Buffer = Buffer.alloc(0)
  private closed = false
  private readonly pending = new Map<number, Pending>()
  private readonly notificationHandlers = new Map<string, NotificationHandler>()
  private readonly requestHandlers = new Map<string, RequestHandler>()

  constructor(
    input: Readable,
    private readonly output: Writable
  ) {
    input.on("data", (chunk: Buffer) => this.receive(chunk))
    input.on("close", () => this.close("the server closed its output"))
    input.on("error", () => this.close("the server's output failed"))
    // A write to a server that just died fails asynchronously; the exit is reported elsewhere.
    output.on("error", () => this.close("the server's input failed"))
  }

  /** Sends a request; rejects with {@link RpcError}, {@link RpcClosed}, or a timeout after `timeoutMs`. */
  request(method: string, params: unknown, timeoutMs?: number): Promise<unknown> {
    if (this.closed) return Promise.reject(new RpcClosed(`${method}: the language server is not running`))
    const id = this.nextId++
    return new Promise((resolve, reject) => {
      const timer =
        timeoutMs === undefined
          ? undefined
          : setTimeout(() => {
              this.pending.delete(id)
              reject(new Error(`${method}: no answer within ${timeoutMs} ms`))
            }, timeoutMs)
      timer?.unref()
      this.pending.set(id, { resolve, reject, timer })
      this.send({ jsonrpc: "2.0", id, method, params })
    })
  }

  notify(method: string, params: unknown): void {
    if (!this.closed) this.send({ jsonrpc: "2.0", method, params })
  }

  onNotification(method: string, handler: NotificationHandler): void {
    this.notificationHandlers.set(method, handler)
  }

  onRequest(method: string, handler: RequestHandler): void {
    this.requestHandlers.set(method, handler)
  }

  /** Fails every pending request; later requests fail at once. */
  close(reason = "the connection was closed"): void {
    if (this.closed) return
    this.closed = true
    for (const [, pending] of this.pending) {
      if (pending.timer) clearTimeout(pending.timer)
      pending.reject(new RpcClosed(reason))
    }
    this.pending.clear()
  }

  private send(message: unknown): void {
    const body = Buffer.from(JSON.stringify(message), "utf8")
    this.output.write(Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`, "ascii"), body]))
  }

  private receive(chunk: Buffer): void {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk])
    for (;;) {
      const headerEnd = this.buffer.indexOf(HEADER_END)
      if (headerEnd < 0) return
      const header = this.buffer.subarray(0, headerEnd).toString("ascii")
      const length = /content-length:\s*(\d+)/i.exec(header)?.[1]
      if (length === undefined) {
        // Not LSP framing (a server printing to stdout): skip past the bad header and resynchronise.
        this.buffer = this.buffer.subarray(headerEnd + HEADER_END.length)
        continue
      }
      const start = headerEnd + HEADER_END.length
      const end = start + Number(length)
      if (this.buffer.length < end) return
      const body = this.buffer.subarray(start, end).toString("utf8")
      this.buffer = this.buffer.subarray(end)
      let message: unknown
      try {
        message = JSON.parse(body)
      } catch {
        continue
      }
      this.dispatch(message)
    }
  }

  private dispatch(message: unknown): void {
    if (typeof message !== "object" || message === null) return
    const m = message as {
      id?: number | string
      method?: string
      params?: unknown
      result?: unknown
      error?: { message?: string; code?: number }
    }
    if (m.method !== undefined && m.id !== undefined) {
      const handler = this.requestHandlers.get(m.method)
      const reply = (payload: object) => {
        if (!this.closed) this.send({ jsonrpc: "2.0", id: m.id, ...payload })
      }
      if (!handler) {
        reply({ error: { code: -32601, message: `${m.method} is not supported` } })
        return
      }
      Promise.resolve()
        .then(() => handler(m.params))
        .then(
          (result) => reply({ result: result ?? null }),
          (error: unknown) => reply({ error: { code: -32603, message: String(error) } })
        )
      return
    }
    if (m.method !== undefined) {
      this.notificationHandlers.get(m.method)?.(m.params)
      return
    }
    if (typeof m.id !== "number") return
    const pending = this.pending.get(m.id)
    if (!pending) return
    this.pending.delete(m.id)
    if (pending.timer) clearTimeout(pending.timer)
    if (m.error) pending.reject(new RpcError(m.error.message ?? "request failed", m.error.code ?? 0))
    else pending.resolve(m.result)
  }
}
