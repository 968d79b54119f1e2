import type { SharedV4ProviderOptions } from "@ai-sdk/provider"
import type { CompactionPart, MessageWithParts, Part, ToolPart } from "@lathe/plugin/schema"
import type { AssistantContent, JSONValue, ModelMessage, ToolContent, ToolResultPart, UserContent } from "ai"

/** What the model sees instead of a tool output that was pruned to save context. */
export const PRUNED_OUTPUT = "[Old tool output cleared to save context. Call the tool again if you need it.]"

/**
 * The history the model sees: from the latest compaction on (its summary first), else everything. A compaction is
 * a user message holding a `compaction` part, answered by an assistant message marked `summary`; the part's
 * `keepFrom` names the first older message kept verbatim after the summary (the turn in progress).
 */
export const visibleHistory = (messages: ReadonlyArray<MessageWithParts>): ReadonlyArray<MessageWithParts> => {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]
    const compaction = message?.parts.find((part): part is CompactionPart => part.type === "compaction")
    if (!message || !compaction) continue
    const summary = messages.slice(i + 1).find((m) => m.info.role === "assistant" && m.info.summary === true)
    // A summary still being written, or one that failed, hides nothing.
    if (summary?.info.role !== "assistant" || summary.info.error || summary.info.finish === undefined) continue
    const keepFrom = compaction.keepFrom
    const kept = keepFrom ? messages.slice(0, i).filter((m) => m.info.id >= keepFrom) : []
    const after = messages.slice(i + 1).filter((m) => m !== summary)
    return [message, summary, ...kept, ...after]
  }
  return messages
}

const toolOutput = (part: ToolPart): string => {
  const state = part.state
  if (state.status === "completed") return state.time.compacted !== undefined ? PRUNED_OUTPUT : state.output
  if (state.status === "error") return state.error
  return "aborted"
}

/** How the history is shaped for one model. */
export interface ModelMessageOptions {
  /**
   * Whether the model takes images (`ModelInfo.capabilities.image`, default true). Without it, images a tool
   * returned and image attachments become a one-line note, so a text-only model never receives image data.
   */
  readonly images?: boolean
}

/** An image as a data URL, split into its media type and base64 data; undefined for anything else. */
const imageData = (mime: string, url: string): { mediaType: string; data: string } | undefined => {
  if (!mime.startsWith("image/")) return undefined
  const match = /^data:([^;,]+)?(?:;[^,]*)?;base64,(.*)$/s.exec(url)
  return match?.[2] === undefined ? undefined : { mediaType: match[1] ?? mime, data: match[2] }
}

const imageNote = (name: string) => `[image ${name}: not shown, this model does not take images]`

/** A finished tool call's result: text, plus its image attachments as images for a model that takes them. */
const toolResultOutput = (part: ToolPart, images: boolean): ToolResultPart["output"] => {
  const state = part.state
  if (state.status === "error") return { type: "error-text", value: toolOutput(part) }
  const text = toolOutput(part)
  const imageCount =
    state.status === "completed" ? (state.attachments ?? []).filter((a) => a.mime.startsWith("image/")).length : 0
  if (!images && imageCount > 0 && state.status === "completed" && state.time.compacted === undefined)
    return {
      type: "text",
      value: `${text}\n[${imageCount === 1 ? "1 image" : `${imageCount} images`} not shown: this model does not take images]`
    }
  const attached =
    state.status === "completed" && state.time.compacted === undefined && images
      ? (state.attachments ?? []).flatMap((a) => {
          const image = imageData(a.mime, a.url)
          return image ? [image] : []
        })
      : []
  if (attached.length === 0) return { type: "text", value: text }
  return {
    type: "content",
    value: [
      { type: "text", text },
      ...attached.map((image) => ({
        type: "file" as const,
        mediaType: image.mediaType,
        data: { type: "data" as const, data: image.data }
      }))
    ]
  }
}

