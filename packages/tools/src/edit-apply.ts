import { statSync } from "node:fs"
import type { HostFiles, ToolContext, ToolResult } from "@lathe/plugin"
import { applyReplacements, findMatches, type MatcherName, type NearCandidate } from "./edit-match.js"
import { checkProtected, locate, resolvePath } from "./paths.js"
import type { ToolState } from "./state.js"
import { diffStats, formatText, normaliseNewlines, parseText, unifiedDiff } from "./text-file.js"
import { readText, statIfThere, writeText } from "./text-io.js"

/** One replacement, as `edit` and each item of `multiedit` take it. */
export interface EditSpec {
  readonly oldString: string
  readonly newString: string
  readonly replaceAll?: boolean | undefined
}

/** What applying one edit to a text produced. */
export interface EditApplied {
  readonly text: string
  readonly startLine: number
  readonly endLine: number
  readonly matcher: MatcherName | "create"
}

const showCandidates = (text: string, nearest: ReadonlyArray<NearCandidate>): string => {
  if (nearest.length === 0) return "\nNothing in the file resembles it; read the file to see its current contents."
  const lines = text.split("\n")
  const blocks = nearest.map((c) => {
    const shown = lines.slice(c.startLine - 1, Math.min(c.endLine, c.startLine + 7))
    const body = shown.map((line, i) => `${c.startLine + i}: ${line}`).join("\n")
    const more = c.endLine - c.startLine + 1 > shown.length ? "\n..." : ""
    const range = c.startLine === c.endLine ? `line ${c.startLine}` : `lines ${c.startLine}-${c.endLine}`
    return `--- ${range} (${Math.round(c.score * 100)}% similar)\n${body}${more}`
  })
  return `\nThe most similar regions of the file:\n${blocks.join("\n")}\nCopy the text to replace exactly from the file.`
}

/**
 * Applies one edit to LF-normalised `text`, throwing an Error whose message is written for the model when the
 * edit is a no-op, when `oldString` is not found (with the nearest candidates) or matches several places.
 */
export const applyEdit = (text: string, edit: EditSpec, label: string): EditApplied => {
  const oldString = normaliseNewlines(edit.oldString)
  const newString = normaliseNewlines(edit.newString)
  if (oldString === newString) throw new Error("No changes to apply: oldString and newString are identical.")
  const outcome = findMatches(text, oldString, newString, edit.replaceAll === true)
  if (outcome.kind === "missing")
    throw new Error(
      `Could not find oldString in ${label}. Differences in whitespace, indentation, line endings and escaping ` +
        `were tolerated and still nothing matched.${showCandidates(text, outcome.nearest)}`
    )
  if (outcome.kind === "ambiguous")
    throw new Error(
      `Found ${outcome.lines.length} matches for oldString in ${label} (lines ${outcome.lines.join(", ")}; ` +
        `${outcome.matcher} match). Include more surrounding lines in oldString so that it matches one place ` +
        `only, or set replaceAll to change every match.`
    )
  return { ...applyReplacements(text, outcome.replacements), matcher: outcome.matcher }
}

/** What {@link editFile} reports back to the tool. */
export interface EditFileResult extends ToolResult {
  readonly metadata: {
    readonly filepath: string
    readonly diff: string
    readonly startLine: number
    readonly endLine: number
    readonly matchers: ReadonlyArray<string>
    readonly additions: number
    readonly deletions: number
  }
}

/**
 * Applies `edits` in order to one file, all or nothing: every edit is applied in memory first (an edit sees
 * the result of the previous ones), then `edit` permission is asked with the diff, then the file is written
 * once, keeping its BOM and line endings. An empty `oldString` in the first edit creates the file (or fills
 * an empty one). An edit whose `oldString` equals its `newString` (both empty included), or edits that leave the
 * file as it was, are an error the model reads. `describe(i)` prefixes an error with which edit failed.
 */
export const editFile = async (
  ctx: ToolContext,
  state: ToolState,
  filePath: string,
  edits: ReadonlyArray<EditSpec>,
  describe: (index: number, message: string) => string = (_, message) => message,
  files?: HostFiles
): Promise<EditFileResult> => {
  const at = { sessionID: ctx.sessionID, callID: ctx.callID }
  const { path, label, real, patterns } = await locate(ctx, resolvePath(ctx, filePath), "file")
  const info = statIfThere(real)
  if (info?.isDirectory()) throw new Error(`${label} is a directory, not a file. Give the path of a file to edit.`)
  const raw = info ? await readText(files, real, at, info) : undefined
  const format = parseText(raw ?? "")
  let text = format.text
  let startLine = Number.POSITIVE_INFINITY
  let endLine = 0
  const matchers: Array<string> = []
  edits.forEach((edit, index) => {
    if (normaliseNewlines(edit.oldString) === normaliseNewlines(edit.newString))
      throw new Error(
        describe(
          index,
          edit.oldString === ""
            ? "No changes to apply: oldString and newString are both empty. Put the text to replace in oldString " +
                "and its replacement in newString; to create an empty file, use the write tool."
            : "No changes to apply: oldString and newString are identical."
        )
      )
    if (edit.oldString === "") {
      if (index > 0 || text !== "")
        throw new Error(
          describe(
            index,
            `oldString is empty, which creates a new file, but ${label} already has content. ` +
              `Put the text to replace in oldString, or use the write tool to replace the whole file.`
          )
        )
      text = normaliseNewlines(edit.newString)
      startLine = 1
      endLine = Math.max(endLine, text.split("\n").length)
      matchers.push("create")
      return
    }
    if (raw === undefined)
      throw new Error(
        `File not found: ${label}. To create a new file, call edit with an empty oldString, or use the write tool.`
      )
    try {
      const applied = applyEdit(text, edit, label)
      text = applied.text
      startLine = Math.min(startLine, applied.startLine)
      endLine = Math.max(endLine, applied.endLine)
      matchers.push(applied.matcher)
    } catch (error) {
      throw new Error(describe(index, error instanceof Error ? error.message : String(error)))
    }
  })
  const content = formatText(format, text)
  if (content === raw)
    throw new Error(
      `No changes to apply: the edit leaves ${label} exactly as it was (the text that matched already reads as ` +
        `newString). Read the file to see its current content.`
    )
  const diff = unifiedDiff(label, raw ?? "", content)
  await ctx.ask({ permission: "edit", patterns, metadata: { filepath: path, realPath: real, diff } })
  await checkProtected(ctx, path, real, { filepath: path, diff })
  await writeText(files, real, content, at)
  const written = statSync(real)
  state.recordRead(ctx.sessionID, real, written)
  const stats = diffStats(diff)
  const range = startLine === endLine ? `line ${startLine}` : `lines ${startLine}-${endLine}`
  return {
    title: label,
    output: `Edited ${label}: ${range} changed.\n\n${diff}`,
    metadata: { filepath: path, diff, startLine, endLine, matchers, ...stats }
  }
}
