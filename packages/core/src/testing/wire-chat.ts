import type { ServerResponse } from "node:http"
import type { RecordedRequest, ScriptedServer } from "./scripted-server.js"
import { modelOf, startRecordingServer } from "./wire-http.js"

/**
 * Which provider's Chat Completions stream a wire server speaks. They share `data: {choices:[{delta}]}` chunks and
 * differ where the providers do:
 * - `openai`: OpenAI's shape (Together, Fireworks, Cerebras): thinking as `reasoning_content`, tool arguments in
 *   fragments, a finishing chunk, then a usage chunk with no choices (`prompt_tokens_details.cached_tokens`,
 *   `completion_tokens_details.reasoning_tokens`), then `[DONE]`;
 * - `groq`: thinking as `reasoning`, the usage on the last chunk as `x_groq.usage`;
 * - `deepseek`: thinking streams as `reasoning_content`; usage reports `prompt_cache_hit_tokens` and
 *   `prompt_cache_miss_tokens`;
 * - `mistral`: thinking as `{type:"thinking"}` content parts, a whole tool call in one chunk with a 9-character id,
 *   usage (`num_cached_tokens`) on the finishing chunk;
 * - `openrouter`: `: OPENROUTER PROCESSING` comments first, thinking as `reasoning`, usage with the `cost` charged and
 *   `cache_write_tokens`.
 */
export type ChatDialect = "openai" | "groq" | "deepseek" | "mistral" | "openrouter"

/** Token counts of a reply as the provider reports them: `prompt` and `completion` are totals. */
export interface ChatWireUsage {
  /** Every prompt token, cached ones included. */
  readonly prompt: number
  /** Every completion token, reasoning included. */
  readonly completion: number
  readonly cached?: number
  /** Prompt tokens written to the cache (OpenRouter on Anthropic models). */
  readonly cacheWrite?: number
  readonly reasoning?: number
  /** USD charged (OpenRouter). */
  readonly cost?: number
}

/** One streamed reply: optional thinking, then text or one tool call, and its usage (default 10 in, 5 out). */
export interface ChatWireReply {
  readonly reasoning?: string
  readonly text?: string
  /**
   * The tool call; `signature` goes on its first chunk as `extra_content.google.thought_signature`, as Gemini 3 signs
   * its calls through Google's OpenAI-compatible endpoint (not in the `mistral` dialect).
   */
  readonly tool?: { readonly name: string; readonly input: unknown; readonly id?: string; readonly signature?: string }
  readonly usage?: ChatWireUsage
}

/** The script: one reply per request (the last one repeats), or a function of the request and its 0-based index. */
export type ChatWireScript = ReadonlyArray<ChatWireReply> | ((request: RecordedRequest, index: number) => ChatWireReply)

const sse = (res: ServerResponse, data: unknown) => res.write(`data: ${JSON.stringify(data)}\n\n`)

const thirds = (text: string): Array<string> => {
  const a = Math.floor(text.length / 3)
  const b = Math.floor((2 * text.length) / 3)
  return [text.slice(0, a), text.slice(a, b), text.slice(b)]
}

/** The `usage` object of `dialect` for `usage`. */
const usageOf = (dialect: ChatDialect, usage: ChatWireUsage): Record<string, unknown> => {
  const base = {
    prompt_tokens: usage.prompt,
    completion_tokens: usage.completion,
    total_tokens: usage.prompt + usage.completion
  }
  const reasoning = { completion_tokens_details: { reasoning_tokens: usage.reasoning ?? 0 } }
  switch (dialect) {
    case "deepseek":
      return {
        ...base,
        prompt_cache_hit_tokens: usage.cached ?? 0,
        prompt_cache_miss_tokens: usage.prompt - (usage.cached ?? 0),
        prompt_tokens_details: { cached_tokens: usage.cached ?? 0 },
        ...reasoning
      }
    case "mistral":
      return { ...base, num_cached_tokens: usage.cached ?? 0 }
    case "openrouter":
      return {
        ...base,
        cost: usage.cost ?? 0,
        is_byok: false,
        prompt_tokens_details: { cached_tokens: usage.cached ?? 0, cache_write_tokens: usage.cacheWrite ?? 0 },
        cost_details: { upstream_inference_cost: null },
        ...reasoning
      }
    default:
      return { ...base, prompt_tokens_details: { cached_tokens: usage.cached ?? 0 }, ...reasoning }
  }
}

