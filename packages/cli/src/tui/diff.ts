/**
 * Unified diffs for the terminal, as the edit, write and apply_patch tools put them in `metadata.diff` (the `diff`
 * package's `createTwoFilesPatch`: `Index:` and `===` lines, `---`/`+++` headers, `@@` hunks, `\ No newline`
 * markers; apply_patch joins one such patch per file with a newline). Git's `diff --git` output parses too.
 */

import type { Style } from "../style.js"
import { plainText } from "../terminal-text.js"
import { hardWrap, MIN_WIDTH } from "../wrap.js"

/** One classified line of a unified diff. */
type DiffLine =
  | { readonly kind: "file"; readonly from: string; readonly to: string }
  | { readonly kind: "hunk"; readonly text: string }
  | { readonly kind: "add" | "del" | "context"; readonly text: string; readonly line: number }
  | { readonly kind: "marker" | "other"; readonly text: string }

const HUNK = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/
// Lines between files that only repeat what the ---/+++ headers say.
const NOISE = /^(?:Index: |={10,}$|diff --git |index [0-9a-f]+\.\.)/

/** A header's file name without the `a/`/`b/` prefix git adds or the tab-separated timestamp some tools add. */
const fileName = (header: string): string => {
  const name = header.slice(4).split("\t")[0]?.trim() ?? ""
  return /^[ab]\//.test(name) ? name.slice(2) : name
}

/**
 * Classifies every line. Inside a hunk the header's line counts decide where it ends, so a removed line that
 * starts with `--` is not mistaken for a file header.
 */
const parse = (diff: string): Array<DiffLine> => {
  const out: Array<DiffLine> = []
  const lines = plainText(diff.replaceAll("\t", "    ")).split("\n")
  if (lines.at(-1) === "") lines.pop()
  let oldLeft = 0
  let newLeft = 0
  let oldLine = 0
  let newLine = 0
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string
    if (oldLeft > 0 || newLeft > 0) {
      const sign = line[0]
      if (sign === "+" && newLeft > 0) {
        out.push({ kind: "add", text: line.slice(1), line: newLine++ })
        newLeft--
        continue
      }
      if (sign === "-" && oldLeft > 0) {
        out.push({ kind: "del", text: line.slice(1), line: oldLine++ })
        oldLeft--
        continue
      }
      if ((sign === " " || line === "") && oldLeft > 0 && newLeft > 0) {
        out.push({ kind: "context", text: line.slice(1), line: newLine++ })
        oldLine++
        oldLeft--
        newLeft--
        continue
      }
    }
    if (line.startsWith("\\")) {
      out.push({ kind: "marker", text: line })
      continue
    }
    oldLeft = 0
    newLeft = 0
    const hunk = HUNK.exec(line)
    if (hunk) {
      oldLine = Number(hunk[1])
      newLine = Number(hunk[3])
      oldLeft = hunk[2] === undefined ? 1 : Number(hunk[2])
      newLeft = hunk[4] === undefined ? 1 : Number(hunk[4])
      out.push({ kind: "hunk", text: line })
    } else if (line.startsWith("--- ") && lines[i + 1]?.startsWith("+++ ")) {
      out.push({ kind: "file", from: fileName(line), to: fileName(lines[i + 1] as string) })
      i++
    } else if (line.trim() !== "" && !NOISE.test(line)) out.push({ kind: "other", text: line })
  }
  return out
}

/** Counts of added and removed lines in a unified diff. */
export const diffCounts = (diff: string): { readonly additions: number; readonly deletions: number } => {
  let additions = 0
  let deletions = 0
  for (const line of parse(diff)) {
    if (line.kind === "add") additions++
    else if (line.kind === "del") deletions++
  }
  return { additions, deletions }
}

const fileTitle = (from: string, to: string): string => {
  if (from === to || from === "/dev/null") return to
  if (to === "/dev/null") return `${from} (deleted)`
  return `${from} → ${to}`
}

/**
 * Renders a unified diff (as the edit/write/apply_patch tools put in metadata.diff) coloured: file headers bold,
 * hunk headers cyan, additions green "+", deletions red "-", context dim; a gutter with the new (or old) line number;
 * lines wrapped to width; after `maxLines` output lines, one "… N more lines" line (N counts the output lines left
 * out). A file's `---`/`+++` pair shows as one header line, `old → new` when the names differ; widths under 10 count
 * as 10.
 */
export const renderDiff = (
  diff: string,
  width: number,
  style: Style,
  options?: { readonly maxLines?: number }
): Array<string> => {
  const w = Math.max(MIN_WIDTH, Math.floor(Number.isFinite(width) ? width : MIN_WIDTH))
  const lines = parse(diff)
  const gutter = Math.max(1, ...lines.map((l) => ("line" in l ? String(l.line).length : 1)))
  const textWidth = Math.max(1, w - gutter - 3)
  const blank = " ".repeat(gutter + 3)
  const out: Array<string> = []
  for (const line of lines) {
    switch (line.kind) {
      case "file":
        if (out.length > 0) out.push("")
        for (const piece of hardWrap(fileTitle(line.from, line.to), w)) out.push(style.bold(piece))
        break
      case "hunk":
        for (const piece of hardWrap(line.text, w)) out.push(style.cyan(piece))
        break
      case "marker":
      case "other":
        for (const piece of hardWrap(line.text, w)) out.push(style.dim(piece))
        break
      default: {
        const sign = line.kind === "add" ? "+" : line.kind === "del" ? "-" : " "
        const color = line.kind === "add" ? style.green : line.kind === "del" ? style.red : style.dim
        const number = style.dim(String(line.line).padStart(gutter))
        hardWrap(line.text, textWidth).forEach((piece, i) => {
          const text = piece === "" ? "" : ` ${color(piece)}`
          out.push(i === 0 ? `${number} ${color(sign)}${text}` : `${blank}${color(piece)}`)
        })
      }
    }
  }
  const max = options?.maxLines
  if (max === undefined || out.length <= max) return out
  const kept = Math.max(0, Math.floor(max))
  const hidden = out.length - kept
  return [...out.slice(0, kept), style.dim(`… ${hidden} more line${hidden === 1 ? "" : "s"}`)]
}
