import { createReadStream } from "node:fs"
import { open, readdir, readFile, stat } from "node:fs/promises"
import { basename, dirname, extname, join } from "node:path"
import { createInterface } from "node:readline"
import { Tool } from "@lathe/core"
import { z } from "zod"
import { loadDescription } from "./description.js"
import { checkExternal, displayPath, errorCode, resolvePath } from "./paths.js"
import { levenshtein } from "./similarity.js"
import type { ToolState } from "./state.js"

/** Lines returned when no `limit` is given. */
export const DEFAULT_READ_LIMIT = 2000
/** Longer lines are cut to this many characters. */
export const MAX_LINE_LENGTH = 2000
/** The output stops before this many bytes of file text, with a hint to read on. */
export const MAX_READ_BYTES = 50 * 1024
/** Images larger than this are refused rather than attached. */
export const MAX_IMAGE_BYTES = 5 * 1024 * 1024

const IMAGES: Readonly<Record<string, string>> = {
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".gif": "image/gif",
  ".webp": "image/webp",
  ".bmp": "image/bmp"
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

/** Whether the first 4 KB look like binary data: a NUL byte, or over 30% control characters. */
const looksBinary = async (path: string): Promise<boolean> => {
  const handle = await open(path, "r")
  try {
    const buffer = Buffer.alloc(4096)
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0)
    let control = 0
    for (let i = 0; i < bytesRead; i++) {
      const byte = buffer[i] ?? 0
      if (byte === 0) return true
      if (byte < 9 || (byte > 13 && byte < 32)) control++
    }
    return bytesRead > 0 && control / bytesRead > 0.3
  } finally {
    await handle.close()
  }
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

/** Builds the `read` tool; it records every file it reads (and its mtime) in `state` for the session. */
export const createReadTool = (state: ToolState) =>
  Tool.define("read", {
    description: loadDescription("read"),
    parameters: ReadInput,
    mutates: false,
    execute: async (args, ctx) => {
      const path = resolvePath(ctx, args.filePath)
      const label = displayPath(ctx.root, path)
      const real = await checkExternal(ctx, path, "file")
      await ctx.ask({ permission: "read", patterns: [label], always: [label], metadata: { filepath: path } })
      const info = await stat(real).catch(async (error: unknown) => {
        if (errorCode(error) !== "ENOENT") throw error
        const near = await suggestions(path)
        const hint = near.length > 0 ? `\n\nDid you mean one of these?\n${near.join("\n")}` : ""
        throw new Error(`File not found: ${path}${hint}`)
      })
      if (info.isDirectory())
        throw new Error(`${label} is a directory, not a file. Use the list tool to see what it contains.`)
      const extension = extname(real).toLowerCase()
      const mime = IMAGES[extension]
      if (mime) {
        if (info.size > MAX_IMAGE_BYTES)
          throw new Error(`${label} is an image of ${info.size} bytes; images over 5 MB are not attached.`)
        const data = await readFile(real)
        state.recordRead(ctx.sessionID, real, info)
        return {
          title: label,
          output: `Image read successfully: ${label} (${mime}, ${info.size} bytes). It is attached.`,
          metadata: { filepath: path, truncated: false },
          attachments: [{ mime, url: `data:${mime};base64,${data.toString("base64")}`, filename: basename(real) }]
        }
      }
      if (BINARY.has(extension) || (await looksBinary(real)))
        throw new Error(`Cannot read binary file: ${label}. The read tool only shows text files.`)

      const offset = args.offset ?? 1
      const limit = args.limit ?? DEFAULT_READ_LIMIT
      const shown: Array<string> = []
      let lineNo = 0
      let bytes = 0
      let more = false
      let cutByBytes = false
      const lines = createInterface({ input: createReadStream(real, "utf8"), crlfDelay: Number.POSITIVE_INFINITY })
      for await (const raw of lines) {
        lineNo++
        if (lineNo < offset) continue
        if (shown.length >= limit) {
          more = true
          break
        }
        const line = raw.length > MAX_LINE_LENGTH ? `${raw.slice(0, MAX_LINE_LENGTH)}... (line cut at 2000 chars)` : raw
        const entry = `${String(lineNo).padStart(6)}\t${line}`
        bytes += Buffer.byteLength(entry) + 1
        if (bytes > MAX_READ_BYTES && shown.length > 0) {
          more = true
          cutByBytes = true
          break
        }
        shown.push(entry)
      }
      lines.close()
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
