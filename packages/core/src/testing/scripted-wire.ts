import { createServer, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import type { RecordedRequest, ScriptedServer } from "./scripted-server.js"

/** Which provider API a wire server speaks. */
export type WireFormat = "anthropic" | "openai-responses"

/** Token counts of a wire reply, as the provider reports them: `input` excludes cache reads and writes. */
export interface WireUsage {
  readonly input: number
  readonly output: number
  readonly cacheRead?: number
  readonly cacheWrite?: number
}

/** One streamed reply: text, or a tool call (Anthropic only), and its usage (default 10 in, 5 out). */
export interface WireReply {
  readonly text?: string
  readonly tool?: { readonly name: string; readonly input: unknown; readonly id?: string }
  readonly usage?: WireUsage
}

/** The script of a wire server: one reply per request, or a function of the 0-based request index. */
export type WireScript = ReadonlyArray<WireReply> | ((request: RecordedRequest, index: number) => WireReply)

const event = (res: ServerResponse, type: string, data: Record<string, unknown>) =>
  res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`)

/** An Anthropic Messages stream: message_start (with the usage), one content block, message_delta, message_stop. */
const playAnthropic = (res: ServerResponse, reply: WireReply, index: number, model: string) => {
  const usage = reply.usage ?? { input: 10, output: 5 }
  res.writeHead(200, { "content-type": "text/event-stream" })
  event(res, "message_start", {
    message: {
      id: `msg_${index}`,
      type: "message",
      role: "assistant",
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: {
        input_tokens: usage.input,
        output_tokens: 1,
        cache_read_input_tokens: usage.cacheRead ?? 0,
        cache_creation_input_tokens: usage.cacheWrite ?? 0
      }
    }
  })
  if (reply.tool) {
    const id = reply.tool.id ?? `toolu_${index}`
    event(res, "content_block_start", {
      index: 0,
      content_block: { type: "tool_use", id, name: reply.tool.name, input: {} }
    })
    event(res, "content_block_delta", {
      index: 0,
      delta: { type: "input_json_delta", partial_json: JSON.stringify(reply.tool.input) }
    })
  } else {
    event(res, "content_block_start", { index: 0, content_block: { type: "text", text: "" } })
    event(res, "content_block_delta", { index: 0, delta: { type: "text_delta", text: reply.text ?? "" } })
  }
  event(res, "content_block_stop", { index: 0 })
  event(res, "message_delta", {
    delta: { stop_reason: reply.tool ? "tool_use" : "end_turn", stop_sequence: null },
    usage: { output_tokens: usage.output }
  })
  event(res, "message_stop", {})
  res.end()
}

/** An OpenAI Responses stream: created, one message item with its text, completed (with the usage). */
const playResponses = (res: ServerResponse, reply: WireReply, index: number, model: string) => {
  const usage = reply.usage ?? { input: 10, output: 5 }
  const item = `msg_${index}`
  res.writeHead(200, { "content-type": "text/event-stream" })
  event(res, "response.created", { response: { id: `resp_${index}`, created_at: 0, model } })
  event(res, "response.output_item.added", { output_index: 0, item: { type: "message", id: item } })
  event(res, "response.output_text.delta", { item_id: item, output_index: 0, delta: reply.text ?? "" })
  event(res, "response.output_item.done", { output_index: 0, item: { type: "message", id: item } })
  event(res, "response.completed", {
    response: {
      usage: {
        input_tokens: usage.input + (usage.cacheRead ?? 0),
        input_tokens_details: { cached_tokens: usage.cacheRead ?? 0 },
        output_tokens: usage.output
      }
    }
  })
  res.end()
}

/**
 * Starts a real HTTP server on 127.0.0.1 (a free port) that speaks a provider's own streaming wire format (the
 * Anthropic Messages API or the OpenAI Responses API), recording every request. Its `url` ends with `/v1`, as both
 * SDKs' `baseURL` does. A request past the script's end gets the last reply again.
 */
export const startWireServer = async (format: WireFormat, script: WireScript): Promise<ScriptedServer> => {
  const requests: Array<RecordedRequest> = []
  const server = createServer((req, res) => {
    const receivedAt = performance.now()
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8")
      let body: unknown = text
      try {
        body = JSON.parse(text)
      } catch {}
      const recorded: RecordedRequest = {
        method: req.method ?? "GET",
        path: req.url ?? "/",
        headers: req.headers,
        body,
        receivedAt
      }
      const index = requests.length
      requests.push(recorded)
      res.on("finish", () => {
        recorded.answeredAt = performance.now()
      })
      const reply = typeof script === "function" ? script(recorded, index) : (script[index] ?? script.at(-1) ?? {})
      const model = (body as { model?: unknown } | undefined)?.model
      const name = typeof model === "string" ? model : "scripted"
      if (format === "anthropic") playAnthropic(res, reply, index, name)
      else playResponses(res, reply, index, name)
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => resolve())
  })
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
