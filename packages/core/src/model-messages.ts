import type { AssistantContent, ModelMessage, ToolContent, UserContent } from "ai"
import type { MessageWithParts } from "./message.js"
import type { CompactionPart, Part, ToolPart } from "./part.js"

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

const userContent = (parts: ReadonlyArray<Part>): UserContent => {
  const content: Exclude<UserContent, string> = []
  for (const part of parts) {
    if (part.type === "text" && part.text.length > 0) content.push({ type: "text", text: part.text })
    else if (part.type === "file") {
      if (part.mime.startsWith("text/") || part.mime === "application/x-directory") continue // inlined as text parts
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
    else if (part.type === "agent")
      content.push({ type: "text", text: `Use the ${part.name} agent (the task tool) for this request.` })
    else if (part.type === "subtask")
      content.push({ type: "text", text: `The ${part.agent} agent was asked to: ${part.description}` })
  }
  return content
}

/**
 * Converts stored messages into the model's messages: user parts to user content, assistant text and reasoning to
 * assistant content, each finished tool call to a tool-call plus its tool-result (errors as error text). Retry,
 * step and patch parts are bookkeeping and never sent.
 */
export const toModelMessages = (messages: ReadonlyArray<MessageWithParts>): Array<ModelMessage> => {
  const out: Array<ModelMessage> = []
  for (const { info, parts } of visibleHistory(messages)) {
    if (info.role === "user") {
      const content = userContent(parts)
      if (content.length > 0) out.push({ role: "user", content })
      continue
    }
    const content: Exclude<AssistantContent, string> = []
    const results: ToolContent = []
    for (const part of parts) {
      if (part.type === "text" && part.text.length > 0) content.push({ type: "text", text: part.text })
      else if (part.type === "reasoning" && part.text.length > 0)
        content.push({
          type: "reasoning",
          text: part.text,
          ...(part.metadata ? { providerOptions: part.metadata as Record<string, Record<string, never>> } : {})
        })
      else if (part.type === "tool" && part.state.status !== "pending" && part.state.status !== "running") {
        content.push({ type: "tool-call", toolCallId: part.callID, toolName: part.tool, input: part.state.input })
        results.push({
          type: "tool-result",
          toolCallId: part.callID,
          toolName: part.tool,
          output:
            part.state.status === "error"
              ? { type: "error-text", value: toolOutput(part) }
              : { type: "text", value: toolOutput(part) }
        })
      }
    }
    if (content.length > 0) out.push({ role: "assistant", content })
    if (results.length > 0) out.push({ role: "tool", content: results })
  }
  return out
}