const play = (res: ServerResponse, dialect: ChatDialect, reply: ChatWireReply, index: number, model: string) => {
  const id = dialect === "mistral" ? `${index}a4b9c8d7e6f5` : `chatcmpl-${index}`
  const chunk = (delta: Record<string, unknown>, finish: string | null = null, extra: object = {}) => ({
    id,
    object: "chat.completion.chunk",
    created: 1_700_000_000 + index,
    model,
    ...(dialect === "openrouter" ? { provider: "Scripted" } : {}),
    choices: [{ index: 0, delta, finish_reason: finish, ...(dialect === "mistral" ? {} : { logprobs: null }) }],
    ...extra
  })
  const usage = usageOf(dialect, reply.usage ?? { prompt: 10, completion: 5 })
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" })
  if (dialect === "openrouter") res.write(": OPENROUTER PROCESSING\n\n")
  sse(res, chunk({ role: "assistant", content: "" }))
  for (const part of thirds(reply.reasoning ?? "")) {
    if (!part) continue
    if (dialect === "mistral")
      sse(res, chunk({ content: [{ type: "thinking", thinking: [{ type: "text", text: part }] }] }))
    else sse(res, chunk({ [dialect === "openrouter" || dialect === "groq" ? "reasoning" : "reasoning_content"]: part }))
  }
  if (reply.text !== undefined) for (const part of thirds(reply.text)) if (part) sse(res, chunk({ content: part }))
  if (reply.tool) {
    const args = JSON.stringify(reply.tool.input)
    if (dialect === "mistral") {
      const callID = reply.tool.id ?? `Tc${index}x9QmZp`.slice(0, 9)
      sse(res, chunk({ tool_calls: [{ id: callID, function: { name: reply.tool.name, arguments: args }, index: 0 }] }))
    } else {
      const callID = reply.tool.id ?? `call_${index}_0`
      const signature = reply.tool.signature
      const signed = signature === undefined ? {} : { extra_content: { google: { thought_signature: signature } } }
      thirds(args).forEach((part, i) => {
        const head = i === 0 ? { id: callID, type: "function", ...signed } : {}
        const fn = i === 0 ? { name: reply.tool?.name, arguments: part } : { arguments: part }
        sse(res, chunk({ tool_calls: [{ index: 0, ...head, function: fn }] }))
      })
    }
  }
  const finish = reply.tool ? "tool_calls" : "stop"
  if (dialect === "groq") sse(res, chunk({}, finish, { x_groq: { id: `req_${index}`, usage } }))
  else if (dialect === "mistral") sse(res, chunk({ content: "" }, finish, { usage }))
  else {
    sse(res, chunk({}, finish))
    sse(res, { ...chunk({}), choices: [], usage })
  }
  res.end("data: [DONE]\n\n")
}

/**
 * Starts a real HTTP server on 127.0.0.1 (a free port) that answers every POST with a Chat Completions SSE stream in
 * `dialect`'s shapes, recording every request (path with query, headers, parsed body). Its `url` ends with `/v1`;
 * any path is answered, so a test passes the base URL the provider's SDK expects and asserts the path it hit.
 */
export const startChatWire = (dialect: ChatDialect, script: ChatWireScript): Promise<ScriptedServer> =>
  startRecordingServer((res, request, index) => {
    const reply = typeof script === "function" ? script(request, index) : (script[index] ?? script.at(-1) ?? {})
    play(res, dialect, reply, index, modelOf(request))
  })
