import {
  type LanguageModelV4CallOptions,
  type LanguageModelV4FunctionTool,
  type LanguageModelV4Message,
  type LanguageModelV4Prompt,
  type SharedV4Warning,
  UnsupportedFunctionalityError
} from "@ai-sdk/provider"
import type { ProviderSettings } from "./descriptor.js"

/**
 * The request side of Lathe's Chat Completions client (`chat-completions.ts`): a provider's settings as the client
 * reads them, the prompt as Chat Completions messages (images, files, tool calls and results), and the request body
 * with what it could not honour.
 */

/** The call options Lathe knows under `openaiCompatible` (the rest of a provider's own options goes into the body). */
const KNOWN_OPTIONS = new Set(["user", "reasoningEffort", "textVerbosity", "strictJsonSchema"])

/** What the model needs from a provider's settings (its `options` may override `fetch`, `headers`, the query). */
export interface ChatSettings {
  /** The provider id: its provider options' name, and `<id>.chat` as the model's `provider`. */
  readonly id: string
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly fetch: typeof fetch
  readonly structuredOutputs: boolean
}

export const record = (value: unknown): Readonly<Record<string, unknown>> | undefined =>
  typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Readonly<Record<string, unknown>>)
    : undefined

const stringsOf = (value: unknown): Record<string, string> =>
  Object.fromEntries(
    Object.entries(record(value) ?? {}).filter((entry): entry is [string, string] => typeof entry[1] === "string")
  )

/** `my-gateway` → `myGateway`: the AI SDK also reads a provider's options under its camel-cased name. */
export const camelCase = (name: string) => name.replace(/[_-]([a-z])/g, (_, letter: string) => letter.toUpperCase())

/** The chat settings of `settings`: config `options` (`fetch`, `headers`, `queryParams`, …) win, as with the SDKs. */
export const chatSettingsOf = (settings: ProviderSettings): ChatSettings => {
  const options = settings.options
  const baseURL = (typeof options.baseURL === "string" ? options.baseURL : (settings.baseURL ?? "")).replace(/\/+$/, "")
  const apiKey = typeof options.apiKey === "string" ? options.apiKey : settings.apiKey
  const query = new URLSearchParams(stringsOf(options.queryParams)).toString()
  return {
    id: settings.id,
    url: `${baseURL}/chat/completions${query ? `?${query}` : ""}`,
    headers: {
      ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}),
      ...settings.headers,
      ...stringsOf(options.headers)
    },
    fetch: typeof options.fetch === "function" ? (options.fetch as typeof fetch) : settings.fetch,
    structuredOutputs: options.supportsStructuredOutputs === true
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The request

const base64 = (data: Uint8Array | string) => (typeof data === "string" ? data : Buffer.from(data).toString("base64"))

/** The media type of image bytes, when the part says only `image/*`. */
const sniffImage = (data: Uint8Array | string): string => {
  const bytes = typeof data === "string" ? Buffer.from(data.slice(0, 24), "base64") : data
  if (bytes[0] === 0x89 && bytes[1] === 0x50) return "image/png"
  if (bytes[0] === 0xff && bytes[1] === 0xd8) return "image/jpeg"
  if (bytes[0] === 0x47 && bytes[1] === 0x49) return "image/gif"
  if (bytes[8] === 0x57 && bytes[9] === 0x45) return "image/webp"
  return "image/png"
}

type FilePart = Extract<Extract<LanguageModelV4Prompt[number], { role: "user" }>["content"][number], { type: "file" }>

/** A user's file part as a chat content part: an image (URL or data URL), text, or a PDF. */
const filePart = (part: FilePart): Record<string, unknown> => {
  const [top] = part.mediaType.split("/")
  const data = part.data
  if (data.type === "text") {
    if (top === "text") return { type: "text", text: data.text }
  } else if (data.type === "url") {
    if (top === "image") return { type: "image_url", image_url: { url: data.url.toString() } }
    if (top === "text") return { type: "text", text: data.url.toString() }
  } else if (data.type === "data") {
    const mediaType = part.mediaType.endsWith("/*") ? sniffImage(data.data) : part.mediaType
    if (top === "image")
      return { type: "image_url", image_url: { url: `data:${mediaType};base64,${base64(data.data)}` } }
    if (top === "text")
      return {
        type: "text",
        text:
          typeof data.data === "string"
            ? Buffer.from(data.data, "base64").toString("utf8")
            : Buffer.from(data.data).toString("utf8")
      }
    if (part.mediaType === "application/pdf")
      return {
        type: "file",
        file: {
          filename: part.filename ?? "document.pdf",
          file_data: `data:application/pdf;base64,${base64(data.data)}`
        }
      }
  }
  throw new UnsupportedFunctionalityError({ functionality: `file parts of type ${part.mediaType} (${data.type})` })
}

/** A tool call's arguments as JSON text: a string that parses is sent as it is. */
const argumentsOf = (input: unknown): string => {
  if (typeof input === "string")
    try {
      JSON.parse(input)
      return input
    } catch {
      return JSON.stringify(input)
    }
  return JSON.stringify(input ?? {})
}