const userContent = (parts: ReadonlyArray<Part>, images: boolean, answeredBy?: string): UserContent => {
  const content: Exclude<UserContent, string> = []
  for (const part of parts) {
    if (part.type === "text" && part.text.length > 0) content.push({ type: "text", text: part.text })
    else if (part.type === "file") {
      if (part.mime.startsWith("text/") || part.mime === "application/x-directory") continue // inlined as text parts
      if (!images && part.mime.startsWith("image/")) {
        content.push({ type: "text", text: imageNote(part.filename ?? part.mime) })
        continue
      }
      content.push({
        type: "file",
        mediaType: part.mime,
        data: part.url,
        ...(part.filename ? { filename: part.filename } : {})
      })
    } else if (part.type === "compaction")
      content.push({
        type: "text",
        text: "What did we do so far? Summarise the conversation so that work can continue from the summary alone."
      })
    // The subagent the person addressed took the prompt itself: it is not told to hand it to itself.
    else if (part.type === "agent" && part.name !== answeredBy)
      content.push({ type: "text", text: `Use the ${part.name} agent (the task tool) for this request.` })
    else if (part.type === "subtask")
      content.push({ type: "text", text: `The ${part.agent} agent was asked to: ${part.description}` })
  }
  return content
}

/**
 * Whether reasoning metadata carries the provider's encrypted reasoning (OpenAI's `reasoningEncryptedContent`, kept
 * when responses are not stored): such a part goes back even with no summary text, or the model loses its reasoning.
 */
const encrypted = (metadata: Readonly<Record<string, unknown>> | undefined): boolean =>
  metadata !== undefined &&
  Object.values(metadata).some(
    (entry) =>
      typeof entry === "object" &&
      entry !== null &&
      typeof (entry as { reasoningEncryptedContent?: unknown }).reasoningEncryptedContent === "string"
  )

/** A provider-run call's stored output (the JSON of what the provider sent) as the result its SDK replays. */
const providerOutput = (output: string): ToolResultPart["output"] => {
  try {
    return { type: "json", value: JSON.parse(output) as JSONValue }
  } catch {
    return { type: "text", value: output }
  }
}

/** One stored message as the model's messages: a user message, or an assistant message and its tool results. */
const convertMessage = ({ info, parts }: MessageWithParts, images: boolean): ReadonlyArray<ModelMessage> => {
  if (info.role === "user") {
    const content = userContent(parts, images, info.agent)
    return content.length > 0 ? [{ role: "user", content }] : []
  }
  const content: Exclude<AssistantContent, string> = []
  const results: ToolContent = []
  const added: Exclude<UserContent, string> = [] // synthetic text (rules added after a call): context, not its words
  for (const part of parts) {
    if (part.type === "text" && part.synthetic === true) {
      if (part.text.length > 0) added.push({ type: "text", text: part.text })
    } else if (part.type === "text" && part.text.length > 0) content.push({ type: "text", text: part.text })
    else if (part.type === "reasoning" && (part.text.length > 0 || encrypted(part.metadata)))
      content.push({
        type: "reasoning",
        text: part.text,
        ...(part.metadata ? { providerOptions: part.metadata as Record<string, Record<string, never>> } : {})
      })
    else if (part.type === "tool" && part.state.status === "completed" && part.state.metadata.providerExecuted === true)
      // A call the provider ran itself (its web search) goes back as the provider's own call and result, in the
      // assistant message, as its SDK replays them (Anthropic's server_tool_use and web_search_tool_result).
      content.push(
        {
          type: "tool-call",
          toolCallId: part.callID,
          toolName: part.tool,
          input: part.state.input,
          providerExecuted: true
        },
        { type: "tool-result", toolCallId: part.callID, toolName: part.tool, output: providerOutput(part.state.output) }
      )
    else if (part.type === "tool" && part.state.status !== "pending" && part.state.status !== "running") {
      content.push({
        type: "tool-call",
        toolCallId: part.callID,
        toolName: part.tool,
        input: part.state.input,
        ...(part.providerMetadata ? { providerOptions: part.providerMetadata as SharedV4ProviderOptions } : {})
      })
      results.push({
        type: "tool-result",
        toolCallId: part.callID,
        toolName: part.tool,
        output: toolResultOutput(part, images)
      })
    }
  }
  const out: Array<ModelMessage> = []
  if (content.length > 0) out.push({ role: "assistant", content })
  if (results.length > 0) out.push({ role: "tool", content: results })
  if (added.length > 0) out.push({ role: "user", content: added })
  return out
}

