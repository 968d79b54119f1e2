import { type Stats, statSync } from "node:fs"
import { unlink } from "node:fs/promises"
import { type HostCallSite, type HostFiles, Tool } from "@lathe/plugin"
import { z } from "zod"
import { loadDescription } from "./description.js"
import { type PatchChunk, parsePatch } from "./patch-parse.js"
import { checkProtected, type Located, locate, resolvePath } from "./paths.js"
import { normaliseLine } from "./similarity.js"
import type { ToolState } from "./state.js"
import { formatText, parseText, unifiedDiff } from "./text-file.js"
import { readText, writeText } from "./text-io.js"
import { toolSchema } from "./tool-schemas.js"

/** `apply_patch` arguments. */
export const ApplyPatchInput = z.object({
  patchText: z.string().min(1).describe("The whole patch, from *** Begin Patch to *** End Patch")
})
/** `apply_patch` arguments, parsed. */
export type ApplyPatchInput = z.infer<typeof ApplyPatchInput>

const COMPARATORS: ReadonlyArray<(line: string) => string> = [
  (line) => line,
  (line) => line.trimEnd(),
  (line) => line.trim(),
  normaliseLine
]

/** Where `wanted` occurs in `lines` at or after `from`, comparing ever more loosely; -1 when nowhere. */
const seek = (lines: ReadonlyArray<string>, wanted: ReadonlyArray<string>, from: number, atEnd: boolean): number => {
  for (const key of COMPARATORS) {
    const want = wanted.map(key)
    const fits = (at: number) => want.every((w, k) => key(lines[at + k] ?? "") === w)
    if (atEnd && lines.length - want.length >= from && fits(lines.length - want.length))
      return lines.length - want.length
    for (let at = from; at + want.length <= lines.length; at++) if (fits(at)) return at
  }
  return -1
}

/** Applies an update's chunks to LF text, in order; throws a model-facing Error when a chunk does not fit. */
const applyChunks = (text: string, chunks: ReadonlyArray<PatchChunk>, label: string): string => {
  const lines = (text.endsWith("\n") ? text.slice(0, -1) : text).split("\n")
  if (text === "") lines.length = 0
  const edits: Array<{ at: number; remove: number; insert: ReadonlyArray<string> }> = []
  let cursor = 0
  for (const chunk of chunks) {
    if (chunk.context !== undefined) {
      const at = seek(lines, [chunk.context], cursor, false)
      if (at < 0) throw new Error(`Could not find the line "@@ ${chunk.context}" in ${label}.`)
      cursor = at + 1
    }
    if (chunk.oldLines.length === 0) {
      const at = chunk.context !== undefined ? cursor : lines.length
      edits.push({ at, remove: 0, insert: chunk.newLines })
      continue
    }
    let old = chunk.oldLines
    let fresh = chunk.newLines
    let at = seek(lines, old, cursor, chunk.endOfFile)
    if (at < 0 && old[old.length - 1] === "") {
      old = old.slice(0, -1)
      fresh = fresh[fresh.length - 1] === "" ? fresh.slice(0, -1) : fresh
      at = seek(lines, old, cursor, chunk.endOfFile)
    }
    if (at < 0) throw new Error(`Could not find these lines in ${label}:\n${chunk.oldLines.join("\n")}`)
    edits.push({ at, remove: old.length, insert: fresh })
    cursor = at + old.length
  }
  for (const edit of edits.reverse()) lines.splice(edit.at, edit.remove, ...edit.insert)
  // As the reference implementation does, an updated file ends with a newline (it keeps or gains one).
  return lines.length === 0 ? "" : `${lines.join("\n")}\n`
}

interface Change extends Located {
  /** Raw content before (undefined: the file is new). */
  readonly before: string | undefined
  /** Raw content after (undefined: the file is deleted). */
  readonly after: string | undefined
  readonly status: "A" | "M" | "D"
  /** An added file (or a move's destination) replaced a file that was there. */
  readonly overwrote?: boolean
}

const load = async (real: string, files: HostFiles | undefined, at: HostCallSite): Promise<string | undefined> => {
  let info: Stats | undefined
  try {
    info = statSync(real)
  } catch {
    // nothing readable there: the patch adds the file
  }
  if (info?.isDirectory()) throw new Error(`${real} is a directory, not a file.`)
  return info ? readText(files, real, at, info) : undefined
}

