/**
 * Terminal styles for the interactive UI: SGR escapes when colour is on, identity functions when it is off, so a
 * renderer is written once and its colourless output carries no escape at all.
 */

/** One styling function: wraps `s` so it shows styled; identity when colour is off. */
export type StyleFn = (s: string) => string

/** The styles the UI's renderers use. Every function is the identity (no escape at all) when `color` is false. */
export interface Style {
  /** Whether these styles emit escapes. */
  readonly color: boolean
  readonly bold: StyleFn
  readonly dim: StyleFn
  readonly italic: StyleFn
  readonly underline: StyleFn
  readonly inverse: StyleFn
  readonly strike: StyleFn
  readonly red: StyleFn
  readonly green: StyleFn
  readonly yellow: StyleFn
  readonly blue: StyleFn
  readonly magenta: StyleFn
  readonly cyan: StyleFn
  readonly gray: StyleFn
}

const identity: StyleFn = (s) => s

// An SGR pair. Nested styles that share a close code (bold and dim both close with 22, every colour with 39) are
// re-opened after an inner close, so `dim(bold("a") + "b")` keeps "b" dim.
const sgr = (open: number, close: number): StyleFn => {
  const start = `\x1b[${open}m`
  const end = `\x1b[${close}m`
  return (s) => (s === "" ? s : start + (s.includes(end) ? s.replaceAll(end, end + start) : s) + end)
}

const colored: Style = {
  color: true,
  bold: sgr(1, 22),
  dim: sgr(2, 22),
  italic: sgr(3, 23),
  underline: sgr(4, 24),
  inverse: sgr(7, 27),
  strike: sgr(9, 29),
  red: sgr(31, 39),
  green: sgr(32, 39),
  yellow: sgr(33, 39),
  blue: sgr(34, 39),
  magenta: sgr(35, 39),
  cyan: sgr(36, 39),
  gray: sgr(90, 39)
}

const plain: Style = {
  color: false,
  bold: identity,
  dim: identity,
  italic: identity,
  underline: identity,
  inverse: identity,
  strike: identity,
  red: identity,
  green: identity,
  yellow: identity,
  blue: identity,
  magenta: identity,
  cyan: identity,
  gray: identity
}

/** Styles that emit SGR escapes when `color`, identity functions (no escape at all) when not. */
export const createStyle = (color: boolean): Style => (color ? colored : plain)

/**
 * Whether to colour: FORCE_COLOR=1/2/3 (or empty, or "true") forces colour on and FORCE_COLOR=0 (or "false") off,
 * whatever else is set; otherwise colour is off when NO_COLOR is set and non-empty, when TERM=dumb, or when the
 * output is not a TTY.
 */
export const colorEnabled = (env: Readonly<Record<string, string | undefined>>, isTTY: boolean): boolean => {
  const force = env.FORCE_COLOR
  if (force !== undefined) {
    if (force === "0" || force === "false") return false
    if (force === "" || force === "1" || force === "2" || force === "3" || force === "true") return true
  }
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== "") return false
  if (env.TERM === "dumb") return false
  return isTTY
}

/**
 * Matches one ANSI escape: a CSI sequence (`ESC [ … final`, including SGR), an OSC sequence (`ESC ] … BEL` or
 * `ESC ] … ESC \`, such as hyperlinks), or a two-character escape. Also the 8-bit CSI (0x9b).
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching escapes is the point
export const ANSI_PATTERN = /(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]/g

/** Removes every ANSI escape. */
export const stripAnsi = (s: string): string =>
  s.includes("\x1b") || s.includes("\x9b") ? s.replace(ANSI_PATTERN, "") : s
