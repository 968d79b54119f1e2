import { isAbsolute, relative, sep } from "node:path"
import { fileURLToPath } from "node:url"
import type { ContentBlock } from "@agentclientprotocol/sdk"
import type { PromptPart } from "@lathe/plugin/schema"
import {
  type Attachment,
  attachmentParts,
  IMAGE_FILE_LIMIT,
  MiB,
  PDF_FILE_LIMIT,
  readAttachments,
  TEXT_FILE_LIMIT
} from "../file-attachments.js"

// An editor's prompt (ACP content blocks) as Lathe's: the text the person typed, and what the editor attached turned
// into the very `Attachment`s `lathe run -f` reads from disk, so they reach the model as `-f` files do
// (`attachmentParts`): a text file as its text in a block naming its path, an image or a PDF as a file part.

/** An editor's prompt, ready for the backend: the text, the files attached (for the model and read checks), parts. */
export interface AcpPrompt {
  readonly text: string
  readonly files: ReadonlyArray<Attachment>
  /** Files the prompt names by link (`resource_link` to a `file:` URI): read from disk, so a read check applies. */
  readonly linked: ReadonlyArray<Attachment>
  readonly parts: ReadonlyArray<PromptPart>
}

const label = (path: string, cwd: string): string => {
  const rel = relative(cwd, path)
  return rel === "" || rel === ".." || rel.startsWith(`..${sep}`) || isAbsolute(rel) ? path : rel
}

const filePath = (uri: string): string | undefined => {
  if (!uri.startsWith("file:")) return undefined
  try {
    return fileURLToPath(uri)
  } catch {
    return undefined
  }
}

const kindOf = (mime: string): Attachment["kind"] | undefined =>
  mime.startsWith("image/") ? "image" : mime === "application/pdf" ? "pdf" : undefined

const LIMITS = { text: TEXT_FILE_LIMIT, image: IMAGE_FILE_LIMIT, pdf: PDF_FILE_LIMIT } as const

/** An attachment made from bytes the editor sent (not read from disk); a string says why it cannot go. */
const sent = (
  given: string,
  cwd: string,
  mime: string,
  kind: Attachment["kind"],
  bytes: Buffer
): Attachment | string => {
  if (bytes.length > LIMITS[kind])
    return `${given} is larger than ${MiB(LIMITS[kind])}, the limit for an attached ${kind === "text" ? "text file" : kind === "pdf" ? "PDF" : "image"}; nothing was sent.`
  const path = filePath(given) ?? given
  return { given, path, label: filePath(given) ? label(path, cwd) : given, kind, mime, bytes }
}

/**
 * Reads an ACP prompt: text blocks joined as the person's text; images, embedded resources (text, or an image / PDF
 * blob) and links to local files as attachments; a link to anything else stays in the text as an `@<uri>` mention,
 * which the turn-runner attaches when a plugin offers that resource. A string says what cannot be sent.
 */
export const readPrompt = async (blocks: ReadonlyArray<ContentBlock>, cwd: string): Promise<AcpPrompt | string> => {
  const words: Array<string> = []
  const files: Array<Attachment> = []
  const linked: Array<Attachment> = []
  for (const block of blocks) {
    if (block.type === "text") words.push(block.text)
    else if (block.type === "image") {
      const file = sent(
        block.uri ?? `image (${block.mimeType})`,
        cwd,
        block.mimeType,
        "image",
        Buffer.from(block.data, "base64")
      )
      if (typeof file === "string") return file
      files.push(file)
    } else if (block.type === "resource") {
      const resource = block.resource
      const file =
        "text" in resource
          ? sent(resource.uri, cwd, "text/plain", "text", Buffer.from(resource.text, "utf8"))
          : ((kind) =>
              kind === undefined
                ? `${resource.uri}: a ${resource.mimeType ?? "binary"} resource cannot be attached (text, images and PDFs can).`
                : sent(resource.uri, cwd, resource.mimeType ?? "", kind, Buffer.from(resource.blob, "base64")))(
              kindOf(resource.mimeType ?? "")
            )
      if (typeof file === "string") return file
      files.push(file)
    } else if (block.type === "resource_link") {
      const path = filePath(block.uri)
      if (path === undefined) {
        words.push(`@${block.uri}`)
        continue
      }
      const read = await readAttachments([path], cwd)
      if (typeof read === "string") return read.replace(/^-f /, "")
      linked.push(...read)
    } else return `${block.type} content is not supported (text, images and resources are).`
  }
  const text = words.join("\n").trim()
  const all = [...files, ...linked]
  return { text, files: all, linked, parts: [{ type: "text", text }, ...attachmentParts(all)] }
}
