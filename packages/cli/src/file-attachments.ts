import { open } from "node:fs/promises"
import { isAbsolute, relative, resolve, sep } from "node:path"
import { pathToFileURL } from "node:url"
import type { PromptPart } from "@lathe/plugin/schema"
import type { Backend } from "./backend.js"

// Files named on the command line (`lathe run -f`, `lathe -f`): read and recognised here before anything starts, then
// checked against the model (images, PDFs) and the read rules (in the session the prompt goes to), then attached.

/** A text file attached with `-f` past this many bytes is refused (as piped input is): 1 MiB. */
export const TEXT_FILE_LIMIT = 1024 * 1024
/** An image attached with `-f` past this many bytes is refused (the `read` tool's limit; providers refuse more). */
export const IMAGE_FILE_LIMIT = 5 * 1024 * 1024
/** A PDF attached with `-f` past this many bytes is refused. */
export const PDF_FILE_LIMIT = 20 * 1024 * 1024

/** `bytes` as a size for a message: `1 MiB`. */
export const MiB = (bytes: number) => `${bytes / (1024 * 1024)} MiB`

/** `bytes` as UTF-8 text; undefined when they are not text (a NUL byte, or not valid UTF-8). */
export const utf8 = (bytes: Uint8Array): string | undefined => {
  if (bytes.includes(0)) return undefined
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes)
  } catch {
    return undefined
  }
}

/** A file named with `-f`, read and recognised by its bytes. */
export interface Attachment {
  /** As given on the command line. */
  readonly given: string
  /** Absolute. */
  readonly path: string
  /** How the prompt names it: relative to the working directory when inside it. */
  readonly label: string
  readonly kind: "text" | "image" | "pdf"
  readonly mime: string
  readonly bytes: Buffer
}

