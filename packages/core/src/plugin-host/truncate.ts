import { mkdir, readdir, stat, unlink, writeFile } from "node:fs/promises"
import { join } from "node:path"
import type { TruncatedOutput } from "@lathe/plugin/host"
import { Clock, Effect } from "effect"

/** How a tool's output is cut down before the model sees it. */
export interface TruncationOptions {
  /** Where the full text of a truncated output is saved (created when missing). */
  readonly dir: string
  /** Most lines kept; default {@link DEFAULT_MAX_LINES}. */
  readonly maxLines?: number
  /** Most UTF-8 bytes kept; default {@link DEFAULT_MAX_BYTES}. */
  readonly maxBytes?: number
  /** Keep the first lines (`head`, the default) or the last ones (`tail`, e.g. for logs). */
  readonly direction?: "head" | "tail"
}

export const DEFAULT_MAX_LINES = 2000
export const DEFAULT_MAX_BYTES = 50 * 1024
const WEEK_MS = 7 * 24 * 60 * 60 * 1000

/** The folder for saved tool outputs inside Lathe's data dir. */
export const truncationDir = (dataDir: string): string => join(dataDir, "tool-output")

const utf8Length = (codePoint: number): number =>
  codePoint < 0x80 ? 1 : codePoint < 0x800 ? 2 : codePoint < 0x10000 ? 3 : 4

/** The longest prefix of `line` that fits in `max` bytes, never splitting a character. */
const fitHead = (line: string, max: number): string => {
  let bytes = 0
  let end = 0
  for (const char of line) {
    bytes += utf8Length(char.codePointAt(0) ?? 0)
    if (bytes > max) break
    end += char.length
  }
  return line.slice(0, end)
}

/** The longest suffix of `line` that fits in `max` bytes, never splitting a character or a surrogate pair. */
const fitTail = (line: string, max: number): string => {
  let bytes = 0
  let start = line.length
  while (start > 0) {
    const low = line.charCodeAt(start - 1)
    const high = start > 1 ? line.charCodeAt(start - 2) : 0
    const pair = low >= 0xdc00 && low <= 0xdfff && high >= 0xd800 && high <= 0xdbff
    const from = pair ? start - 2 : start - 1
    bytes += utf8Length(line.codePointAt(from) ?? 0)
    if (bytes > max) break
    start = from
  }
  return line.slice(start)
}

/** Keeps whole lines from one end within both limits; a first line that alone is too long is cut. */
const keep = (lines: ReadonlyArray<string>, maxLines: number, maxBytes: number, tail: boolean) => {
  const kept: Array<string> = []
  let bytes = 0
  for (let i = 0; i < lines.length && kept.length < maxLines; i++) {
    const line = lines[tail ? lines.length - 1 - i : i] ?? ""
    const cost = Buffer.byteLength(line) + (kept.length > 0 ? 1 : 0)
    if (bytes + cost > maxBytes) {
      if (kept.length === 0) return { text: tail ? fitTail(line, maxBytes) : fitHead(line, maxBytes), whole: 0 }
      break
    }
    kept.push(line)
    bytes += cost
  }
  if (tail) kept.reverse()
  return { text: kept.join("\n"), whole: kept.length }
}

const reason = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/** Saves the full text; succeeds with the path, or fails with why it could not. */
const save = (text: string, dir: string, name: string) =>
  Effect.gen(function* () {
    const now = yield* Clock.currentTimeMillis
    const safeName = name.replace(/[^A-Za-z0-9._-]/g, "_") || "output"
    const path = join(
      dir,
      `${safeName}-${now}-${process.getBuiltinModule("node:crypto").randomBytes(3).toString("hex")}.txt`
    )
    yield* Effect.tryPromise({
      try: async () => {
        await mkdir(dir, { recursive: true, mode: 0o700 })
        await writeFile(path, text, { mode: 0o600, flag: "wx" })
      },
      catch: reason
    })
    return path
  })

/**
 * Cuts `text` to `maxLines` lines and `maxBytes` UTF-8 bytes, keeping whole lines from the head (or the
 * tail). When it cuts, the full text is saved under `dir` and a note telling the model where to find it is
 * added (after the kept text for `head`, before it for `tail`). Never fails: when the file cannot be written,
 * the note says so and gives the reason.
 */
export const truncateOutput = Effect.fn("truncateOutput")(function* (
  text: string,
  options: TruncationOptions & { readonly name: string }
) {
  const maxLines = options.maxLines ?? DEFAULT_MAX_LINES
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES
  const pieces = text.split("\n")
  // A trailing newline ends the last line; it does not start another one.
  const lines = pieces.length > 1 && pieces[pieces.length - 1] === "" ? pieces.slice(0, -1) : pieces
  const totalBytes = Buffer.byteLength(text)
  if (lines.length <= maxLines && totalBytes <= maxBytes) {
    const unchanged: TruncatedOutput = { content: text, truncated: false }
    return unchanged
  }

  const tail = options.direction === "tail"
  const kept = keep(lines, maxLines, maxBytes, tail)
  const saved = yield* Effect.result(save(text, options.dir, options.name))
  const cut = lines.length - kept.whole
  const where =
    saved._tag === "Success"
      ? `The full output is saved at ${saved.success}. Read it with the read tool using offset and limit, ` +
        `or search it with grep, instead of asking for it all again.`
      : `The full output could not be saved (${saved.failure}).`
  const note =
    `... ${cut} ${tail ? "earlier" : "more"} lines truncated ` +
    `(output was ${lines.length} lines, ${totalBytes} bytes). ${where}`
  const content = tail ? `${note}\n\n${kept.text}` : `${kept.text}\n\n${note}`
  const result: TruncatedOutput =
    saved._tag === "Success" ? { content, truncated: true, outputPath: saved.success } : { content, truncated: true }
  return result
})

/**
 * Deletes the files in `dir` last modified more than `maxAgeMs` ago (default 7 days), by the Effect `Clock`.
 * A missing dir, or a file that vanishes or cannot be deleted, is skipped; this never fails.
 */
export const cleanupTruncationDir = Effect.fn("cleanupTruncationDir")(function* (
  dir: string,
  maxAgeMs: number = WEEK_MS
) {
  const now = yield* Clock.currentTimeMillis
  const names = yield* Effect.promise(() => readdir(dir).catch((): Array<string> => []))
  yield* Effect.forEach(
    names,
    (name) =>
      Effect.promise(async () => {
        const path = join(dir, name)
        const info = await stat(path).catch(() => undefined)
        if (info?.isFile() && now - info.mtimeMs > maxAgeMs) await unlink(path).catch(() => undefined)
      }),
    { discard: true, concurrency: 8 }
  )
})
