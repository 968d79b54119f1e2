/**
 * Column arithmetic for the terminal: display width (ANSI ignored, wide characters count 2), word-aware hard
 * wrapping that keeps styles open across breaks, and truncation with an ellipsis.
 */
import stringWidth from "string-width"
import { ANSI_PATTERN, stripAnsi } from "./style.js"

/** The narrowest width the renderers lay out for; smaller widths are raised to it. */
export const MIN_WIDTH = 10

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/

// Non-ASCII runs with the ASCII character before them (a keycap, a combining accent): string-width measures only these,
// and remembers them, since a streamed answer measures the same words again on every delta.
const NON_ASCII_RUN = /[\x20-\x7e]?[^\x20-\x7e]+/g
const runWidths = new Map<string, number>()
const runWidth = (run: string): number => {
  let w = runWidths.get(run)
  if (w === undefined) {
    w = stringWidth(run)
    if (runWidths.size >= 10_000) runWidths.clear()
    runWidths.set(run, w)
  }
  return w
}

/** Visible terminal columns of s (ANSI ignored, wide chars count 2). */
export const displayWidth = (s: string): number => {
  if (PRINTABLE_ASCII.test(s)) return s.length
  const plain = stripAnsi(s)
  if (PRINTABLE_ASCII.test(plain)) return plain.length
  let width = plain.length
  for (const match of plain.matchAll(NON_ASCII_RUN)) width += runWidth(match[0]) - match[0].length
  return width
}

// Made on first use: the first Intl object of a process builds ICU's locale set, which only non-ASCII text needs.
let segmenter: Intl.Segmenter | undefined

/** A piece of a line: an escape (width 0) or one grapheme. */
interface Unit {
  readonly text: string
  readonly width: number
  readonly escape: boolean
}

const pushText = (units: Array<Unit>, text: string): void => {
  if (PRINTABLE_ASCII.test(text)) {
    for (const ch of text) units.push({ text: ch, width: 1, escape: false })
    return
  }
  segmenter ??= new Intl.Segmenter()
  for (const { segment } of segmenter.segment(text)) {
    units.push({ text: segment, width: segment === "\t" ? 4 : runWidth(segment), escape: false })
  }
}

/** Splits one line (no newline) into escapes and graphemes. */
const units = (line: string): Array<Unit> => {
  const out: Array<Unit> = []
  let last = 0
  for (const match of line.matchAll(ANSI_PATTERN)) {
    if (match.index > last) pushText(out, line.slice(last, match.index))
    out.push({ text: match[0], width: 0, escape: true })
    last = match.index + match[0].length
  }
  if (last < line.length) pushText(out, line.slice(last))
  return out
}

// SGR state: the open codes in effect, keyed by the code that closes them (so a later colour replaces an earlier one).
type SgrState = Map<number, string>
const CLOSERS: Record<number, number> = { 1: 22, 2: 22, 3: 23, 4: 24, 5: 25, 7: 27, 8: 28, 9: 29, 53: 55 }
const CLOSING = new Set([22, 23, 24, 25, 27, 28, 29, 39, 49, 55])
const closerOf = (code: number): number | undefined => {
  if ((code >= 30 && code <= 38) || (code >= 90 && code <= 97)) return 39
  if ((code >= 40 && code <= 48) || (code >= 100 && code <= 107)) return 49
  return CLOSERS[code]
}

const track = (state: SgrState, sequence: string): void => {
  if (!sequence.startsWith("\x1b[") || !sequence.endsWith("m")) return
  const params = sequence.slice(2, -1).split(";")
  const first = params[0] === "" ? 0 : Number.parseInt(params[0] ?? "0", 10)
  // 38;… and 48;… (256-colour and RGB) are one colour, not several codes.
  const codes = first === 38 || first === 48 ? [first] : params.map((p) => (p === "" ? 0 : Number.parseInt(p, 10)))
  for (const code of codes) {
    if (code === 0) state.clear()
    else if (CLOSING.has(code)) state.delete(code)
    else {
      const closer = closerOf(code)
      if (closer !== undefined) state.set(closer, codes.length === 1 ? sequence : `\x1b[${code}m`)
    }
  }
}
const reopen = (state: SgrState): string => [...state.values()].join("")
const close = (state: SgrState): string => [...state.keys()].map((c) => `\x1b[${c}m`).join("")

