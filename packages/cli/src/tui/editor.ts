import stringWidth from "string-width"

/**
 * The prompt editor's model: an immutable multi-line text buffer with a cursor. Pure functions only, so the Ink
 * component above it is a thin key-to-function map and every behaviour is testable without a terminal.
 *
 * Invariants every operation keeps: `cursor` is an offset into `text` in UTF-16 units on a grapheme boundary (so
 * never inside a surrogate pair or between an emoji and its modifier), and never strictly inside a paste marker;
 * `pastes` holds exactly the pastes whose marker is still in `text`. Line breaks are always "\n".
 */
export interface EditorState {
  readonly text: string
  readonly cursor: number
  readonly pastes: ReadonlyArray<Paste>
}

/** A long paste kept out of the buffer: `marker` stands in for `text` until the prompt is submitted. */
export interface Paste {
  readonly marker: string
  readonly text: string
}

/** The empty prompt. */
export const emptyEditor: EditorState = { text: "", cursor: 0, pastes: [] }

const normalise = (text: string): string => text.replace(/\r\n?/g, "\n")

const segmenter = new Intl.Segmenter(undefined, { granularity: "grapheme" })

/** Start offsets of the graphemes of `line` (which holds no "\n"), relative to the line. */
const graphemes = (line: string): Array<{ readonly index: number; readonly segment: string }> =>
  Array.from(segmenter.segment(line), ({ index, segment }) => ({ index, segment }))

const lineStart = (text: string, at: number): number => (at === 0 ? 0 : text.lastIndexOf("\n", at - 1) + 1)
const lineEnd = (text: string, at: number): number => {
  const end = text.indexOf("\n", at)
  return end === -1 ? text.length : end
}

/** The grapheme boundary before `at` (a line break counts as one grapheme). */
const previousBoundary = (text: string, at: number): number => {
  if (at === 0) return 0
  const start = lineStart(text, at)
  if (start === at) return at - 1
  const segments = graphemes(text.slice(start, at))
  return start + (segments[segments.length - 1]?.index ?? 0)
}

/** The grapheme boundary after `at`. */
const nextBoundary = (text: string, at: number): number => {
  if (at >= text.length) return text.length
  if (text[at] === "\n") return at + 1
  const first = graphemes(text.slice(at, lineEnd(text, at)))[0]
  return at + (first?.segment.length ?? 1)
}

interface Span {
  readonly start: number
  readonly end: number
}

/** Where the markers of live pastes sit in the text. */
const markerSpans = (s: EditorState): ReadonlyArray<Span> => {
  const spans: Array<Span> = []
  for (const { marker } of s.pastes) {
    for (let at = s.text.indexOf(marker); at !== -1; at = s.text.indexOf(marker, at + marker.length)) {
      spans.push({ start: at, end: at + marker.length })
    }
  }
  return spans
}

/** Moves `at` out of any marker it is strictly inside, towards `direction` (-1 to the start, 1 to the end). */
const snap = (s: EditorState, at: number, direction: -1 | 1): number => {
  const span = markerSpans(s).find((m) => m.start < at && at < m.end)
  return span === undefined ? at : direction < 0 ? span.start : span.end
}

const withCursor = (s: EditorState, cursor: number): EditorState =>
  cursor === s.cursor ? s : { ...s, cursor: Math.max(0, Math.min(cursor, s.text.length)) }

/** Deletes [from, to), widened to swallow every marker it touches; a paste whose marker goes is forgotten. */
const deleteRange = (s: EditorState, from: number, to: number): EditorState => {
  let start = Math.min(from, to)
  let end = Math.max(from, to)
  for (const span of markerSpans(s)) {
    if (span.start < end && span.end > start) {
      start = Math.min(start, span.start)
      end = Math.max(end, span.end)
    }
  }
  if (start === end) return s
  const text = s.text.slice(0, start) + s.text.slice(end)
  return { text, cursor: start, pastes: s.pastes.filter((p) => text.includes(p.marker)) }
}

/** A buffer holding `text` ("\r\n" and "\r" become "\n") with the cursor at its end. */
export const editorFrom = (text: string): EditorState => {
  const normalised = normalise(text)
  return { text: normalised, cursor: normalised.length, pastes: [] }
}