/** One message of the prompt as Chat Completions messages (the AI SDK's OpenAI-compatible provider sends the same shapes). */
const messageOf = (message: LanguageModelV4Message, id: string): Array<Record<string, unknown>> => {
  const messages: Array<Record<string, unknown>> = []
  if (message.role === "system") messages.push({ role: "system", content: message.content })
  else if (message.role === "user") {
    const [only] = message.content
    if (message.content.length === 1 && only?.type === "text") messages.push({ role: "user", content: only.text })
    else
      messages.push({
        role: "user",
        content: message.content.map((part) =>
          part.type === "text" ? { type: "text", text: part.text } : filePart(part)
        )
      })
  } else if (message.role === "assistant") {
    let text = ""
    let reasoning = ""
    const calls: Array<Record<string, unknown>> = []
    for (const part of message.content) {
      if (part.type === "text") text += part.text
      else if (part.type === "reasoning") reasoning += part.text
      else if (part.type === "tool-call") {
        const options = part.providerOptions
        const signature =
          options?.[id]?.thoughtSignature ??
          options?.[camelCase(id)]?.thoughtSignature ??
          options?.google?.thoughtSignature
        calls.push({
          id: part.toolCallId,
          type: "function",
          function: { name: part.toolName, arguments: argumentsOf(part.input) },
          ...(signature ? { extra_content: { google: { thought_signature: String(signature) } } } : {})
        })
      }
    }
    messages.push({
      role: "assistant",
      content: calls.length > 0 ? text || null : text,
      ...(reasoning.length > 0 ? { reasoning_content: reasoning } : {}),
      ...(calls.length > 0 ? { tool_calls: calls } : {})
    })
  } else
    for (const part of message.content) {
      if (part.type !== "tool-result") continue
      const output = part.output
      const content =
        output.type === "text" || output.type === "error-text"
          ? output.value
          : output.type === "execution-denied"
            ? (output.reason ?? "Tool call execution denied.")
            : JSON.stringify(output.value)
      messages.push({ role: "tool", tool_call_id: part.toolCallId, content })
    }
  return messages
}

/** A prompt message's Chat Completions messages for provider `id`, and their JSON (comma-separated) as UTF-8. */
interface Converted {
  readonly id: string
  readonly messages: ReadonlyArray<Record<string, unknown>>
  readonly json: Buffer
}

const converted = new WeakMap<LanguageModelV4Message, Converted>()

/**
 * The prompt as Chat Completions messages, and the JSON of each prompt message's (as UTF-8, empty for none). Each
 * message's are kept for its object and used again while the same object comes back: in the CLI's bundle the AI SDK
 * hands a step the same object for every message it had before (`scripts/prompt-memo.mjs`), so a step converts,
 * serialises and encodes only its new messages instead of the whole history. A message object is never changed once
 * it is in a prompt (the SDK's contract and this module's), so what is kept stays true.
 */
export const messagesOf = (
  prompt: LanguageModelV4Prompt,
  id: string
): { readonly messages: Array<Record<string, unknown>>; readonly json: ReadonlyArray<Buffer> } => {
  const messages: Array<Record<string, unknown>> = []
  const json: Array<Buffer> = []
  for (const message of prompt) {
    let held = converted.get(message)
    if (held === undefined || held.id !== id) {
      const own = messageOf(message, id)
      held = { id, messages: own, json: Buffer.from(own.map((item) => JSON.stringify(item)).join(","), "utf8") }
      converted.set(message, held)
    }
    for (const item of held.messages) messages.push(item)
    if (held.json.byteLength > 0) json.push(held.json)
  }
  return { messages, json }
}

/** A function tool as the request's `tools` entry, and that entry's JSON (as UTF-8). */
interface ToolEntry {
  readonly name: string
  readonly description: string | undefined
  readonly strict: boolean | undefined
  readonly entry: Record<string, unknown>
  readonly json: Buffer
}

const toolEntries = new WeakMap<object, ToolEntry>()

/**
 * `tool`'s entry in the request and its JSON, kept for its input schema object while its name, description and
 * `strict` stay the same: Lathe hands the SDK the same schema object for a tool every step, so the tools' JSON (tens
 * of kilobytes) is not written again each step.
 */
const toolOf = (tool: LanguageModelV4FunctionTool): ToolEntry => {
  const schema: unknown = tool.inputSchema
  const key = typeof schema === "object" && schema !== null ? schema : undefined
  const held = key === undefined ? undefined : toolEntries.get(key)
  if (held?.name === tool.name && held.description === tool.description && held.strict === tool.strict) return held
  const entry = {
    type: "function",
    function: {
      name: tool.name,
      description: tool.description,
      parameters: tool.inputSchema,
      ...(tool.strict === undefined ? {} : { strict: tool.strict })
    }
  }
  const made = {
    name: tool.name,
    description: tool.description,
    strict: tool.strict,
    entry,
    json: Buffer.from(JSON.stringify(entry), "utf8")
  }
  if (key !== undefined) toolEntries.set(key, made)
  return made
}