/** The image and PDF types a file's first bytes show (PNG, JPEG, GIF, WebP and PDF: what providers take). */
const sniff = (head: Uint8Array): { readonly kind: "image" | "pdf"; readonly mime: string } | undefined => {
  const at = (i: number, ...bytes: Array<number>) => bytes.every((byte, k) => head[i + k] === byte)
  const ascii = (i: number, text: string) => at(i, ...[...text].map((c) => c.charCodeAt(0)))
  if (at(0, 0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return { kind: "image", mime: "image/png" }
  if (at(0, 0xff, 0xd8, 0xff)) return { kind: "image", mime: "image/jpeg" }
  if (ascii(0, "GIF87a") || ascii(0, "GIF89a")) return { kind: "image", mime: "image/gif" }
  if (ascii(0, "RIFF") && ascii(8, "WEBP")) return { kind: "image", mime: "image/webp" }
  if (ascii(0, "%PDF-")) return { kind: "pdf", mime: "application/pdf" }
  return undefined
}

const LIMITS = { text: TEXT_FILE_LIMIT, image: IMAGE_FILE_LIMIT, pdf: PDF_FILE_LIMIT } as const

/** Reads one `-f` file; a string says why it cannot be attached. */
const readAttachment = async (given: string, cwd: string): Promise<Attachment | string> => {
  const path = resolve(cwd, given)
  const rel = relative(cwd, path)
  const label = rel === "" || rel === ".." || rel.startsWith(`..${sep}`) || isAbsolute(rel) ? path : rel
  let bytes: Buffer
  try {
    const file = await open(path, "r")
    try {
      const info = await file.stat()
      if (info.isDirectory())
        return `-f ${given} is a directory; attach files (name the folder in the message instead).`
      // Read one byte past the largest limit at most: a huge file is refused without being read whole.
      const most = Math.max(...Object.values(LIMITS)) + 1
      const buffer = Buffer.alloc(Math.min(info.size, most))
      const { bytesRead } = await file.read(buffer, 0, buffer.length, 0)
      bytes = buffer.subarray(0, bytesRead)
      if (info.size > bytes.length) bytes = Buffer.concat([bytes, Buffer.alloc(1)]) // marks it over every limit
    } finally {
      await file.close()
    }
  } catch (error) {
    const code = (error as { code?: string }).code
    if (code === "ENOENT") return `-f ${given}: no such file (looked for ${path}).`
    if (code === "EACCES") return `-f ${given}: permission denied reading ${path}.`
    return `-f ${given}: cannot be read (${(error as Error).message}).`
  }
  const type = sniff(bytes) ?? { kind: "text" as const, mime: "text/plain" }
  const limit = LIMITS[type.kind]
  if (bytes.length > limit)
    return `-f ${given} is larger than ${MiB(limit)}, the limit for an attached ${type.kind === "text" ? "text file" : type.kind === "pdf" ? "PDF" : "image"}; nothing was sent.`
  if (type.kind === "text" && utf8(bytes) === undefined)
    return `-f ${given} is neither UTF-8 text nor an image (PNG, JPEG, GIF, WebP) or a PDF; nothing was sent.`
  return { given, path, label, kind: type.kind, mime: type.mime, bytes }
}

/** Reads every `-f` file, in order; the first that cannot be attached ends it with its reason. */
export const readAttachments = async (
  given: ReadonlyArray<string>,
  cwd: string
): Promise<ReadonlyArray<Attachment> | string> => {
  const files: Array<Attachment> = []
  for (const name of given) {
    const file = await readAttachment(name, cwd)
    if (typeof file === "string") return file
    files.push(file)
  }
  return files
}

/**
 * The parts that carry attached files: a text file as its text in a block naming its path (beside a file part that
 * names it, as an `@file` mention attaches it), an image or a PDF as a file part holding its data.
 */
export const attachmentParts = (files: ReadonlyArray<Attachment>): ReadonlyArray<PromptPart> =>
  files.flatMap(
    (file): ReadonlyArray<PromptPart> =>
      file.kind === "text"
        ? [
            { type: "file", mime: "text/plain", url: pathToFileURL(file.path).href, filename: file.label },
            {
              type: "text",
              synthetic: true,
              text: `The user attached ${file.label}:\n<file path="${file.label}">\n${file.bytes.toString("utf8").replace(/\n$/, "")}\n</file>`
            }
          ]
        : [
            {
              type: "file",
              mime: file.mime,
              url: `data:${file.mime};base64,${file.bytes.toString("base64")}`,
              filename: file.label
            }
          ]
  )

/**
 * Whether the files may go with the prompt: an image or a PDF needs a model that takes it (checked before the session
 * exists, so a refusal leaves none behind); undefined when they may, else why not.
 */
export const unsupportedAttachment = async (
  backend: Backend,
  files: ReadonlyArray<Attachment>,
  model: string | undefined,
  agent: string
): Promise<string | undefined> => {
  const binary = files.filter((file) => file.kind !== "text")
  if (binary.length === 0) return undefined
  const resolved = await backend.resolveModel(model, agent)
  // An unknown model fails the run where it would have anyway, with the same message.
  if (!resolved.ok) return undefined
  const takes = resolved.value.takes ?? { image: false, pdf: false }
  for (const file of binary) {
    if (file.kind === "image" && !takes.image)
      return (
        `-f ${file.given}: ${resolved.value.label} does not take images, as far as the model catalogue knows, so ` +
        'nothing was sent. Choose a model that does (-m), or, if it does, set "image": true on it in lathe.json ' +
        "(provider.<id>.models.<model>)."
      )
    if (file.kind === "pdf" && !takes.pdf)
      return (
        `-f ${file.given}: ${resolved.value.label} is not known to take PDFs (the model catalogue), so nothing was ` +
        "sent. Choose a model that does (-m), or attach the text (pdftotext) instead."
      )
  }
  return undefined
}

/**
 * Asks whether the session may read the files, as the `read` tool would: an ask where a read would ask (answered as the
 * run answers asks), refused where a read is denied; undefined when it may, else why not.
 */
export const refusedAttachment = async (
  backend: Backend,
  sessionID: string,
  files: ReadonlyArray<Attachment>,
  agent: string | undefined
): Promise<string | undefined> => {
  if (files.length === 0 || backend.mayRead === undefined) return undefined
  for (const file of files) {
    const read = await backend.mayRead(sessionID, agent, [file.path])
    if (read.ok) continue
    const error = read.error as {
      _tag?: string
      permission?: string
      pattern?: string
      patterns?: ReadonlyArray<string>
    }
    const what = `${error.permission ?? "read"} ${error.pattern ?? error.patterns?.join(" ") ?? file.path}`
    return error._tag === "PermissionDenied"
      ? `-f ${file.given}: a read of it is denied by the permission rules (${what}), so nothing was sent.`
      : error._tag === "PermissionRejected"
        ? `-f ${file.given}: reading it needs permission (${what}) and the ask was rejected, so nothing was sent. ` +
          `Answer it at a terminal, or allow it for this run: --allow "${error.permission ?? "read"}:${error.pattern ?? error.patterns?.[0] ?? file.path}".`
        : `-f ${file.given}: ${read.message}`
  }
  return undefined
}
