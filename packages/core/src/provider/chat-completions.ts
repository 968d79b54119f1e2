import {
  APICallError,
  InvalidResponseDataError,
  type LanguageModelV4,
  type LanguageModelV4CallOptions,
  type LanguageModelV4Content,
  type LanguageModelV4FinishReason,
  type LanguageModelV4StreamPart,
  type LanguageModelV4Usage,
  type SharedV4ProviderMetadata,
  type SharedV4Warning
} from "@ai-sdk/provider"
import type { ProviderSettings } from "./descriptor.js"

/**
 * Lathe's own client of OpenAI's Chat Completions API (`POST <baseURL>/chat/completions`, streamed as server-sent
 * events), as an ai SDK `LanguageModelV4`: the one path for every OpenAI-compatible server (vLLM, llama.cpp, Ollama,
 * LM Studio, gateways, the catalogue's providers that speak OpenAI's chat API), so `@lathe/core` needs no provider
 * SDK package for them. It sends what the AI SDK's own OpenAI-compatible provider sends (same body fields, same
 * message shapes, `stream_options.include_usage`), and reads text, reasoning (`reasoning_content` or `reasoning`),
 * streamed tool calls (Gemini's `extra_content` thought signature kept on the call), the finish reason, usage with
 * cached and reasoning tokens, and errors: an HTTP error is an `APICallError` with status, headers and body; a
 * `{"error": …}` chunk inside the stream is an `error` part, as `toProviderError` expects.
 */

import { bodyBytes, bodyOf, type ChatSettings, camelCase, chatSettingsOf, record } from "./chat-completions-request.js"

// ---------------------------------------------------------------------------------------------------------------
// The response

const RETRYABLE = new Set([408, 409, 429])

/** The server's own words from an error body (`{"error": {"message": …}}`), else the HTTP status text. */
const errorMessage = (body: string, fallback: string): string => {
  try {
    const error = record(record(JSON.parse(body))?.error)
    if (typeof error?.message === "string") return error.message
  } catch {}
  return fallback
}

const isAbort = (error: unknown) =>
  error instanceof Error && (error.name === "AbortError" || error.name === "TimeoutError")

/**
 * POSTs `body` (as `json`, its JSON as UTF-8); a refused connection or an HTTP error becomes an `APICallError`, as the AI SDK's
 * providers throw.
 */
const post = async (
  settings: ChatSettings,
  body: Record<string, unknown>,
  json: Uint8Array,
  options: LanguageModelV4CallOptions
): Promise<Response> => {
  const callHeaders = Object.fromEntries(
    Object.entries(options.headers ?? {}).filter((entry): entry is [string, string] => entry[1] !== undefined)
  )
  let response: Response
  try {
    response = await settings.fetch(settings.url, {
      method: "POST",
      headers: { "content-type": "application/json", ...settings.headers, ...callHeaders },
      body: json,
      ...(options.abortSignal ? { signal: options.abortSignal } : {})
    })
  } catch (error) {
    if (isAbort(error)) throw error
    const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error
    throw new APICallError({
      message: `Cannot connect to API: ${cause instanceof Error ? cause.message : String(cause)}`,
      url: settings.url,
      requestBodyValues: body,
      cause,
      isRetryable: true
    })
  }
  if (response.ok) return response
  const text = await response.text().catch(() => "")
  throw new APICallError({
    message: errorMessage(text, response.statusText || `HTTP ${response.status}`),
    url: settings.url,
    requestBodyValues: body,
    statusCode: response.status,
    responseHeaders: Object.fromEntries(response.headers),
    responseBody: text,
    isRetryable: RETRYABLE.has(response.status) || response.status >= 500
  })
}

/** Where the parts of a response go: the stream that carries them. */
interface Out {
  readonly enqueue: (part: LanguageModelV4StreamPart) => void
}

/**
 * Splits an event stream's text, as it comes, into the `data` of each event (`[DONE]` included): `push` takes the
 * next piece of text, `end` what is left once the body has ended; each event's data goes to `onData`.
 */
const eventData = (onData: (data: string) => void) => {
  let buffer = ""
  let data: Array<string> = []
  const line = (text: string) => {
    const clean = text.endsWith("\r") ? text.slice(0, -1) : text
    if (clean === "") {
      if (data.length > 0) onData(data.join("\n"))
      data = []
    } else if (clean.startsWith("data:")) data.push(clean.slice(clean.startsWith("data: ") ? 6 : 5))
  }
  return {
    push: (text: string) => {
      buffer += text
      let end = buffer.indexOf("\n")
      while (end >= 0) {
        line(buffer.slice(0, end))
        buffer = buffer.slice(end + 1)
        end = buffer.indexOf("\n")
      }
    },
    end: () => {
      if (buffer.length > 0) line(buffer)
      buffer = ""
      line("")
    }
  }
}

