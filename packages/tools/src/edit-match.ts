import { foldUnicode, indentOf, normaliseLine, similarity, unescapeModelString } from "./similarity.js"

/** The matchers tried in order; the first that finds anything decides. */
export type MatcherName =
  | "exact"
  | "trimmed-boundary"
  | "indentation-flexible"
  | "line-trimmed"
  | "whitespace-normalised"
  | "block-anchor"
  | `escape-normalised/${string}`

/** One place to change: `[start, end)` of the text becomes `text`. */
export interface Replacement {
  readonly start: number
  readonly end: number
  readonly text: string
}

/** A region of the file that looks like `oldString`, for error messages. */
export interface NearCandidate {
  readonly startLine: number
  readonly endLine: number
  readonly score: number
}

/** What matching found: one place (or all, with `replaceAll`), several places, or nothing. */
export type MatchOutcome =
  | { readonly kind: "found"; readonly matcher: MatcherName; readonly replacements: ReadonlyArray<Replacement> }
  | { readonly kind: "ambiguous"; readonly matcher: MatcherName; readonly lines: ReadonlyArray<number> }
  | { readonly kind: "missing"; readonly nearest: ReadonlyArray<NearCandidate> }

/** Block-anchor candidates must score at least this (middle lines' similarity), and be the only one that does. */
export const BLOCK_ANCHOR_THRESHOLD = 0.8

interface Candidate extends Replacement {
  readonly line: number
}

/** The text as lines, with each line's start offset. */
class Lines {
  readonly lines: ReadonlyArray<string>
  readonly starts: ReadonlyArray<number>
  private cache = new Map<string, ReadonlyArray<string>>()
  constructor(readonly text: string) {
    this.lines = text.split("\n")
    const starts: Array<number> = []
    let offset = 0
    for (const line of this.lines) {
      starts.push(offset)
      offset += line.length + 1
    }
    this.starts = starts
  }
  /** The lines mapped once by `fn` (cached under `key`). */
  mapped(key: string, fn: (line: string) => string): ReadonlyArray<string> {
    let result = this.cache.get(key)
    if (!result) {
      result = this.lines.map(fn)
      this.cache.set(key, result)
    }
    return result
  }
  lineAt(offset: number): number {
    let low = 0
    let high = this.starts.length - 1
    while (low < high) {
      const mid = (low + high + 1) >> 1
      if ((this.starts[mid] ?? 0) <= offset) low = mid
      else high = mid - 1
    }
    return low + 1
  }
  /** Offsets of lines `[first, first + count)`; `withNewline` also takes the newline after the last one. */
  span(first: number, count: number, withNewline: boolean): { start: number; end: number } {
    const last = first + count - 1
    const end = (this.starts[last] ?? 0) + (this.lines[last]?.length ?? 0)
    return { start: this.starts[first] ?? 0, end: withNewline && end < this.text.length ? end + 1 : end }
  }
}

const exactAll = (file: Lines, oldString: string, newString: string): Array<Candidate> => {
  const found: Array<Candidate> = []
  if (oldString === "") return found
  for (let at = file.text.indexOf(oldString); at !== -1; at = file.text.indexOf(oldString, at + oldString.length))
    found.push({ start: at, end: at + oldString.length, text: newString, line: file.lineAt(at) })
  return found
}

/** `newString` with the same boundary whitespace removed that was trimmed off `oldString`. */
const trimLike = (oldString: string, newString: string): string => {
  const core = oldString.trim()
  const lead = oldString.slice(0, oldString.indexOf(core))
  const trail = oldString.slice(lead.length + core.length)
  return newString.startsWith(lead) && newString.endsWith(trail) && newString.length >= lead.length + trail.length
    ? newString.slice(lead.length, newString.length - trail.length)
    : newString.trim()
}

const trimmedBoundary = (file: Lines, oldString: string, newString: string): Array<Candidate> => {
  const core = oldString.trim()
  return core === "" || core === oldString ? [] : exactAll(file, core, trimLike(oldString, newString))
}

