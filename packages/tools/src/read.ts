import { readFileSync, statSync } from "node:fs"
import { open, readdir, readFile } from "node:fs/promises"
import { basename, dirname, extname, join } from "node:path"
import { type HostFiles, Tool } from "@lathe/plugin"
import { z } from "zod"
import { loadDescription } from "./description.js"
import { errorCode, locate, resolvePath } from "./paths.js"
import { boundedLines } from "./read-lines.js"
import { levenshtein } from "./similarity.js"
import type { ToolState } from "./state.js"
import { toolSchema } from "./tool-schemas.js"

/** Lines returned when no `limit` is given. */
export const DEFAULT_READ_LIMIT = 2000
/**
 * Longer lines are cut to this many characters, with a marker. Files past {@link WHOLE_FILE_BYTES} are read by bytes
 * and keep at most {@link MAX_LINE_BYTES} of a line, so a file of one huge line never sits in memory whole.
 */
export const MAX_LINE_LENGTH = 2000
/** The bytes of one line kept while streaming: enough for {@link MAX_LINE_LENGTH} characters of any UTF-8 text. */
export const MAX_LINE_BYTES = MAX_LINE_LENGTH * 4
/** The output stops before this many bytes of file text, with a hint to read on. */
export const MAX_READ_BYTES = 50 * 1024
/** Images larger than this are refused rather than attached. */
export const MAX_IMAGE_BYTES = 5 * 1024 * 1024

/** A file type recognised by its first bytes; `attach` says whether models take it as an image. */
interface Sniffed {
  readonly name: string
  readonly mime: string
  readonly attach: boolean
}

const ascii = (bytes: Uint8Array, at: number, text: string): boolean =>
  [...text].every((char, i) => bytes[at + i] === char.charCodeAt(0))

/**
 * What the first bytes of a file say it is, by magic number, whatever its name: PNG, JPEG, GIF and WebP are
 * attached as images (the types every image-taking model accepts); BMP, TIFF and PDF are recognised so the refusal
 * can name them. Undefined for anything else.
 */
