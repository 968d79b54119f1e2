import type { ServerResponse } from "node:http"
import type { RecordedRequest, ScriptedServer } from "./scripted-server.js"
import { modelOf, startRecordingServer } from "./wire-http.js"

/** Token counts of a Responses reply as the API reports them: `input` and `output` are totals. */
export interface ResponsesWireUsage {
  /** Every input token, cached ones included. */
  readonly input: number
  /** Every output token, reasoning included. */
  readonly output: number
  readonly cached?: number
  readonly reasoning?: number
}

/** A reasoning item: its summary parts and the encrypted reasoning a stateless (`store: false`) client gets back. */
export interface ResponsesWireReasoning {
  readonly summary: ReadonlyArray<string>
  /** `encrypted_content` of the finished item (sent when the request's `include` asks for it, as the API does). */
  readonly encrypted: string
}

/** One streamed reply: text or one function call (after a reasoning item, if any), and its usage (default 10 in, 5 out). */
export interface ResponsesWireReply {
  readonly reasoning?: ResponsesWireReasoning
  readonly text?: string
  readonly tool?: { readonly name: string; readonly input: unknown; readonly id?: string }
  readonly usage?: ResponsesWireUsage
}

/** The script: one reply per request (the last one repeats), or a function of the request and its 0-based index. */
export type ResponsesWireScript =
  | ReadonlyArray<ResponsesWireReply>
  | ((request: RecordedRequest, index: number) => ResponsesWireReply)

/**
 * A Responses stream as OpenAI documents it (and xAI and Azure serve it): `response.created`, a reasoning item if
 * scripted (its summary parts streamed, its `encrypted_content` on the finished item when the request's `include`
 * asks for `reasoning.encrypted_content`), one output item (a message with its content part and text deltas, or a
 * function call with its argument deltas), each with its `added` and `done` events, then `response.completed`
 * carrying the whole response and its usage.
 */
const play = (
  res: ServerResponse,
  reply: ResponsesWireReply,
  index: number,
  model: string,
  request: RecordedRequest
) => {
  let sequence = 0
  const send = (type: string, data: Record<string, unknown>) =>
    res.write(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...data })}\n\n`)
  const usage = reply.usage ?? { input: 10, output: 5 }
  const response = { id: `resp_${index}`, object: "response", created_at: 1_700_000_000 + index, model }
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" })
  send("response.created", { response: { ...response, status: "in_progress", output: [] } })
  send("response.in_progress", { response: { ...response, status: "in_progress", output: [] } })
  const output: Array<Record<string, unknown>> = []
  if (reply.reasoning) output.push(playReasoning(send, reply.reasoning, index, request))
  const outputIndex = output.length
  let item: Record<string, unknown>
  if (reply.tool) {
    const args = JSON.stringify(reply.tool.input)
    const open = {
      type: "function_call",
      id: `fc_${index}`,
      call_id: reply.tool.id ?? `call_${index}`,
      name: reply.tool.name,
      arguments: "",
      status: "in_progress"
    }
    item = { ...open, arguments: args, status: "completed" }
    send("response.output_item.added", { output_index: outputIndex, item: open })
    const third = Math.ceil(args.length / 3)
    for (let at = 0; at < args.length; at += third)
      send("response.function_call_arguments.delta", {
        item_id: open.id,
        output_index: outputIndex,
        delta: args.slice(at, at + third)
      })
    send("response.function_call_arguments.done", { item_id: open.id, output_index: outputIndex, arguments: args })
  } else {
    const text = reply.text ?? ""
    const id = `msg_${index}`
    const at = { item_id: id, output_index: outputIndex, content_index: 0 }
    send("response.output_item.added", {
      output_index: outputIndex,
      item: { type: "message", id, status: "in_progress", role: "assistant", content: [] }
    })
    send("response.content_part.added", { ...at, part: { type: "output_text", text: "", annotations: [] } })
    send("response.output_text.delta", { ...at, delta: text, logprobs: [] })
    send("response.output_text.done", { ...at, text, logprobs: [] })
    const part = { type: "output_text", text, annotations: [] }
    send("response.content_part.done", { ...at, part })
    item = { type: "message", id, status: "completed", role: "assistant", content: [part] }
  }
  send("response.output_item.done", { output_index: outputIndex, item })
  output.push(item)
  send("response.completed", {
    response: {
      ...response,
      status: "completed",
      output,
      usage: {
        input_tokens: usage.input,
        input_tokens_details: { cached_tokens: usage.cached ?? 0 },
        output_tokens: usage.output,
        output_tokens_details: { reasoning_tokens: usage.reasoning ?? 0 },
        total_tokens: usage.input + usage.output
      }
    }
  })
  res.end()
}

/** Streams a reasoning item at output index 0 (its summary parts one by one) and returns the finished item. */
const playReasoning = (
  send: (type: string, data: Record<string, unknown>) => void,
  reasoning: ResponsesWireReasoning,
  index: number,
  request: RecordedRequest
): Record<string, unknown> => {
  const id = `rs_${index}`
  const include = (request.body as { include?: unknown } | undefined)?.include
  const encrypted = Array.isArray(include) && include.includes("reasoning.encrypted_content")
  send("response.output_item.added", { output_index: 0, item: { type: "reasoning", id, summary: [] } })
  reasoning.summary.forEach((text, summary_index) => {
    const at = { item_id: id, output_index: 0, summary_index }
    send("response.reasoning_summary_part.added", { ...at, part: { type: "summary_text", text: "" } })
    send("response.reasoning_summary_text.delta", { ...at, delta: text })
    send("response.reasoning_summary_text.done", { ...at, text })
    send("response.reasoning_summary_part.done", { ...at, part: { type: "summary_text", text } })
  })
  const item = {
    type: "reasoning",
    id,
    summary: reasoning.summary.map((text) => ({ type: "summary_text", text })),
    ...(encrypted ? { encrypted_content: reasoning.encrypted } : {})
  }
  send("response.output_item.done", { output_index: 0, item })
  return item
}

/**
 * Starts a real HTTP server on 127.0.0.1 (a free port) that answers every POST with an OpenAI Responses SSE stream
 * (function calls included), recording every request (path with query, headers, parsed body). Its `url` ends with
 * `/v1`; any path is answered, so a test asserts the path the SDK chose.
 */
export const startResponsesWire = (script: ResponsesWireScript): Promise<ScriptedServer> =>
  startRecordingServer((res, request, index) => {
    const reply = typeof script === "function" ? script(request, index) : (script[index] ?? script.at(-1) ?? {})
    play(res, reply, index, modelOf(request), request)
  })