const OPEN = Buffer.from("{")
const CLOSE = Buffer.from("}")
const COMMA = Buffer.from(",")
const CLOSE_ARRAY = Buffer.from("]")

/**
 * The bytes of `JSON.stringify(body)` as UTF-8, with each array `arrays` names written from its pieces (one JSON value
 * per element, from {@link messagesOf} and `toolOf`): the same bytes, without serialising and encoding the history
 * and the tools again each step.
 */
export const bodyBytes = (
  body: Readonly<Record<string, unknown>>,
  arrays: ReadonlyMap<string, ReadonlyArray<Buffer>>
): Buffer => {
  const pieces: Array<Buffer> = [OPEN]
  let plain: Array<[string, unknown]> = []
  let first = true
  const text = (value: string) => {
    pieces.push(Buffer.from(`${first ? "" : ","}${value}`, "utf8"))
    first = false
  }
  const flush = () => {
    const inner = plain.length === 0 ? "" : JSON.stringify(Object.fromEntries(plain)).slice(1, -1)
    plain = []
    if (inner !== "") text(inner)
  }
  for (const entry of Object.entries(body)) {
    const [key, value] = entry
    const array = arrays.get(key)
    if (array === undefined || value === undefined) {
      plain.push(entry)
      continue
    }
    flush()
    text(`${JSON.stringify(key)}:[`)
    array.forEach((piece, index) => {
      if (index > 0) pieces.push(COMMA)
      pieces.push(piece)
    })
    pieces.push(CLOSE_ARRAY)
  }
  flush()
  pieces.push(CLOSE)
  return Buffer.concat(pieces)
}

/** The request body of a call (without `stream`), and what it could not honour. */
export const bodyOf = (
  settings: ChatSettings,
  modelID: string,
  options: LanguageModelV4CallOptions
): {
  body: Record<string, unknown>
  /** The JSON of `body`'s arrays, piece by piece, for {@link bodyBytes}. */
  arrays: ReadonlyMap<string, ReadonlyArray<Buffer>>
  warnings: Array<SharedV4Warning>
} => {
  const warnings: Array<SharedV4Warning> = []
  const names = ["openai-compatible", "openaiCompatible", settings.id, camelCase(settings.id)]
  const known: Record<string, unknown> = {}
  for (const name of names) Object.assign(known, options.providerOptions?.[name])
  // A provider's own options go into the body as they are (`{ "my-gateway": { top_k: 20 } }`), Lathe's known ones not.
  const own = Object.fromEntries(
    [settings.id, camelCase(settings.id)]
      .flatMap((name) => Object.entries(options.providerOptions?.[name] ?? {}))
      .filter(([key]) => !KNOWN_OPTIONS.has(key))
  )
  if (options.topK !== undefined) warnings.push({ type: "unsupported", feature: "topK" })
  const tools: Array<Record<string, unknown>> = []
  const toolsJson: Array<Buffer> = []
  for (const tool of options.tools ?? []) {
    if (tool.type !== "function") {
      warnings.push({ type: "unsupported", feature: `provider-defined tool ${tool.id}` })
      continue
    }
    const { entry, json } = toolOf(tool)
    tools.push(entry)
    toolsJson.push(json)
  }
  const choice = options.toolChoice
  const toolChoice =
    choice === undefined || tools.length === 0
      ? undefined
      : choice.type === "tool"
        ? { type: "function", function: { name: choice.toolName } }
        : choice.type
  const format = options.responseFormat
  if (format?.type === "json" && format.schema !== undefined && !settings.structuredOutputs)
    warnings.push({
      type: "unsupported",
      feature: "responseFormat",
      details: "JSON response format schema is only supported with structuredOutputs"
    })
  const effort =
    known.reasoningEffort !== undefined
      ? known.reasoningEffort
      : options.reasoning !== undefined && options.reasoning !== "provider-default"
        ? options.reasoning
        : undefined
  const messages = messagesOf(options.prompt, settings.id)
  const body: Record<string, unknown> = {
    model: modelID,
    user: known.user,
    max_tokens: options.maxOutputTokens,
    temperature: options.temperature,
    top_p: options.topP,
    frequency_penalty: options.frequencyPenalty,
    presence_penalty: options.presencePenalty,
    response_format:
      format?.type !== "json"
        ? undefined
        : settings.structuredOutputs && format.schema !== undefined
          ? {
              type: "json_schema",
              json_schema: {
                schema: format.schema,
                strict: known.strictJsonSchema ?? true,
                name: format.name ?? "response",
                description: format.description
              }
            }
          : { type: "json_object" },
    stop: options.stopSequences,
    seed: options.seed,
    ...own,
    ...(effort === undefined ? {} : { reasoning_effort: effort }),
    ...(known.textVerbosity === undefined ? {} : { verbosity: known.textVerbosity }),
    messages: messages.messages,
    tools: tools.length > 0 ? tools : undefined,
    tool_choice: toolChoice
  }
  return {
    body,
    arrays: new Map([
      ["messages", messages.json],
      ["tools", toolsJson]
    ]),
    warnings
  }
}