const trackAll = (state: SgrState, text: string): void => {
  if (text.includes("\x1b")) for (const match of text.matchAll(ANSI_PATTERN)) track(state, match[0])
}

/** Cuts one line every `width` columns, keeping every character (code, diffs). */
const cutLine = (line: string, width: number, out: Array<string>): void => {
  if (displayWidth(line) <= width) {
    out.push(line)
    return
  }
  const state: SgrState = new Map()
  let text = ""
  let used = 0
  for (const unit of units(line)) {
    if (unit.escape) {
      text += unit.text
      track(state, unit.text)
      continue
    }
    if (used + unit.width > width && used > 0) {
      out.push(text + close(state))
      text = reopen(state)
      used = 0
    }
    text += unit.text
    used += unit.width
  }
  out.push(text)
}

const WORDS = / +|[^ ]+/g

/**
 * Greedy word wrap of one line: a word goes on the current line when it fits after the pending spaces, else starts
 * the next; a word wider than the line is cut by graphemes. Spaces at a break are dropped, leading spaces kept.
 */
const wrapLine = (line: string, width: number, out: Array<string>): void => {
  if (displayWidth(line) <= width) {
    out.push(line)
    return
  }
  const state: SgrState = new Map()
  let text = ""
  let used = 0
  let pending = ""
  let first = true
  const flush = () => {
    out.push(text + close(state))
    text = reopen(state)
    used = 0
    pending = ""
  }
  for (const token of line.match(WORDS) ?? []) {
    const atStart = first
    first = false
    if (token[0] === " ") {
      // Leading spaces of the source line are indentation; spaces after a word wait for the next word.
      if (atStart) {
        const indent = Math.min(token.length, width - 1)
        text = " ".repeat(indent)
        used = indent
      } else if (used > 0) pending = token
      continue
    }
    const w = displayWidth(token)
    if (used + pending.length + w <= width) {
      text += pending + token
      used += pending.length + w
      pending = ""
      trackAll(state, token)
      continue
    }
    if (w <= width) {
      if (used > 0) flush()
      text += token
      used = w
      trackAll(state, token)
      continue
    }
    // Longer than a whole line: fill the current line, then cut.
    if (used > 0 && used + pending.length < width) {
      text += pending
      used += pending.length
    } else if (used > 0) flush()
    pending = ""
    for (const unit of units(token)) {
      if (unit.escape) {
        text += unit.text
        track(state, unit.text)
        continue
      }
      if (used + unit.width > width && used > 0) flush()
      text += unit.text
      used += unit.width
    }
  }
  out.push(text)
}

/**
 * Hard-wraps one or more lines (splits on \n too) to at most `width` columns, word-aware, keeping styles open across
 * the break (each output line is self-contained: styles closed at its end and re-opened on the next). A word longer
 * than the width is cut; leading spaces of a source line are kept (indentation), the spaces at a break are dropped.
 * A tab counts 4 columns.
 */
export const wrapText = (text: string, width: number): Array<string> => {
  const w = Math.max(1, Math.floor(width))
  const out: Array<string> = []
  for (const line of text.replaceAll("\t", "    ").split("\n")) wrapLine(line, w, out)
  return out
}

/**
 * Cuts lines (splits on \n too) every `width` columns, keeping every character, spaces included (for code and
 * diffs); styles are kept open across the cut as in {@link wrapText}.
 */
export const hardWrap = (text: string, width: number): Array<string> => {
  const w = Math.max(1, Math.floor(width))
  const out: Array<string> = []
  for (const line of text.replaceAll("\t", "    ").split("\n")) cutLine(line, w, out)
  return out
}

/** Cuts to `width` columns with "…" when longer; styles open at the cut are closed after the ellipsis. */
export const truncate = (s: string, width: number): string => {
  const w = Math.max(0, Math.floor(width))
  if (displayWidth(s) <= w) return s
  if (w === 0) return ""
  const state: SgrState = new Map()
  let text = ""
  let used = 0
  for (const unit of units(s)) {
    if (unit.escape) {
      text += unit.text
      track(state, unit.text)
      continue
    }
    if (used + unit.width > w - 1) break
    text += unit.text
    used += unit.width
  }
  return `${text}…${close(state)}`
}