/**
 * Builds the `apply_patch` tool: every file change is computed and checked first, then written all together. With
 * `textFiles` (`ctx.files`) texts are read and written through it; deleting a file stays on disk.
 */
export const createApplyPatchTool = (state: ToolState, textFiles?: HostFiles) =>
  Tool.define("apply_patch", {
    jsonSchema: toolSchema("apply_patch"),
    description: loadDescription("apply_patch"),
    parameters: ApplyPatchInput,
    mutates: true,
    edits: true,
    paths: (args) => {
      try {
        return parsePatch(args.patchText).flatMap((hunk) =>
          hunk.type === "update" && hunk.movePath !== undefined ? [hunk.path, hunk.movePath] : [hunk.path]
        )
      } catch {
        return [] // the call failed on the same patch: it touched nothing
      }
    },
    execute: async (args, ctx) => {
      const hunks = parsePatch(args.patchText)
      const at = { sessionID: ctx.sessionID, callID: ctx.callID }
      const changes: Array<Change> = []
      const target = (path: string) => locate(ctx, resolvePath(ctx, path), "file")
      for (const hunk of hunks) {
        const file = await target(hunk.path)
        const before = await load(file.real, textFiles, at)
        if (hunk.type === "add") {
          // An Add over an existing file overwrites it, as in the reference implementations; the snapshot undoes it.
          changes.push({ ...file, before, after: hunk.contents, status: "A", overwrote: before !== undefined })
          continue
        }
        if (before === undefined) throw new Error(`Cannot ${hunk.type} ${file.label}: the file does not exist.`)
        if (hunk.type === "delete") {
          changes.push({ ...file, before, after: undefined, status: "D" })
          continue
        }
        const format = parseText(before)
        const after = formatText(format, applyChunks(format.text, hunk.chunks, file.label))
        const dest = hunk.movePath === undefined ? undefined : await target(hunk.movePath)
        if (dest === undefined || dest.real === file.real) changes.push({ ...file, before, after, status: "M" })
        else {
          // A move over an existing destination overwrites it, as in the reference implementations.
          const existing = await load(dest.real, textFiles, at)
          changes.push({ ...file, before, after: undefined, status: "D" })
          changes.push({ ...dest, before: existing, after, status: "A", overwrote: existing !== undefined })
        }
      }
      if (changes.every((c) => c.before === c.after))
        throw new Error(
          `The patch changes nothing: every file it names already has the content it describes, so nothing was ` +
            `written. Read the files to see their current content.`
        )
      const diff = changes.map((c) => unifiedDiff(c.label, c.before ?? "", c.after ?? "")).join("\n")
      const files = [...new Set(changes.map((c) => c.label))]
      // Each file is judged by its path as given and its real path: the strictest verdict of all wins.
      const patterns = [...new Set(changes.flatMap((c) => c.patterns))]
      await ctx.ask({ permission: "edit", patterns, metadata: { diff, files } })
      for (const change of changes)
        await checkProtected(ctx, change.path, change.real, {
          filepath: change.path,
          diff: unifiedDiff(change.label, change.before ?? "", change.after ?? "")
        })

      const done: Array<Change> = []
      try {
        // Writes before deletes, so a move never loses its content halfway.
        for (const change of [...changes].sort((a, b) => Number(a.status === "D") - Number(b.status === "D"))) {
          if (change.after === undefined) await unlink(change.real)
          else await writeText(textFiles, change.real, change.after, at)
          done.push(change)
        }
      } catch (error) {
        for (const change of done.reverse()) {
          if (change.before === undefined) await unlink(change.real).catch(() => undefined)
          else await writeText(textFiles, change.real, change.before, at).catch(() => undefined)
        }
        const reason = error instanceof Error ? error.message : String(error)
        throw new Error(`Applying the patch failed (${reason}). Every file was restored to its state before the patch.`)
      }
      for (const change of changes)
        if (change.after !== undefined) state.recordRead(ctx.sessionID, change.real, statSync(change.real))
      const summary = changes
        .map((c) => `${c.status} ${c.label}${c.overwrote ? " (overwrote the existing file)" : ""}`)
        .join("\n")
      return {
        title: `${changes.length} file${changes.length === 1 ? "" : "s"}`,
        output: `Applied the patch:\n${summary}`,
        metadata: {
          diff,
          files: changes.map((c) => ({ path: c.path, status: c.status, ...(c.overwrote ? { overwrote: true } : {}) }))
        }
      }
    }
  })