/** Types `text` at the cursor and moves the cursor after it. */
export const insert = (s: EditorState, text: string): EditorState => {
  const typed = normalise(text)
  if (typed === "") return s
  return {
    text: s.text.slice(0, s.cursor) + typed + s.text.slice(s.cursor),
    cursor: s.cursor + typed.length,
    pastes: s.pastes
  }
}

/** Breaks the line at the cursor. */
export const newline = (s: EditorState): EditorState => insert(s, "\n")

/** Deletes the grapheme before the cursor; inside or right after a paste marker, the whole marker and its paste. */
export const backspace = (s: EditorState): EditorState => deleteRange(s, previousBoundary(s.text, s.cursor), s.cursor)

/** Deletes the grapheme after the cursor; right before a paste marker, the whole marker and its paste. */
export const deleteForward = (s: EditorState): EditorState => deleteRange(s, s.cursor, nextBoundary(s.text, s.cursor))

/** One grapheme to the left (a paste marker is stepped over as one unit). */
export const left = (s: EditorState): EditorState => withCursor(s, snap(s, previousBoundary(s.text, s.cursor), -1))

/** One grapheme to the right (a paste marker is stepped over as one unit). */
export const right = (s: EditorState): EditorState => withCursor(s, snap(s, nextBoundary(s.text, s.cursor), 1))

/** To the start of the cursor's line. */
export const home = (s: EditorState): EditorState => withCursor(s, lineStart(s.text, s.cursor))

/** To the end of the cursor's line. */
export const end = (s: EditorState): EditorState => withCursor(s, lineEnd(s.text, s.cursor))

const WORD = /[\p{L}\p{N}\p{M}_]/u
const isWord = (text: string, at: number): boolean => {
  const code = text.codePointAt(at)
  return code !== undefined && WORD.test(String.fromCodePoint(code))
}

/** Start of the word before `at`: skips non-word characters (line breaks included), then word characters. */
const wordStartBefore = (text: string, at: number): number => {
  let i = at
  while (i > 0 && !isWord(text, previousBoundary(text, i))) i = previousBoundary(text, i)
  while (i > 0 && isWord(text, previousBoundary(text, i))) i = previousBoundary(text, i)
  return i
}

/** End of the word after `at`: skips non-word characters, then word characters. */
const wordEndAfter = (text: string, at: number): number => {
  let i = at
  while (i < text.length && !isWord(text, i)) i = nextBoundary(text, i)
  while (i < text.length && isWord(text, i)) i = nextBoundary(text, i)
  return i
}

/** To the start of the previous word (Alt+B, Ctrl+Left). */
export const wordLeft = (s: EditorState): EditorState => withCursor(s, snap(s, wordStartBefore(s.text, s.cursor), -1))

/** To the end of the next word (Alt+F, Ctrl+Right). */
export const wordRight = (s: EditorState): EditorState => withCursor(s, snap(s, wordEndAfter(s.text, s.cursor), 1))

/** Ctrl+W: deletes back to where `wordLeft` would go. */
export const deleteWordBackward = (s: EditorState): EditorState =>
  deleteRange(s, wordStartBefore(s.text, s.cursor), s.cursor)

/** Ctrl+U: deletes from the start of the line to the cursor; at the start of a line, joins it to the previous one. */
export const deleteToLineStart = (s: EditorState): EditorState => {
  const start = lineStart(s.text, s.cursor)
  return deleteRange(s, start === s.cursor ? Math.max(0, start - 1) : start, s.cursor)
}

/** Ctrl+K: deletes from the cursor to the end of the line; at the end of a line, joins the next one to it. */
export const deleteToLineEnd = (s: EditorState): EditorState => {
  const stop = lineEnd(s.text, s.cursor)
  return deleteRange(s, s.cursor, stop === s.cursor ? Math.min(s.text.length, stop + 1) : stop)
}

/** The offset in the line [start, stop) whose display column is closest to `column` without passing it. */
const offsetAtColumn = (text: string, start: number, stop: number, column: number): number => {
  let width = 0
  for (const { index, segment } of graphemes(text.slice(start, stop))) {
    width += stringWidth(segment)
    if (width > column) return start + index
  }
  return stop
}

