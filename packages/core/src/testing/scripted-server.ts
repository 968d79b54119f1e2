import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"

/** One piece of a scripted streamed reply, played in order. */
export type ServerStep =
  | { readonly text: string }
  | { readonly reasoning: string }
  | {
      /** A tool call; its JSON arguments are sent in three fragments, as real servers do. */
      readonly tool: string
      /** The arguments: an object (JSON-encoded) or a raw string (sent as is, so it may be invalid JSON). */
      readonly input: unknown
      /** Defaults to `call_<request>_<index>`. */
      readonly id?: string
    }

/** Token counts of the final `usage` chunk. */
export interface ServerUsage {
  readonly input: number
  readonly output: number
  /** `prompt_tokens_details.cached_tokens`. */
  readonly cached?: number
  /** `completion_tokens_details.reasoning_tokens`. */
  readonly reasoning?: number
}

/** A streamed chat.completions reply: steps, then a finish reason, the usage chunk and `[DONE]`. */
export interface StreamReply {
  readonly type?: "stream"
  readonly steps: ReadonlyArray<ServerStep>
  /** Defaults to `tool_calls` when a step calls a tool, else `stop`. */
  readonly finish?: string
  /** Defaults to 10 input and 5 output tokens. */
  readonly usage?: ServerUsage
  /** Waits this long between chunks (a slow model; a client that aborts closes the stream early). */
  readonly delayMs?: number
  /** Waits this long before answering at all (a model's time to its first token). */
  readonly firstByteMs?: number
}

/** An HTTP error reply: status, headers (such as `retry-after`) and a JSON body. */
export interface ErrorReply {
  readonly type: "error"
  readonly status: number
  readonly headers?: Readonly<Record<string, string>>
  /** Defaults to `{ error: { message: "scripted error <status>", type: "scripted_error" } }`. */
  readonly body?: unknown
}

/** Streams the chunks of `steps` (no finish, no usage, no `[DONE]`), then destroys the socket. */
export interface CutReply {
  readonly type: "cut"
  readonly steps: ReadonlyArray<ServerStep>
}

/**
 * A 200 stream that fails in-band, as vLLM, llama.cpp and gateways do once the response has started: the chunks of
 * `steps`, then `data: {"error": …}` with no HTTP status, then `[DONE]`.
 */
export interface InBandErrorReply {
  readonly type: "in-band-error"
  readonly steps?: ReadonlyArray<ServerStep>
  /** The `error` object of the chunk, e.g. `{ message: "Too many requests", type: "too_many_requests" }`. */
  readonly error: unknown
}

/** What the server answers to one request. */
export type ScriptedReply = StreamReply | ErrorReply | CutReply | InBandErrorReply

/** A request the server received; `body` is the parsed JSON (or the raw text when it is not JSON). */
export interface RecordedRequest {
  readonly method: string
  /** Path and query, e.g. `/v1/chat/completions`. */
  readonly path: string
  readonly headers: IncomingHttpHeaders
  readonly body: unknown
  /** `performance.now()` when the request arrived (before its body was read). */
  readonly receivedAt: number
  /** `performance.now()` when the reply was fully sent; unset until then (and for a cut stream). */
  answeredAt?: number
}

/** A running scripted server. */
export interface ScriptedServer {
  /** The base URL, ending with `/v1`: pass it as `baseURL` or `LATHE_BASE_URL`. */
  readonly url: string
  /** Every request received so far, in order (the array grows as requests arrive). */
  readonly requests: ReadonlyArray<RecordedRequest>
  /** Stops listening and drops open connections. */
  readonly close: () => Promise<void>
}

/** The script: one reply per request in order, or a function of the request and its 0-based index. */
export type ServerScript =
  | ReadonlyArray<ScriptedReply>
  | ((request: RecordedRequest, index: number) => ScriptedReply | undefined)

const sse = (res: ServerResponse, data: unknown) => res.write(`data: ${JSON.stringify(data)}\n\n`)

/** Splits a string into three fragments (some may be empty), like a server streaming tool arguments. */
const fragments = (text: string): Array<string> => {
  const a = Math.floor(text.length / 3)
  const b = Math.floor((2 * text.length) / 3)
  return [text.slice(0, a), text.slice(a, b), text.slice(b)].filter((f, i) => i === 0 || f.length > 0)
}

/** The `chat.completion.chunk` objects of a reply's steps, before the finish chunk. */
const stepChunks = (steps: ReadonlyArray<ServerStep>, request: number, model: string): Array<unknown> => {
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
    id: `chatcmpl-${request}`,
    object: "chat.completion.chunk",
    created: 1_700_000_000,
    model,
    choices: [{ index: 0, delta, finish_reason: finish }]
  })
  const out: Array<unknown> = [chunk({ role: "assistant", content: "" })]
  let toolIndex = 0
  for (const step of steps) {
    if ("text" in step) out.push(chunk({ content: step.text }))
    else if ("reasoning" in step) out.push(chunk({ reasoning_content: step.reasoning }))
    else {
      const index = toolIndex++
      const args = typeof step.input === "string" ? step.input : JSON.stringify(step.input)
      const id = step.id ?? `call_${request}_${index}`
      fragments(args).forEach((part, i) => {
        const fn = i === 0 ? { name: step.tool, arguments: part } : { arguments: part }
        out.push(chunk({ tool_calls: [{ index, ...(i === 0 ? { id, type: "function" } : {}), function: fn }] }))
      })
    }
  }
  return out
}

