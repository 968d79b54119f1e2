import { chmodSync, mkdirSync, renameSync, statSync, unlinkSync, writeFileSync } from "node:fs"
import { chmod, mkdir, rename, stat, unlink, writeFile } from "node:fs/promises"
import { basename, dirname, join } from "node:path"
import { createTwoFilesPatch } from "diff"

/**
 * A text file split into what the edit tools match against (`text`: LF line endings, no BOM) and how to
 * write it back (`bom`, `eol`). A file with mixed endings is treated as its majority style.
 */
export interface TextFile {
  readonly text: string
  readonly bom: boolean
  readonly eol: "\n" | "\r\n"
}

/** Splits raw file content into matchable text and its on-disk format. */
export const parseText = (raw: string): TextFile => {
  const bom = raw.charCodeAt(0) === 0xfeff
  const body = bom ? raw.slice(1) : raw
  const crlf = body.split("\r\n").length - 1
  const lf = body.split("\n").length - 1 - crlf
  const eol = crlf > lf ? "\r\n" : "\n"
  return { text: crlf > 0 ? body.replace(/\r\n/g, "\n") : body, bom, eol }
}

/** Turns matchable text back into file content in the file's original format. */
export const formatText = (file: Omit<TextFile, "text">, text: string): string =>
  (file.bom ? "\uFEFF" : "") + (file.eol === "\r\n" ? text.replace(/\n/g, "\r\n") : text)

/** LF-normalises a string the model sent, so it can be matched against {@link TextFile.text}. */
export const normaliseNewlines = (value: string): string => value.replace(/\r\n/g, "\n")

/** A unified diff of one file, labelled with `label` on both sides. */
export const unifiedDiff = (label: string, before: string, after: string): string =>
  createTwoFilesPatch(label, label, normaliseNewlines(before), normaliseNewlines(after), undefined, undefined, {
    context: 3
  })

/** Counts `+` and `-` lines of a unified diff (headers excluded). */
export const diffStats = (diff: string): { readonly additions: number; readonly deletions: number } => {
  let additions = 0
  let deletions = 0
  for (const line of diff.split("\n")) {
    if (line.startsWith("+") && !line.startsWith("+++")) additions++
    else if (line.startsWith("-") && !line.startsWith("---")) deletions++
  }
  return { additions, deletions }
}

/**
 * The name of the temp file {@link writeFileAtomic} writes beside `path` before renaming it over `path`: the file's
 * name cut to 32 characters (at most 128 bytes), so that a name near the file system's limit (255 bytes) still
 * leaves room for the suffix, and 32 random bits (from the pool `randomUUID` keeps: `randomBytes` asks the system
 * each call). It is created exclusively (`wx`): whatever already has that name, a link someone placed there included,
 * fails the write instead of being written through.
 */
const tempBeside = (path: string): string =>
  join(
    dirname(path),
    `.${[...basename(path)].slice(0, 32).join("")}.lathe-${process.getBuiltinModule("node:crypto").randomUUID().slice(0, 8)}.tmp`
  )

/**
 * Texts up to this size (UTF-8 bytes) are read and written with synchronous calls: a few syscalls of microseconds
 * each, where the promise API takes a thread-pool round trip per call (an edit was ~13 of them, 2.5–4 ms of the step
 * on a busy loop). Larger ones go through the thread pool, so a huge file never holds the event loop.
 */
export const SYNC_TEXT_BYTES = 1024 * 1024

/**
 * Writes `content` to `path` atomically: a temp file beside it, then a rename, so a reader never sees half a
 * file. Creates missing parent folders and keeps an existing file's permission bits. A text of at most
 * {@link SYNC_TEXT_BYTES} is written with synchronous calls, a larger one through the thread pool.
 */
export const writeFileAtomic = async (path: string, content: string): Promise<void> => {
  if (content.length <= SYNC_TEXT_BYTES / 3 || Buffer.byteLength(content) <= SYNC_TEXT_BYTES)
    return writeFileAtomicSync(path, content)
  await mkdir(dirname(path), { recursive: true })
  const mode = await stat(path).then(
    (info) => info.mode & 0o7777,
    () => undefined
  )
  const temp = tempBeside(path)
  let written = false
  try {
    await writeFile(temp, content, { flag: "wx" })
    written = true
    if (mode !== undefined) await chmod(temp, mode)
    await rename(temp, path)
  } catch (error) {
    if (written || !nameTaken(error)) await unlink(temp).catch(() => undefined)
    throw error
  }
}

/** The exclusive create found something at the temp file's name: it is not this write's to remove. */
const nameTaken = (error: unknown): boolean => (error as NodeJS.ErrnoException | undefined)?.code === "EEXIST"

/** {@link writeFileAtomic} in synchronous calls. */
const writeFileAtomicSync = (path: string, content: string): void => {
  let mode: number | undefined
  try {
    mode = statSync(path).mode & 0o7777
  } catch {
    // No file there yet: the new one gets the default mode, in its folder made if missing (a file there is its folder).
    mkdirSync(dirname(path), { recursive: true })
  }
  const temp = tempBeside(path)
  let written = false
  try {
    writeFileSync(temp, content, { flag: "wx" })
    written = true
    if (mode !== undefined) chmodSync(temp, mode)
    renameSync(temp, path)
  } catch (error) {
    if (written || !nameTaken(error))
      try {
        unlinkSync(temp)
      } catch {
        // the temp file was never made, or is gone already
      }
    throw error
  }
}
