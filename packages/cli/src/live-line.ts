import { truncate } from "./wrap.js"

/** The spinner's frames, one per redraw. */
const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"]

/** What the live line shows, asked again on every redraw: `undefined` shows nothing. */
export type LiveText = (spinner: string) => string | undefined

/** One line at the bottom of a terminal's output, redrawn in place while something runs. */
export interface LiveLine {
  /** Erases the line if it is shown, so other output can be written; it is drawn again on the next tick. */
  readonly clear: () => void
  /** Stops redrawing and erases the line. */
  readonly stop: () => void
}

/** How a live line draws. */
export interface LiveLineOptions {
  /** What to show (see {@link LiveText}). */
  readonly text: LiveText
  /** The terminal's width: the line is cut to one column less, so it never wraps (a wrapped line cannot be erased). */
  readonly columns: () => number
  /** Whether the cursor is at the start of a line, where the live line may be drawn. */
  readonly atLineStart: () => boolean
  /** Redraw interval; default 100 ms (10 Hz). */
  readonly intervalMs?: number
}

/**
 * A live line on a terminal: `\r`, the text, erase to the end of the line; erased with `\r` and erase-line. It is drawn
 * only at the start of a line, so it never overwrites text being streamed. The timer does not keep the process alive.
 */
export const liveLine = (write: (text: string) => void, options: LiveLineOptions): LiveLine => {
  let shown = false
  let frame = 0
  let last = ""
  const clear = () => {
    if (!shown) return
    shown = false
    last = ""
    write("\r\x1b[2K")
  }
  const draw = () => {
    const text = options.atLineStart() ? options.text(FRAMES[frame++ % FRAMES.length] ?? "") : undefined
    if (text === undefined) return clear()
    const line = truncate(text, Math.max(10, options.columns() - 1))
    if (shown && line === last) return
    write(`\r${line}\x1b[K`)
    shown = true
    last = line
  }
  const timer = setInterval(draw, options.intervalMs ?? 100)
  timer.unref()
  return {
    clear,
    stop: () => {
      clearInterval(timer)
      clear()
    }
  }
}
