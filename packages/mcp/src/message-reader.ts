import { deserializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js"
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"

/**
 * The largest message Lathe reads from a local MCP server: 16 MiB (one line of newline-delimited JSON-RPC). A tool
 * result is cut to 50 KB before the model sees it, so a larger answer is never useful; past this the server's
 * connection is closed rather than the line kept growing in memory.
 */
export const MCP_MESSAGE_MAX_BYTES = 16 * 1024 * 1024

/** Why a server's output cannot be read: a message over the cap, or a line that is not a JSON-RPC message. */
export class McpMessageError extends Error {
  readonly _tag = "McpMessageError"
  constructor(
    readonly kind: "oversized" | "malformed",
    message: string
  ) {
    super(message)
  }
}

const NEWLINE = 0x0a
const mb = (bytes: number) => `${Math.round(bytes / (1024 * 1024))} MB`

/**
 * Splits a server's stdout into JSON-RPC messages, holding at most {@link MCP_MESSAGE_MAX_BYTES} of an unfinished
 * line. Contract: `read` hands every message completed by a chunk to `deliver`, in order, then throws
 * {@link McpMessageError} at the first line over the cap, or that looks like JSON (starts with `{` or `[`) but is
 * not a valid JSON-RPC message; after a throw the reader is spent (the connection is to be closed). A line that
 * does not look like JSON (a stray log line on stdout) is skipped. No message content is put in an error.
 */
export class MessageReader {
  private pending: Array<Buffer> = []
  private size = 0

  constructor(private readonly maxBytes = MCP_MESSAGE_MAX_BYTES) {}

  read(chunk: Buffer, deliver: (message: JSONRPCMessage) => void): void {
    let start = 0
    for (let end = chunk.indexOf(NEWLINE, start); end !== -1; end = chunk.indexOf(NEWLINE, start)) {
      const piece = chunk.subarray(start, end)
      start = end + 1
      this.guard(this.size + piece.length)
      const line = this.size === 0 ? piece : Buffer.concat([...this.pending, piece])
      this.pending = []
      this.size = 0
      const message = this.parse(line)
      if (message !== undefined) deliver(message)
    }
    if (start < chunk.length) {
      const rest = chunk.subarray(start)
      this.guard(this.size + rest.length)
      this.pending.push(rest)
      this.size += rest.length
    }
  }

  /** Forgets an unfinished line. */
  clear(): void {
    this.pending = []
    this.size = 0
  }

  private guard(size: number): void {
    if (size <= this.maxBytes) return
    this.clear()
    throw new McpMessageError("oversized", `sent a message over ${mb(this.maxBytes)} (Lathe's limit)`)
  }

  private parse(line: Buffer): JSONRPCMessage | undefined {
    const text = line.toString("utf8").trim()
    if (!text.startsWith("{") && !text.startsWith("[")) return undefined
    try {
      return deserializeMessage(text)
    } catch (error) {
      const what =
        error instanceof SyntaxError ? "a line that is not valid JSON" : "JSON that is not a JSON-RPC message"
      throw new McpMessageError("malformed", `sent ${what} (${line.length} bytes)`)
    }
  }
}