const readBody = (req: NodeJS.ReadableStream): Promise<string> =>
  new Promise((resolve, reject) => {
    const parts: Array<Buffer> = []
    req.on("data", (part: Buffer) => parts.push(part))
    req.on("end", () => resolve(Buffer.concat(parts).toString("utf8")))
    req.on("error", reject)
  })

const parseBody = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

const play = (res: ServerResponse, reply: ScriptedReply, index: number, model: string): void => {
  if (
    (reply.type === undefined || reply.type === "stream") &&
    reply.firstByteMs !== undefined &&
    reply.firstByteMs > 0
  ) {
    const { firstByteMs: _, ...rest } = reply
    setTimeout(() => {
      if (!res.destroyed) play(res, rest, index, model)
    }, reply.firstByteMs)
    return
  }
  if (reply.type === "error") {
    const body = reply.body ?? { error: { message: `scripted error ${reply.status}`, type: "scripted_error" } }
    res.writeHead(reply.status, { "content-type": "application/json", ...reply.headers })
    res.end(JSON.stringify(body))
    return
  }
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" })
  if (reply.type === "in-band-error") {
    for (const chunk of stepChunks(reply.steps ?? [], index, model)) sse(res, chunk)
    sse(res, { error: reply.error })
    res.end("data: [DONE]\n\n")
    return
  }
  const chunks = stepChunks(reply.steps, index, model)
  if (reply.type !== "cut" && reply.delayMs !== undefined && reply.delayMs > 0) {
    const delay = reply.delayMs
    const next = (i: number) => {
      if (res.destroyed || res.writableEnded) return
      const chunk = chunks[i]
      if (chunk === undefined) return finishReply(res, reply, index, model)
      sse(res, chunk)
      setTimeout(() => next(i + 1), delay)
    }
    next(0)
    return
  }
  for (const chunk of chunks) sse(res, chunk)
  if (reply.type === "cut") {
    // Let the chunks leave before the reset, so the client sees a stream that started and then broke.
    setTimeout(() => res.socket?.destroy(), 5)
    return
  }
  finishReply(res, reply, index, model)
}

const finishReply = (res: ServerResponse, reply: StreamReply, index: number, model: string) => {
  const finish = reply.finish ?? (reply.steps.some((s) => "tool" in s) ? "tool_calls" : "stop")
  const usage = reply.usage ?? { input: 10, output: 5 }
  sse(res, { id: `chatcmpl-${index}`, model, choices: [{ index: 0, delta: {}, finish_reason: finish }] })
  sse(res, {
    id: `chatcmpl-${index}`,
    model,
    choices: [],
    usage: {
      prompt_tokens: usage.input,
      completion_tokens: usage.output,
      total_tokens: usage.input + usage.output,
      prompt_tokens_details: { cached_tokens: usage.cached ?? 0 },
      completion_tokens_details: { reasoning_tokens: usage.reasoning ?? 0 }
    }
  })
  res.end("data: [DONE]\n\n")
}

/**
 * Starts a real HTTP server on 127.0.0.1 (a free port) that speaks OpenAI chat.completions SSE. Each request, on
 * any path, gets the next scripted reply; when the script has none left it answers 400 with a message saying so
 * (a non-retryable error, so a run under test fails at once instead of retrying).
 */
export const startScriptedServer = async (script: ServerScript): Promise<ScriptedServer> => {
  const requests: Array<RecordedRequest> = []
  const server = createServer((req, res) => {
    const receivedAt = performance.now()
    readBody(req).then(
      (text) => {
        const index = requests.length
        const recorded: RecordedRequest = {
          method: req.method ?? "GET",
          path: req.url ?? "/",
          headers: req.headers,
          body: parseBody(text),
          receivedAt
        }
        res.on("finish", () => {
          recorded.answeredAt = performance.now()
        })
        requests.push(recorded)
        const reply = typeof script === "function" ? script(recorded, index) : script[index]
        const body = recorded.body as { model?: unknown } | undefined
        const model = typeof body?.model === "string" ? body.model : "scripted"
        if (reply !== undefined) return play(res, reply, index, model)
        const given = typeof script === "function" ? "the script function returned nothing" : `it has ${script.length}`
        const message = `The scripted server has no reply for request ${index + 1} (${given}).`
        play(res, { type: "error", status: 400, body: { error: { message, type: "script_exhausted" } } }, index, model)
      },
      () => res.destroy()
    )
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