const FINISH: Readonly<Record<string, LanguageModelV4FinishReason["unified"]>> = {
  stop: "stop",
  length: "length",
  content_filter: "content-filter",
  function_call: "tool-calls",
  tool_calls: "tool-calls"
}

const numberOf = (value: unknown): number | undefined => (typeof value === "number" ? value : undefined)

/** The usage chunk in the SDK's terms: cached prompt tokens read from cache, reasoning tokens out of the output. */
const usageOf = (usage: Readonly<Record<string, unknown>> | undefined): LanguageModelV4Usage => {
  if (usage === undefined)
    return {
      inputTokens: { total: undefined, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
      outputTokens: { total: undefined, text: undefined, reasoning: undefined }
    }
  const input = numberOf(usage.prompt_tokens) ?? 0
  const output = numberOf(usage.completion_tokens) ?? 0
  const cached = numberOf(record(usage.prompt_tokens_details)?.cached_tokens) ?? 0
  const reasoning = numberOf(record(usage.completion_tokens_details)?.reasoning_tokens) ?? 0
  return {
    inputTokens: { total: input, noCache: input - cached, cacheRead: cached, cacheWrite: undefined },
    outputTokens: { total: output, text: Math.max(0, output - reasoning), reasoning },
    raw: usage as NonNullable<LanguageModelV4Usage["raw"]>
  }
}

/** A tool call being streamed, by its index in the choice. */
interface StreamedCall {
  id: string
  name: string
  args: string
  started: boolean
  done: boolean
  metadata: SharedV4ProviderMetadata | undefined
}

/**
 * The name a call's provider metadata goes under (a signed call's `thoughtSignature`, the finish part's): the
 * provider's id, or its camel-cased form when the call's options use that, as the AI SDK's providers choose it.
 */
const metadataKeyOf = (id: string, options: LanguageModelV4CallOptions): string => {
  const camel = camelCase(id)
  return camel !== id && options.providerOptions?.[camel] !== undefined ? camel : id
}

/**
 * Turns the stream's JSON chunks into the model's stream parts; provider metadata goes under `metadataKey`. `start`
 * before the first chunk, `data` for each event's data, `end` once the body has ended.
 */
const partsOf = (metadataKey: string, warnings: Array<SharedV4Warning>) => {
  const calls = new Map<number, StreamedCall>()
  let text = false
  let reasoning = false
  let metadataSent = false
  let rawFinish: string | undefined
  let failed = false
  let usage: Readonly<Record<string, unknown>> | undefined
  const endReasoning = (out: Out) => {
    if (reasoning) out.enqueue({ type: "reasoning-end", id: "reasoning-0" })
    reasoning = false
  }
  const endText = (out: Out) => {
    if (text) out.enqueue({ type: "text-end", id: "txt-0" })
    text = false
  }
  const reasoningDelta = (out: Out, delta: string) => {
    endText(out)
    if (!reasoning) out.enqueue({ type: "reasoning-start", id: "reasoning-0" })
    reasoning = true
    out.enqueue({ type: "reasoning-delta", id: "reasoning-0", delta })
  }
  const textDelta = (out: Out, delta: string) => {
    endReasoning(out)
    if (!text) out.enqueue({ type: "text-start", id: "txt-0" })
    text = true
    out.enqueue({ type: "text-delta", id: "txt-0", delta })
  }
  const finishCall = (out: Out, call: StreamedCall) => {
    call.done = true
    out.enqueue({ type: "tool-input-end", id: call.id })
    out.enqueue({
      type: "tool-call",
      toolCallId: call.id,
      toolName: call.name,
      input: call.args.length > 0 ? call.args : "{}",
      ...(call.metadata ? { providerMetadata: call.metadata } : {})
    })
  }
  // A call goes out (`tool-call`) when the stream has ended with its finish chunk, as the AI SDK's providers do: a
  // stream cut after complete arguments still runs no tool.
  const callDelta = (out: Out, delta: Readonly<Record<string, unknown>>, position: number) => {
    const index = numberOf(delta.index) ?? position
    const fn = record(delta.function)
    let call = calls.get(index)
    if (call === undefined) {
      call = { id: "", name: "", args: "", started: false, done: false, metadata: undefined }
      calls.set(index, call)
    }
    if (call.id === "" && typeof delta.id === "string" && delta.id !== "") call.id = delta.id
    if (call.name === "" && typeof fn?.name === "string") call.name = fn.name
    const signature = record(record(delta.extra_content)?.google)?.thought_signature
    if (call.metadata === undefined && typeof signature === "string")
      call.metadata = { [metadataKey]: { thoughtSignature: signature } }
    const args = typeof fn?.arguments === "string" ? fn.arguments : ""
    call.args += args
    if (!call.started && call.name !== "") {
      call.started = true
      if (call.id === "") call.id = `call_${crypto.randomUUID()}`
      out.enqueue({ type: "tool-input-start", id: call.id, toolName: call.name })
      if (call.args.length > 0) out.enqueue({ type: "tool-input-delta", id: call.id, delta: call.args })
    } else if (call.started && args.length > 0) out.enqueue({ type: "tool-input-delta", id: call.id, delta: args })
  }
  return {
    start: (out: Out) => {
      out.enqueue({ type: "stream-start", warnings })
    },
    data: (data: string, out: Out) => {
      if (data === "[DONE]") return
      let chunk: Readonly<Record<string, unknown>> | undefined
      try {
        chunk = record(JSON.parse(data))
      } catch (error) {
        failed = true
        out.enqueue({
          type: "error",
          error: new InvalidResponseDataError({ data, message: `Invalid JSON chunk: ${String(error)}` })
        })
        return
      }
      if (chunk === undefined) return
      if ("error" in chunk) {
        failed = true
        out.enqueue({ type: "error", error: chunk.error })
        return
      }
      if (!metadataSent && (chunk.id !== undefined || chunk.model !== undefined || chunk.created !== undefined)) {
        metadataSent = true
        const created = numberOf(chunk.created)
        out.enqueue({
          type: "response-metadata",
          ...(typeof chunk.id === "string" ? { id: chunk.id } : {}),
          ...(typeof chunk.model === "string" ? { modelId: chunk.model } : {}),
          ...(created ? { timestamp: new Date(created * 1000) } : {})
        })
      }
      if (record(chunk.usage) !== undefined) usage = record(chunk.usage)
      const choice = record(Array.isArray(chunk.choices) ? chunk.choices[0] : undefined)
      if (typeof choice?.finish_reason === "string") rawFinish = choice.finish_reason
      const delta = record(choice?.delta)
      if (delta === undefined) return
      const thinking = delta.reasoning_content ?? delta.reasoning
      if (typeof thinking === "string" && thinking.length > 0) reasoningDelta(out, thinking)
      if (typeof delta.content === "string" && delta.content.length > 0) textDelta(out, delta.content)
      else if (Array.isArray(delta.content))
        // Mistral's parts: `{ type: "text", text }`, and `{ type: "thinking", thinking: [{ type: "text", text }] }`.
        for (const part of delta.content) {
          const item = record(part)
          if (item?.type === "text" && typeof item.text === "string" && item.text.length > 0) textDelta(out, item.text)
          else if (item?.type === "thinking" && Array.isArray(item.thinking)) {
            const thought = item.thinking
              .map((piece) => record(piece))
              .map((piece) => (piece?.type === "text" && typeof piece.text === "string" ? piece.text : ""))
              .join("")
            if (thought.length > 0) reasoningDelta(out, thought)
          }
        }
      if (typeof delta.refusal === "string" && delta.refusal.length > 0) textDelta(out, delta.refusal)
      if (Array.isArray(delta.tool_calls) && delta.tool_calls.length > 0) {
        endReasoning(out)
        delta.tool_calls.forEach((call, position) => {
          const value = record(call)
          if (value !== undefined) callDelta(out, value, position)
        })
      }
    },
    end: (out: Out) => {
      endReasoning(out)
      endText(out)
      for (const call of calls.values()) if (call.started && !call.done) finishCall(out, call)
      let finishReason: LanguageModelV4FinishReason = {
        unified: rawFinish === undefined ? "error" : (FINISH[rawFinish] ?? "other"),
        raw: rawFinish
      }
      if (rawFinish === undefined && !failed)
        out.enqueue({
          type: "error",
          error: new InvalidResponseDataError({
            data: undefined,
            message: "Response stream ended without a finish reason."
          })
        })
      if (failed) finishReason = { unified: "error", raw: undefined }
      out.enqueue({ type: "finish", finishReason, usage: usageOf(usage), providerMetadata: { [metadataKey]: {} } })
    }
  }
}

/**
 * The model's stream parts from `response`'s event stream, in one stream stage: the body's bytes are decoded, split
 * into events and turned into parts as they come (each stage of a web stream costs every chunk a round of promises;
 * as four stages, decoder, events, parts and the error mapping, they cost a tool step ~0.1 ms). A failure to read the
 * body (a reset socket) becomes an `APICallError` for `url` with the failure as its cause, as the AI SDK's providers
 * report it: the message then names the endpoint whose stream was cut.
 */
const streamOf = (
  response: Response,
  url: string,
  body: unknown,
  metadataKey: string,
  warnings: Array<SharedV4Warning>
): ReadableStream<LanguageModelV4StreamPart> => {
  const reader = (response.body as ReadableStream<Uint8Array>).getReader()
  const decoder = new TextDecoder()
  const parts = partsOf(metadataKey, warnings)
  let sent = 0
  let target: ReadableStreamDefaultController<LanguageModelV4StreamPart> | undefined
  const out: Out = {
    enqueue: (part) => {
      sent++
      target?.enqueue(part)
    }
  }
  const events = eventData((data) => parts.data(data, out))
  return new ReadableStream<LanguageModelV4StreamPart>({
    start(controller) {
      target = controller
      parts.start(out)
    },
    // Reads on until a part is out or the body has ended: a pull that enqueues nothing is not called again.
    async pull(controller) {
      const before = sent
      while (sent === before) {
        let next: Awaited<ReturnType<typeof reader.read>>
        try {
          next = await reader.read()
        } catch (error) {
          if (isAbort(error)) return controller.error(error)
          return controller.error(
            new APICallError({
              message: "Failed to process successful response",
              cause: error,
              statusCode: response.status,
              url,
              responseHeaders: Object.fromEntries(response.headers),
              requestBodyValues: body,
              isRetryable: true
            })
          )
        }
        if (next.done) {
          events.push(decoder.decode())
          events.end()
          parts.end(out)
          return controller.close()
        }
        events.push(decoder.decode(next.value, { stream: true }))
      }
    },
    cancel: (reason) => reader.cancel(reason)
  })
}

/** The Chat Completions model `modelID` of the server `settings` describe (`baseURL`, key, headers, fetch). */
export const chatCompletionsModel = (provider: ProviderSettings, modelID: string): LanguageModelV4 => {
  const settings = chatSettingsOf(provider)
  const doStream: LanguageModelV4["doStream"] = async (options) => {
    const { body, arrays, warnings } = bodyOf(settings, modelID, options)
    const sent = { ...body, stream: true, stream_options: { include_usage: true } }
    const response = await post(settings, sent, bodyBytes(sent, arrays), options)
    if (response.body === null)
      throw new APICallError({ message: "The server sent no body.", url: settings.url, requestBodyValues: sent })
    const stream = streamOf(response, settings.url, sent, metadataKeyOf(settings.id, options), warnings)
    return { stream, request: { body: sent }, response: { headers: Object.fromEntries(response.headers) } }
  }
  return {
    specificationVersion: "v4",
    provider: `${settings.id}.chat`,
    modelId: modelID,
    supportedUrls: {},
    doStream,
    // Lathe streams every step; a whole answer is the stream collected.
    doGenerate: async (options) => {
      const { stream, request, response } = await doStream(options)
      const content: Array<LanguageModelV4Content> = []
      const texts = new Map<string, { type: "text" | "reasoning"; text: string }>()
      let finish: Extract<LanguageModelV4StreamPart, { type: "finish" }> | undefined
      let warnings: Array<SharedV4Warning> = []
      const reader = stream.getReader()
      for (let next = await reader.read(); !next.done; next = await reader.read()) {
        const part = next.value
        if (part.type === "stream-start") warnings = part.warnings
        else if (part.type === "text-start" || part.type === "reasoning-start") {
          const entry = { type: part.type === "text-start" ? ("text" as const) : ("reasoning" as const), text: "" }
          texts.set(`${entry.type}:${part.id}`, entry)
          content.push(entry)
        } else if (part.type === "text-delta" || part.type === "reasoning-delta") {
          const entry = texts.get(`${part.type === "text-delta" ? "text" : "reasoning"}:${part.id}`)
          if (entry) entry.text += part.delta
        } else if (part.type === "tool-call") content.push(part)
        else if (part.type === "error") throw part.error
        else if (part.type === "finish") finish = part
      }
      return {
        content,
        finishReason: finish?.finishReason ?? { unified: "error", raw: undefined },
        usage: finish?.usage ?? usageOf(undefined),
        ...(finish?.providerMetadata ? { providerMetadata: finish.providerMetadata } : {}),
        ...(request ? { request } : {}),
        response: { ...(response?.headers ? { headers: response.headers } : {}) },
        warnings
      }
    }
  }
}