/** A message's conversion, with the exact values it was made from. */
interface Converted {
  readonly parts: ReadonlyArray<Part>
  readonly images: boolean
  readonly messages: ReadonlyArray<ModelMessage>
}

// Conversions by the message's `info` object. The stores hand out the same immutable `info` and part values until a
// message or part is written again (a write makes a new value), so a message whose `info` and parts are the very
// values converted before converts to the same messages: the loop converts only what changed since its last step,
// not the whole history. A revert, a compaction, a pruned output or an edited part brings new values and a new
// conversion; a message no longer held by anyone drops out of the map with its `info`.
const converted = new WeakMap<object, Converted>()

const sameParts = (a: ReadonlyArray<Part>, b: ReadonlyArray<Part>): boolean =>
  a.length === b.length && a.every((part, i) => part === b[i])

/** `convertMessage`, reusing the last conversion of the same values. */
const convertCached = (message: MessageWithParts, images: boolean): ReadonlyArray<ModelMessage> => {
  const held = converted.get(message.info)
  if (held !== undefined && held.images === images && sameParts(held.parts, message.parts)) return held.messages
  const messages = convertMessage(message, images)
  converted.set(message.info, { parts: [...message.parts], images, messages })
  return messages
}

/**
 * Converts stored messages into the model's messages: user parts to user content, assistant text and reasoning to
 * assistant content, each finished tool call to a tool-call (with the provider data it came with, such as Gemini's
 * thought signature) plus its tool-result (errors as error text; images the tool returned as image content for a
 * model that takes them, see {@link ModelMessageOptions}). An assistant message's synthetic text (rules Lathe added
 * after a call) follows its tool results as a user message. Retry, step and patch parts are bookkeeping and never
 * sent.
 *
 * Messages and parts are taken as immutable values (as the stores hand them out): a message converted before, with
 * the same `info` and part objects, gives the same model messages again without converting them. The returned
 * array is new; the model messages in it may be shared with earlier calls and must not be mutated.
 */
export const toModelMessages = (
  messages: ReadonlyArray<MessageWithParts>,
  options: ModelMessageOptions = {}
): Array<ModelMessage> => {
  const images = options.images !== false
  const out: Array<ModelMessage> = []
  for (const message of visibleHistory(messages)) out.push(...convertCached(message, images))
  return out
}

/**
 * For providers whose tool results carry only text (OpenAI-compatible servers): the images of each tool result move
 * to a user message right after the tool results, introduced by a line naming the calls they came from. Other
 * messages are returned as they are.
 */
export const liftToolImages = (messages: ReadonlyArray<ModelMessage>): Array<ModelMessage> => {
  const out: Array<ModelMessage> = []
  for (const message of messages) {
    // Most tool results are text: only a result with content (images) is rebuilt; every other message is kept as is.
    if (
      message.role !== "tool" ||
      !message.content.some((p) => p.type === "tool-result" && p.output.type === "content")
    ) {
      out.push(message)
      continue
    }
    const images: Array<{ type: "file"; mediaType: string; data: { type: "data"; data: string } }> = []
    const from: Array<string> = []
    const content = message.content.map((part) => {
      if (part.type !== "tool-result" || part.output.type !== "content") return part
      const texts: Array<string> = []
      for (const item of part.output.value) {
        if (item.type === "text") texts.push(item.text)
        else if (item.type === "file" && item.data.type === "data" && typeof item.data.data === "string") {
          images.push({ type: "file", mediaType: item.mediaType, data: { type: "data", data: item.data.data } })
          if (!from.includes(part.toolName)) from.push(part.toolName)
        }
      }
      return { ...part, output: { type: "text" as const, value: texts.join("\n") } }
    })
    if (images.length === 0) {
      out.push(message)
      continue
    }
    out.push(
      { ...message, content },
      { role: "user", content: [{ type: "text", text: `Images returned by ${from.join(", ")}:` }, ...images] }
    )
  }
  return out
}
