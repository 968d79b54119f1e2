import type { ToolAttachment, ToolResult } from "@lathe/plugin"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"

type Block = CallToolResult["content"][number]

const size = (base64: string): number => Math.floor((base64.length * 3) / 4)

/** One content block as text for the model, plus an attachment for images. */
const convert = (block: Block): { readonly text: string; readonly attachment?: ToolAttachment } => {
  switch (block.type) {
    case "text":
      return { text: block.text }
    case "image":
      return {
        text: `[image ${block.mimeType}, ${size(block.data)} bytes, attached]`,
        attachment: { mime: block.mimeType, url: `data:${block.mimeType};base64,${block.data}` }
      }
    case "audio":
      return { text: `[audio ${block.mimeType}, ${size(block.data)} bytes: not shown]` }
    case "resource": {
      const resource = block.resource
      if ("text" in resource) return { text: `Resource ${resource.uri}:\n${resource.text}` }
      return { text: `[resource ${resource.uri} (${resource.mimeType ?? "binary"}), ${size(resource.blob)} bytes]` }
    }
    case "resource_link":
      return {
        text: `Resource link: ${block.uri}${block.name ? ` (${block.name})` : ""}${block.description ? ` — ${block.description}` : ""}`
      }
    default:
      return { text: JSON.stringify(block) }
  }
}

/**
 * An MCP tool result as a Lathe tool result: text blocks as text; images as attachments (image parts for models
 * that take them) with a one-line note in the text for those that do not; embedded resources as their text (or a
 * note for binary ones); `structuredContent` as JSON text when the text blocks do not already carry it. A result
 * with `isError` throws its text, which becomes the tool's error for the model.
 */
export const toToolResult = (lathe: string, result: CallToolResult): ToolResult => {
  const converted = (result.content ?? []).map(convert)
  const texts = converted.map((c) => c.text)
  if (result.structuredContent !== undefined) {
    const json = JSON.stringify(result.structuredContent, null, 2)
    const compact = JSON.stringify(result.structuredContent)
    const carried = texts.some((t) => {
      try {
        return JSON.stringify(JSON.parse(t)) === compact
      } catch {
        return false
      }
    })
    if (!carried) texts.push(json)
  }
  const output = texts.join("\n\n")
  if (result.isError) throw new Error(output || `The ${lathe} tool reported an error without a message.`)
  const attachments = converted.flatMap((c) => (c.attachment ? [c.attachment] : []))
  return {
    title: lathe,
    output: output || "(the tool returned no content)",
    ...(attachments.length > 0 ? { attachments } : {})
  }
}