/** Up/down within a multi-line text, keeping the column; "edge" when already on the first/last line (the UI then
 * walks the history instead). */
export const up = (s: EditorState): EditorState | "edge" => {
  const start = lineStart(s.text, s.cursor)
  if (start === 0) return "edge"
  const column = stringWidth(s.text.slice(start, s.cursor))
  const target = offsetAtColumn(s.text, lineStart(s.text, start - 1), start - 1, column)
  return withCursor(s, snap(s, target, -1))
}

/** See `up`. */
export const down = (s: EditorState): EditorState | "edge" => {
  const stop = lineEnd(s.text, s.cursor)
  if (stop === s.text.length) return "edge"
  const column = stringWidth(s.text.slice(lineStart(s.text, s.cursor), s.cursor))
  const target = offsetAtColumn(s.text, stop + 1, lineEnd(s.text, stop + 1), column)
  return withCursor(s, snap(s, target, 1))
}

const MAX_INLINE_LINES = 5
const MAX_INLINE_CHARS = 1_000

/** A paste: inserted as is when short; when it has more than 5 lines or 1,000 chars, a marker
 * "[Pasted text #n +L lines]" (n counts pastes in this prompt) is inserted instead and the text kept in `pastes`.
 * Deleting any character of a marker with backspace deletes the whole marker and its paste. Normalise \r\n and \r. */
export const paste = (s: EditorState, text: string): EditorState => {
  const pasted = normalise(text)
  const lines = pasted.replace(/\n$/, "").split("\n").length
  if (lines <= MAX_INLINE_LINES && pasted.length <= MAX_INLINE_CHARS) return insert(s, pasted)
  // n is one more than the highest number still in use, so a marker never repeats within a prompt.
  const used = s.pastes.map((p) => Number(/#(\d+)/.exec(p.marker)?.[1] ?? 0))
  const marker = `[Pasted text #${Math.max(0, ...used) + 1} +${lines} lines]`
  return { ...insert(s, marker), pastes: [...s.pastes, { marker, text: pasted }] }
}

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/** The prompt to send: the text with every marker replaced by its paste. */
export const submitText = (s: EditorState): string => {
  if (s.pastes.length === 0) return s.text
  const byMarker = new Map(s.pastes.map((p) => [p.marker, p.text]))
  // One pass, so a paste that itself contains marker-like text is never expanded again.
  const pattern = new RegExp(s.pastes.map((p) => escapeRegExp(p.marker)).join("|"), "g")
  return s.text.replace(pattern, (marker) => byMarker.get(marker) ?? marker)
}

// A tab is shown as this many spaces so the terminal's tab stops cannot shift the cursor.
const TAB = "  "

/** The buffer laid out for display at `width` columns: wrapped lines (a logical line longer than width wraps, at
 * grapheme boundaries, never inside a wide character), the cursor's row and column in that layout. A cursor right
 * after a full row is shown at the start of the next row (an empty one is added at the very end if needed). */
export const layout = (
  s: EditorState,
  width: number
): { readonly lines: ReadonlyArray<string>; readonly row: number; readonly col: number } => {
  const columns = Math.max(1, Math.floor(width))
  const lines: Array<string> = []
  let row = 0
  let col = 0
  let offset = 0
  for (const logical of s.text.split("\n")) {
    let current = ""
    let used = 0
    const cursorInLine = s.cursor - offset
    const place = (): void => {
      row = lines.length
      col = used
    }
    for (const { index, segment } of graphemes(logical)) {
      const shown = segment === "\t" ? TAB : segment
      const w = stringWidth(shown)
      if (used > 0 && used + w > columns) {
        lines.push(current)
        current = ""
        used = 0
      }
      if (index === cursorInLine) place()
      current += shown
      used += w
    }
    if (cursorInLine === logical.length) {
      if (used >= columns && used > 0) {
        lines.push(current)
        current = ""
        used = 0
      }
      place()
    }
    lines.push(current)
    offset += logical.length + 1
  }
  return { lines, row, col }
}
