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
 * Writes `content` to `path` atomically: a temp file beside it, then a rename, so a reader never sees half a
 * file. Creates missing parent folders and keeps an existing file's permission bits.
 */
export const writeFileAtomic = async (path: string, content: string): Promise<void> => {
  await mkdir(dirname(path), { recursive: true })
  const mode = await stat(path).then(
    (info) => info.mode & 0o7777,
    () => undefined
  )
  const temp = join(
    dirname(path),
    `.${basename(path)}.lathe-${process.getBuiltinModule("node:crypto").randomBytes(4).toString("hex")}.tmp`
  )
  try {
    await writeFile(temp, content)
    if (mode !== undefined) await chmod(temp, mode)
    await rename(temp, path)
  } catch (error) {
    await unlink(temp).catch(() => undefined)
    throw error
  }
}
