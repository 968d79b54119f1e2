/** Diagnostics and query answers as text for the model: `line:col`, one-based, bounded in count and size. */
import { readFileSync } from "node:fs"
import { relative } from "node:path"
import { fileURLToPath } from "node:url"
import type { Diagnostic, Location, LspClient, Position, Range } from "./client.js"
import { fileUri } from "./client.js"

const SEVERITY: Readonly<Record<number, string>> = { 1: "error", 2: "warning", 3: "info", 4: "hint" }

/** Longest message line kept; longer ones end with `…`. */
const MAX_MESSAGE = 300

/** A path as the model reads it: relative to the project root when inside it. */
export const shown = (root: string, path: string): string => {
  const rel = relative(root, path)
  return rel.startsWith("..") || rel === "" ? path : rel
}

/** `12:5 error TS2322: Type 'string' is not assignable to type 'number'.` */
export const diagnosticLine = (diagnostic: Diagnostic): string => {
  const { line, character } = diagnostic.range.start
  const severity = SEVERITY[diagnostic.severity ?? 1] ?? "error"
  const code =
    diagnostic.code === undefined
      ? ""
      : ` ${diagnostic.source === "typescript" ? `TS${diagnostic.code}` : String(diagnostic.code)}`
  const message = diagnostic.message.replace(/\s*\n\s*/g, " ").trim()
  const cut = message.length > MAX_MESSAGE ? `${message.slice(0, MAX_MESSAGE)}…` : message
  return `${line + 1}:${character + 1} ${severity}${code}: ${cut}`
}

/** The diagnostics worth telling: errors, and warnings when asked. */
export const relevant = (diagnostics: ReadonlyArray<Diagnostic>, warnings: boolean): ReadonlyArray<Diagnostic> =>
  diagnostics.filter((d) => (d.severity ?? 1) === 1 || (warnings && d.severity === 2))

/** One file's diagnostics as lines under its name, at most `max` of them (then how many more). */
export const fileBlock = (
  root: string,
  path: string,
  diagnostics: ReadonlyArray<Diagnostic>,
  max: number
): Array<string> => {
  const sorted = [...diagnostics].sort(
    (a, b) => (a.severity ?? 1) - (b.severity ?? 1) || a.range.start.line - b.range.start.line
  )
  const lines = sorted.slice(0, max).map((d) => `  ${diagnosticLine(d)}`)
  if (sorted.length > max) lines.push(`  … and ${sorted.length - max} more`)
  return [`${shown(root, path)}:`, ...lines]
}

const lineOf = (path: string, line: number): string | undefined => {
  try {
    return readFileSync(path, "utf8").split("\n")[line]?.trim()
  } catch {
    return undefined
  }
}

const locationLine = (root: string, location: Location): string => {
  const path = location.uri.startsWith("file:") ? fileURLToPath(location.uri) : location.uri
  const { line, character } = location.range.start
  const text = location.uri.startsWith("file:") ? lineOf(path, line) : undefined
  return `${shown(root, path)}:${line + 1}:${character + 1}${text ? `  ${text.slice(0, 200)}` : ""}`
}

/** Locations as lines, at most `max`. */
export const locations = (root: string, result: unknown, max = 50): string => {
  const list = (Array.isArray(result) ? result : result ? [result] : []).map((item) => {
    // A LocationLink has targetUri/targetSelectionRange.
    const link = item as { targetUri?: string; targetSelectionRange?: Range; uri?: string; range?: Range }
    return link.targetUri
      ? { uri: link.targetUri, range: link.targetSelectionRange as Range }
      : { uri: link.uri ?? "", range: link.range as Range }
  })
  if (list.length === 0) return "No locations found."
  const lines = list.slice(0, max).map((location) => locationLine(root, location))
  if (list.length > max) lines.push(`… and ${list.length - max} more`)
  return lines.join("\n")
}

/** A hover's contents as plain text. */
export const hoverText = (result: unknown): string => {
  const contents = (result as { contents?: unknown } | null)?.contents
  const part = (value: unknown): string =>
    typeof value === "string"
      ? value
      : typeof value === "object" && value !== null && "value" in value
        ? String((value as { value: unknown }).value)
        : ""
  const text = (Array.isArray(contents) ? contents.map(part) : [part(contents)]).filter(Boolean).join("\n\n").trim()
  return text === "" ? "No information at that position." : text.slice(0, 8000)
}

const SYMBOL_KINDS = [
  "",
  "file",
  "module",
  "namespace",
  "package",
  "class",
  "method",
  "property",
  "field",
  "constructor",
  "enum",
  "interface",
  "function",
  "variable",
  "constant",
  "string",
  "number",
  "boolean",
  "array",
  "object",
  "key",
  "null",
  "enum member",
  "struct",
  "event",
  "operator",
  "type parameter"
]

interface SymbolItem {
  readonly name: string
  readonly kind: number
  readonly range?: Range
  readonly selectionRange?: Range
  readonly location?: Location
  readonly children?: ReadonlyArray<SymbolItem>
  readonly containerName?: string
}

/** Document or workspace symbols as an indented outline, at most `max` lines. */
export const symbols = (root: string, result: unknown, max = 200): string => {
  const lines: Array<string> = []
  const walk = (items: ReadonlyArray<SymbolItem>, depth: number) => {
    for (const item of items) {
      if (lines.length >= max) return
      const at = item.location
        ? locationLine(root, item.location).split("  ")[0]
        : `line ${((item.selectionRange ?? item.range)?.start.line ?? 0) + 1}`
      lines.push(`${"  ".repeat(depth)}${SYMBOL_KINDS[item.kind] ?? "symbol"} ${item.name}  (${at})`)
      if (item.children) walk(item.children, depth + 1)
    }
  }
  walk(Array.isArray(result) ? (result as ReadonlyArray<SymbolItem>) : [], 0)
  return lines.length === 0 ? "No symbols found." : lines.join("\n")
}

/** The LSP position of a one-based line and column. */
export const position = (line: number, column: number): Position => ({
  line: Math.max(0, line - 1),
  character: Math.max(0, column - 1)
})

/** `textDocument` params for a file. */
export const textDocument = (path: string) => ({ uri: fileUri(path) })

export type { LspClient }