/**
 * Re-indents `newLines` the way the matched window differs from `oldString`: each indentation seen in
 * `oldString` maps to the file's indentation on the same line, and new lines with that (or a longer) indent
 * get the file's instead. Fixes tabs-vs-spaces and shifted blocks without touching what the model wrote.
 */
const reindent = (newLines: ReadonlyArray<string>, pairs: ReadonlyArray<readonly [string, string]>): Array<string> => {
  const map = new Map<string, string>()
  for (const [oldLine, fileLine] of pairs) {
    if (oldLine.trim() === "" || fileLine.trim() === "") continue
    const from = indentOf(oldLine)
    if (!map.has(from)) map.set(from, indentOf(fileLine))
  }
  if ([...map].every(([from, to]) => from === to)) return [...newLines]
  const keys = [...map.keys()].sort((a, b) => b.length - a.length)
  return newLines.map((line) => {
    if (line.trim() === "") return line
    const lead = indentOf(line)
    const key = keys.find((k) => lead.startsWith(k))
    return key === undefined ? line : (map.get(key) ?? key) + line.slice(key.length)
  })
}

interface LineQuery {
  readonly oldLines: ReadonlyArray<string>
  readonly newLines: ReadonlyArray<string>
  /** `oldString` ended with a newline, so a match takes the newline after its last line too. */
  readonly trailingNewline: boolean
}

const lineQuery = (oldString: string, newString: string): LineQuery | undefined => {
  const trailingNewline = oldString.endsWith("\n")
  const oldLines = (trailingNewline ? oldString.slice(0, -1) : oldString).split("\n")
  if (oldLines.every((line) => line.trim() === "")) return undefined
  const body = trailingNewline && newString.endsWith("\n") ? newString.slice(0, -1) : newString
  return { oldLines, newLines: body === "" && trailingNewline ? [] : body.split("\n"), trailingNewline }
}

/** A candidate replacing lines `[first, first + count)` with the re-indented new lines. */
const windowCandidate = (
  file: Lines,
  query: LineQuery,
  first: number,
  count: number,
  pairs: ReadonlyArray<readonly [string, string]>
): Candidate => {
  const deleting = query.newLines.length === 0
  const { start, end } = file.span(first, count, query.trailingNewline && deleting)
  const text = reindent(query.newLines, pairs).join("\n")
  return { start, end, text, line: first + 1 }
}

/** Windows of as many lines as `oldString` whose lines all equal it under `key`. */
const lineWindows = (
  file: Lines,
  query: LineQuery,
  key: string,
  fn: (line: string) => string,
  accept: (first: number) => boolean = () => true
): Array<Candidate> => {
  const lines = file.mapped(key, fn)
  const wanted = query.oldLines.map(fn)
  const n = wanted.length
  const found: Array<Candidate> = []
  for (let i = 0; i + n <= lines.length; i++) {
    let k = 0
    while (k < n && lines[i + k] === wanted[k]) k++
    if (k === n && accept(i)) {
      const pairs = query.oldLines.map((line, j) => [line, file.lines[i + j] ?? ""] as const)
      found.push(windowCandidate(file, query, i, n, pairs))
    }
  }
  return found
}

const minIndent = (lines: ReadonlyArray<string>): number =>
  Math.min(...lines.filter((line) => line.trim() !== "").map((line) => indentOf(line).length))

const dedent = (lines: ReadonlyArray<string>): Array<string> => {
  const cut = minIndent(lines)
  return lines.map((line) => (line.trim() === "" ? "" : line.slice(cut).trimEnd()))
}

const indentationFlexible = (file: Lines, query: LineQuery): Array<Candidate> => {
  const wanted = dedent(query.oldLines).join("\n")
  const n = query.oldLines.length
  return lineWindows(
    file,
    query,
    "trim",
    (line) => line.trim(),
    (first) => {
      return dedent(file.lines.slice(first, first + n)).join("\n") === wanted
    }
  )
}