export const sniffFile = (head: Uint8Array): Sniffed | undefined => {
  const at = (i: number, ...bytes: Array<number>) => bytes.every((byte, k) => head[i + k] === byte)
  if (at(0, 0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return { name: "PNG", mime: "image/png", attach: true }
  if (at(0, 0xff, 0xd8, 0xff)) return { name: "JPEG", mime: "image/jpeg", attach: true }
  if (ascii(head, 0, "GIF87a") || ascii(head, 0, "GIF89a")) return { name: "GIF", mime: "image/gif", attach: true }
  if (ascii(head, 0, "RIFF") && ascii(head, 8, "WEBP")) return { name: "WebP", mime: "image/webp", attach: true }
  if (ascii(head, 0, "BM") && head.length >= 26 && at(6, 0, 0, 0, 0))
    return { name: "BMP", mime: "image/bmp", attach: false }
  if (at(0, 0x49, 0x49, 0x2a, 0x00) || at(0, 0x4d, 0x4d, 0x00, 0x2a))
    return { name: "TIFF", mime: "image/tiff", attach: false }
  if (ascii(head, 0, "%PDF-")) return { name: "PDF", mime: "application/pdf", attach: false }
  return undefined
}

const BINARY = new Set(
  (
    ".zip .tar .gz .tgz .bz2 .xz .7z .rar .jar .war .class .exe .dll .so .dylib .o .a .lib .obj .wasm .pyc " +
    ".pdf .doc .docx .xls .xlsx .ppt .pptx .odt .ico .tiff .mp3 .mp4 .mov .avi .mkv .wav .flac .ogg .ttf .otf " +
    ".woff .woff2 .eot .sqlite .db .bin .dat .iso .dmg"
  ).split(" ")
)

/** `read` arguments. */
export const ReadInput = z.object({
  filePath: z.string().min(1).describe("The file to read: absolute, or relative to the working directory"),
  offset: z.number().int().min(1).optional().describe("The line number to start from (1-based)"),
  limit: z.number().int().min(1).optional().describe(`How many lines to read (default ${DEFAULT_READ_LIMIT})`)
})
/** `read` arguments, parsed. */
export type ReadInput = z.infer<typeof ReadInput>

/** Whether `bytes` (the first 4 KB of a file) look like binary data: a NUL byte, or over 30% control characters. */
const binaryBytes = (bytes: Uint8Array): boolean => {
  let control = 0
  for (const byte of bytes) {
    if (byte === 0) return true
    if (byte < 9 || (byte > 13 && byte < 32)) control++
  }
  return bytes.length > 0 && control / bytes.length > 0.3
}

/** The first 4 KB of the file at `path`. */
const readHead = async (path: string): Promise<Buffer> => {
  const handle = await open(path, "r")
  try {
    const buffer = Buffer.alloc(4096)
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0)
    return buffer.subarray(0, bytesRead)
  } finally {
    await handle.close()
  }
}

/**
 * Regular files up to this size are read whole, in one synchronous call (tens of microseconds), instead of through
 * a stream and readline (seven trips through the thread pool): most files an agent reads are this small.
 */
const WHOLE_FILE_BYTES = 64 * 1024

/** The lines of `text` as readline splits them (`\n`, `\r\n` or `\r`; no empty line after a final terminator). */
const splitLines = (text: string): Array<string> => {
  const lines = text.split(/\r\n|\n|\r/)
  if (lines[lines.length - 1] === "") lines.pop()
  return lines
}

/** Up to three names in the missing file's folder that look like what was asked for. */
const suggestions = async (path: string): Promise<Array<string>> => {
  const wanted = basename(path).toLowerCase()
  const stem = wanted.replace(/\.[^.]*$/, "")
  const names = await readdir(dirname(path)).catch((): Array<string> => [])
  return names
    .map((name) => ({ name, lower: name.toLowerCase() }))
    .filter(
      ({ lower }) =>
        lower.includes(stem) || stem.includes(lower.replace(/\.[^.]*$/, "")) || levenshtein(lower, wanted) <= 2
    )
    .slice(0, 3)
    .map(({ name }) => join(dirname(path), name))
}

/**
 * Builds the `read` tool; it records every file it reads (and its mtime) in `state` for the session. With `files`
 * (`ctx.files`: an editor's buffers), a text file's text comes through it; what a file is (text, image, binary) is
 * still told from its bytes on disk.
 */
export const createReadTool = (state: ToolState, files?: HostFiles) =>
  Tool.define("read", {
    jsonSchema: toolSchema("read"),
    description: loadDescription("read"),
    parameters: ReadInput,
    mutates: false,
    paths: (args) => [args.filePath],
    execute: async (args, ctx) => {
      const { path, label, real, patterns } = await locate(ctx, resolvePath(ctx, args.filePath), "file")
      await ctx.ask({ permission: "read", patterns, metadata: { filepath: path, realPath: real } })
      // One synchronous call (microseconds), as the read of a small file below: through the thread pool, it waited
      // for the event loop's next turn, which a step's other work keeps busy.
      const info = await Promise.resolve()
        .then(() => statSync(real))
        .catch(async (error: unknown) => {
          if (errorCode(error) !== "ENOENT") throw error
          const near = await suggestions(path)
          const hint = near.length > 0 ? `\n\nDid you mean one of these?\n${near.join("\n")}` : ""
          throw new Error(`File not found: ${path}${hint}`)
        })
      if (info.isDirectory())
        throw new Error(`${label} is a directory, not a file. Use the list tool to see what it contains.`)
      // A small regular file is read whole; anything else (large, or not a regular file) is streamed.
      const whole = info.isFile() && info.size <= WHOLE_FILE_BYTES ? readFileSync(real) : undefined
      const head = whole ? whole.subarray(0, 4096) : await readHead(real)
      // What a file is comes from its bytes, not its name: a JPEG called image.bin is an image.
      const sniffed = sniffFile(head)
      if (sniffed?.attach) {
        if (info.size > MAX_IMAGE_BYTES)
          throw new Error(`${label} is an image of ${info.size} bytes; images over 5 MB are not attached.`)
        const data = whole ?? (await readFile(real))
        const { mime } = sniffed
        state.recordRead(ctx.sessionID, real, info)
        return {
          title: label,
          output: `Image read successfully: ${label} (${mime}, ${info.size} bytes). It is attached.`,
          metadata: { filepath: path, truncated: false },
          attachments: [{ mime, url: `data:${mime};base64,${data.toString("base64")}`, filename: basename(real) }]
        }
      }
      if (sniffed)
        throw new Error(
          `Cannot read binary file: ${label} (a ${sniffed.name} file; only PNG, JPEG, GIF and WebP images are ` +
            `attached). The read tool only shows text files.`
        )
      if (BINARY.has(extname(real).toLowerCase()) || binaryBytes(head))
        throw new Error(`Cannot read binary file: ${label}. The read tool only shows text files.`)

      const offset = args.offset ?? 1
      const limit = args.limit ?? DEFAULT_READ_LIMIT
      const shown: Array<string> = []
      let lineNo = 0
      let bytes = 0
      let more = false
      let cutByBytes = false
      /** Takes the next line of the file; false once no more lines are wanted. */
      const take = (raw: string, cut = false): boolean => {
        lineNo++
        if (lineNo < offset) return true
        if (shown.length >= limit) {
          more = true
          return false
        }
        const line =
          cut || raw.length > MAX_LINE_LENGTH ? `${raw.slice(0, MAX_LINE_LENGTH)}... (line cut at 2000 chars)` : raw
        const entry = `${String(lineNo).padStart(6)}\t${line}`
        bytes += Buffer.byteLength(entry) + 1
        if (bytes > MAX_READ_BYTES && shown.length > 0) {
          more = true
          cutByBytes = true
          return false
        }
        shown.push(entry)
        return true
      }
      const text = files
        ? await files.readText(real, { sessionID: ctx.sessionID, callID: ctx.callID })
        : whole?.toString("utf8")
      if (text !== undefined) {
        for (const raw of splitLines(text)) if (!take(raw)) break
      } else {
        // Lines before `offset` are counted, never decoded; leaving the loop early closes the file.
        for await (const line of boundedLines(real, MAX_LINE_BYTES))
          if (!take(lineNo + 1 < offset ? "" : line.head.toString("utf8"), line.cut)) break
      }
      state.recordRead(ctx.sessionID, real, info)
      if (lineNo < offset && !(offset === 1 && lineNo === 0))
        throw new Error(`Offset ${offset} is past the end of ${label}, which has ${lineNo} lines.`)
      const last = offset + shown.length - 1
      const footer =
        lineNo === 0
          ? "(The file is empty.)"
          : more
            ? `(Showing lines ${offset}-${last}${cutByBytes ? ", cut at 50 KB" : ""}. More lines remain: ` +
              `read on with offset=${last + 1}.)`
            : `(End of file: ${lineNo} lines.)`
      return {
        title: label,
        output: `${shown.length > 0 ? `${shown.join("\n")}\n\n` : ""}${footer}`,
        metadata: { filepath: path, startLine: offset, endLine: last, more, truncated: false }
      }
    }
  })