/** `oldString`'s words with any run of whitespace between them, for matches inside a line. */
const inlineWhitespace = (file: Lines, oldString: string, newString: string): Array<Candidate> => {
  const words = oldString.trim().split(/\s+/)
  if (words.length < 2) return []
  const escaped = words.map((word) => word.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
  const pattern = new RegExp(escaped.join("\\s+"), "g")
  const text = trimLike(oldString, newString)
  return [...file.text.matchAll(pattern)].map((m) => ({
    start: m.index,
    end: m.index + m[0].length,
    text,
    line: file.lineAt(m.index)
  }))
}

/**
 * First and last lines (trimmed) as anchors, the middle compared by similarity. Only for 3+ lines; the
 * window may be a quarter longer or shorter than `oldString`. Returns every window above the threshold.
 */
const blockAnchor = (file: Lines, query: LineQuery): Array<Candidate> => {
  const n = query.oldLines.length
  if (n < 3) return []
  const first = query.oldLines[0]?.trim() ?? ""
  const last = query.oldLines[n - 1]?.trim() ?? ""
  if (first === "" || last === "") return []
  const trimmed = file.mapped("trim", (line) => line.trim())
  const slack = Math.max(1, Math.floor(n / 4))
  const middle = query.oldLines.slice(1, -1).join("\n")
  const found: Array<Candidate> = []
  for (let i = 0; i < trimmed.length; i++) {
    if (trimmed[i] !== first) continue
    for (let j = i + Math.max(2, n - 1 - slack); j <= i + n - 1 + slack && j < trimmed.length; j++) {
      if (trimmed[j] !== last) continue
      const score = similarity(file.lines.slice(i + 1, j).join("\n"), middle)
      if (score < BLOCK_ANCHOR_THRESHOLD) continue
      const pairs = [
        [query.oldLines[0] ?? "", file.lines[i] ?? ""],
        [query.oldLines[n - 1] ?? "", file.lines[j] ?? ""]
      ] as const
      found.push(windowCandidate(file, query, i, j - i + 1, pairs))
    }
  }
  return found
}

type Matcher = readonly [MatcherName, (file: Lines, oldString: string, newString: string) => Array<Candidate>]

const withLines =
  (run: (file: Lines, query: LineQuery) => Array<Candidate>) =>
  (file: Lines, oldString: string, newString: string): Array<Candidate> => {
    const query = lineQuery(oldString, newString)
    return query ? run(file, query) : []
  }

/** The tolerant chain, strictest first. */
const TOLERANT: ReadonlyArray<Matcher> = [
  ["indentation-flexible", withLines(indentationFlexible)],
  ["line-trimmed", withLines((file, query) => lineWindows(file, query, "trim", (line) => line.trim()))],
  ["trimmed-boundary", trimmedBoundary],
  [
    "whitespace-normalised",
    (file, oldString, newString) => {
      const query = lineQuery(oldString, newString)
      const lines = query ? lineWindows(file, query, "normal", normaliseLine) : []
      return lines.length > 0 ? lines : inlineWhitespace(file, foldUnicode(oldString), newString)
    }
  ],
  ["block-anchor", withLines(blockAnchor)]
]

/** Keeps candidates that do not overlap an earlier one (for `replaceAll` over repeated lines). */
const disjoint = (candidates: ReadonlyArray<Candidate>): Array<Candidate> => {
  const kept: Array<Candidate> = []
  for (const candidate of [...candidates].sort((a, b) => a.start - b.start)) {
    const previous = kept[kept.length - 1]
    if (!previous || candidate.start >= previous.end) kept.push(candidate)
  }
  return kept
}

const decide = (
  matcher: MatcherName,
  candidates: ReadonlyArray<Candidate>,
  replaceAll: boolean
): MatchOutcome | undefined => {
  if (candidates.length === 0) return undefined
  if (candidates.length === 1 || replaceAll) return { kind: "found", matcher, replacements: disjoint(candidates) }
  return { kind: "ambiguous", matcher, lines: candidates.map((c) => c.line) }
}

const runChain = (
  file: Lines,
  oldString: string,
  newString: string,
  replaceAll: boolean,
  prefix = ""
): MatchOutcome | undefined => {
  const exact = decide(`${prefix}exact` as MatcherName, exactAll(file, oldString, newString), replaceAll)
  if (exact) return exact
  for (const [name, matcher] of TOLERANT) {
    const outcome = decide(`${prefix}${name}` as MatcherName, matcher(file, oldString, newString), replaceAll)
    if (outcome) return outcome
  }
  return undefined
}

/** Regions of the file most like `oldString`, best first (for the "not found" error). */
export const nearestCandidates = (text: string, oldString: string, limit = 3): Array<NearCandidate> => {
  const file = new Lines(text)
  const oldLines = oldString.replace(/\n$/, "").split("\n")
  const anchorIndex = Math.max(
    0,
    oldLines.findIndex((line) => line.trim() !== "")
  )
  const anchor = oldLines[anchorIndex] ?? ""
  const starts = file.lines
    .map((line, i) => ({ i, score: similarity(line, anchor) }))
    .filter((s) => s.score >= 0.3)
    .sort((a, b) => b.score - a.score)
    .slice(0, 20)
  const scored = starts.map(({ i }) => {
    const first = Math.max(0, i - anchorIndex)
    const count = Math.min(oldLines.length, file.lines.length - first)
    const score = similarity(file.lines.slice(first, first + count).join("\n"), oldLines.join("\n"))
    return { startLine: first + 1, endLine: first + count, score }
  })
  const unique = new Map<number, NearCandidate>()
  for (const c of scored.sort((a, b) => b.score - a.score))
    if (c.score >= 0.4 && !unique.has(c.startLine)) unique.set(c.startLine, c)
  return [...unique.values()].slice(0, limit)
}

/**
 * Finds where `oldString` is in `text` (both LF-normalised). Exact matching first; then the tolerant chain
 * (indentation-flexible, line-trimmed, trimmed boundaries, whitespace/unicode-normalised, block anchors);
 * then the same chain again with model-style escapes (`\n`, `\"`) undone. The first matcher that finds
 * anything decides: one place is a match, several are ambiguous unless `replaceAll`. A looser matcher is
 * never consulted once a stricter one has found candidates, so a tolerant match never overrides a better one.
 */
export const findMatches = (text: string, oldString: string, newString: string, replaceAll: boolean): MatchOutcome => {
  const file = new Lines(text)
  const direct = runChain(file, oldString, newString, replaceAll)
  if (direct) return direct
  const unescaped = unescapeModelString(oldString)
  if (unescaped !== oldString) {
    const outcome = runChain(file, unescaped, unescapeModelString(newString), replaceAll, "escape-normalised/")
    if (outcome) return outcome
  }
  return { kind: "missing", nearest: nearestCandidates(text, oldString) }
}

/** Applies replacements (disjoint, any order); returns the new text and the changed 1-based line range in it. */
export const applyReplacements = (
  text: string,
  replacements: ReadonlyArray<Replacement>
): { readonly text: string; readonly startLine: number; readonly endLine: number } => {
  const sorted = [...replacements].sort((a, b) => a.start - b.start)
  const newlines = (value: string) => value.split("\n").length - 1
  const parts: Array<string> = []
  let line = 1
  let cursor = 0
  let startLine = 0
  let endLine = 0
  for (const r of sorted) {
    const before = text.slice(cursor, r.start)
    parts.push(before, r.text)
    line += newlines(before)
    if (startLine === 0) startLine = line
    const added = newlines(r.text)
    endLine = line + added - (r.text.endsWith("\n") ? 1 : 0)
    line += added
    cursor = r.end
  }
  parts.push(text.slice(cursor))
  return { text: parts.join(""), startLine, endLine: Math.max(startLine, endLine) }
}
