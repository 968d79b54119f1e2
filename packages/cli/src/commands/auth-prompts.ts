/**
 * What `lathe auth login` asks at a terminal: a key with nothing echoed, a line shown as typed, and a searchable list
 * to choose from. Each puts the terminal in raw mode while it reads and leaves it as it was found; Ctrl-C (or Esc in
 * the list) cancels with `undefined`.
 */
import type { CliIO } from "../io.js"
import { plainText } from "../terminal-text.js"

const ESC = "\u001b"

/**
 * Writes to the terminal itself, past `io.stderr`'s door (which lets no sequence move the cursor): only the list
 * goes here, redrawn in place, every piece of data in it passed through `plainText` first. Used only while stdin is a
 * terminal a person types at.
 */
const screen = (text: string) => {
  process.stderr.write(text)
}

/**
 * Reads keys from the terminal until `onKey` says done (or `signal` aborts: `undefined`); raw mode on while reading,
 * off after.
 */
const readKeys = <A>(
  io: CliIO,
  prompt: () => void,
  onKey: (text: string, finish: (value: A | undefined) => void) => void,
  signal?: AbortSignal
): Promise<A | undefined> =>
  new Promise((resolve) => {
    const input = io.stdin as NodeJS.ReadStream | undefined
    if (input === undefined || signal?.aborted) return resolve(undefined)
    const raw = typeof input.setRawMode === "function"
    let done = false
    const finish = (value: A | undefined) => {
      if (done) return
      done = true
      input.off("data", onData)
      stopInterrupt?.()
      signal?.removeEventListener("abort", onAbort)
      if (raw) input.setRawMode(false)
      input.pause()
      resolve(value)
    }
    const onData = (chunk: Buffer | string) => {
      // Bracketed-paste markers are not part of what was typed.
      onKey(chunk.toString().replaceAll(`${ESC}[200~`, "").replaceAll(`${ESC}[201~`, ""), finish)
    }
    const stopInterrupt = io.onInterrupt?.(() => finish(undefined))
    const onAbort = () => finish(undefined)
    signal?.addEventListener("abort", onAbort, { once: true })
    // Raw mode before the prompt shows: nothing typed after it is echoed by the terminal.
    if (raw) input.setRawMode(true)
    prompt()
    input.on("data", onData)
    input.resume()
  })

/** A line typed at the terminal: echoed as `*` (`hidden`) or as typed. Enter ends it, Backspace takes one back. */
const readLine = (io: CliIO, prompt: string, hidden: boolean, signal?: AbortSignal): Promise<string | undefined> => {
  let line = ""
  return readKeys<string>(
    io,
    () => io.stderr(prompt),
    (text, finish) => {
      for (const char of text) {
        if (char === "\r" || char === "\n") {
          io.stderr("\n")
          return finish(line)
        }
        if (char === "\x03" || (char === "\x04" && line === "")) {
          io.stderr("\n")
          return finish(undefined)
        }
        if (char === "\x7f" || char === "\b") {
          if (line.length > 0) {
            line = line.slice(0, -1)
            io.stderr("\b \b")
          }
        } else if (char >= " ") {
          line += char
          io.stderr(hidden ? "*" : char)
        }
      }
    },
    signal
  )
}

/**
 * Reads a key typed at the terminal with nothing echoed but a `*` per character: Enter ends it, Backspace takes one
 * back, Ctrl-C or Ctrl-D (on an empty line) cancels (`undefined`).
 */
export const readHidden = (io: CliIO, prompt: string): Promise<string | undefined> => readLine(io, prompt, true)

/** Reads a line typed at the terminal, shown as typed (a base URL, a region). */
export const readVisible = (io: CliIO, prompt: string, signal?: AbortSignal): Promise<string | undefined> =>
  readLine(io, prompt, false, signal)

/** The first line of a piped stdin (all of it when it has no line break); empty when there is no stdin. */
export const readFirstLine = (input: NodeJS.ReadableStream | undefined): Promise<string> =>
  new Promise((resolve, reject) => {
    if (input === undefined) return resolve("")
    let text = ""
    const done = () => {
      input.off("data", onData)
      input.off("end", done)
      input.pause()
      resolve(text.split(/\r?\n/)[0] ?? "")
    }
    const onData = (chunk: Buffer | string) => {
      text += chunk.toString()
      if (text.includes("\n")) done()
    }
    input.on("data", onData)
    input.once("end", done)
    input.once("error", reject)
  })

/** One entry of {@link pickOne}. */
export interface Choice<A> {
  /** What the row shows, and what typing filters on (with `detail`). */
  readonly label: string
  readonly detail: string
  readonly value: A
}

/** One key of a chunk read in raw mode: an arrow's escape sequence, a lone Esc, or one character. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: splitting terminal input is the point
const KEYS = /\x1b\[[0-9;]*[A-Za-z~]|\x1bO[A-Za-z]|\x1b|[\s\S]/gu

/** How many rows the list shows at once. */
const ROWS = 10

/** The choices whose label or detail holds every word of `filter` (case-insensitive), label matches first. */
export const filterChoices = <A>(choices: ReadonlyArray<Choice<A>>, filter: string): ReadonlyArray<Choice<A>> => {
  const words = filter.toLowerCase().split(/\s+/).filter(Boolean)
  if (words.length === 0) return choices
  const matching = choices.filter((choice) => {
    const text = `${choice.label} ${choice.detail}`.toLowerCase()
    return words.every((word) => text.includes(word))
  })
  const first = words[0] ?? ""
  const starts = (choice: Choice<A>) => choice.label.toLowerCase().startsWith(first)
  return [...matching.filter(starts), ...matching.filter((choice) => !starts(choice))]
}

/**
 * A searchable list at the terminal (drawn on stderr): typing filters, ↑/↓ (or Ctrl-P/Ctrl-N) move, Enter chooses,
 * Esc or Ctrl-C cancels (`undefined`). The list is redrawn in place and erased once a choice is made.
 */
export const pickOne = <A>(io: CliIO, title: string, choices: ReadonlyArray<Choice<A>>): Promise<A | undefined> => {
  let filter = ""
  let selected = 0
  let drawn = 0
  const width = Math.max(40, Number(io.env.COLUMNS ?? 0) || (process.stderr.columns ?? 80)) - 1
  const fit = (line: string) => (line.length > width ? `${line.slice(0, width - 1)}…` : line)
  const draw = () => {
    const shown = filterChoices(choices, filter)
    selected = Math.min(selected, Math.max(0, shown.length - 1))
    const top = Math.min(Math.max(0, selected - ROWS + 1), Math.max(0, shown.length - ROWS))
    const lines = [title, `Search: ${plainText(filter)}`]
    for (const [index, choice] of shown.slice(top, top + ROWS).entries()) {
      const mark = top + index === selected ? "❯" : " "
      lines.push(fit(plainText(`${mark} ${choice.label}  ${choice.detail}`)))
    }
    if (shown.length === 0) lines.push("  (nothing matches; Backspace to widen)")
    const below = shown.length - top - ROWS
    if (below > 0) lines.push(`  … ${below} more`)
    // Back to the first line drawn last time, clear below, draw again.
    const up = drawn > 1 ? `${ESC}[${drawn - 1}F` : "\r"
    screen(`${up}${ESC}[J${lines.join("\n")}`)
    drawn = lines.length
    return shown
  }
  let shown = choices
  const erase = () => screen(`${drawn > 1 ? `${ESC}[${drawn - 1}F` : "\r"}${ESC}[J`)
  const first = () => {
    shown = draw()
  }
  // One key at a time: a chunk may hold several (typed fast, or "i" and Enter together).
  const onKey = (key: string, finish: (value: A | undefined) => void): boolean => {
    if (key === `${ESC}[A` || key === `${ESC}OA` || key === "\x10") selected = Math.max(0, selected - 1)
    else if (key === `${ESC}[B` || key === `${ESC}OB` || key === "\x0e")
      selected = Math.min(shown.length - 1, selected + 1)
    else if (key === ESC || key === "\x03") {
      erase()
      finish(undefined)
      return true
    } else if (key === "\r" || key === "\n") {
      const choice = shown[selected]
      if (choice === undefined) return false
      erase()
      io.stderr(`${title.split(" — ")[0]} ${plainText(choice.label)}\n`)
      finish(choice.value)
      return true
    } else if (key === "\x7f" || key === "\b") {
      filter = filter.slice(0, -1)
      selected = 0
    } else if (key >= " " && !key.startsWith(ESC)) {
      filter += key
      selected = 0
    }
    shown = filterChoices(choices, filter)
    return false
  }
  return readKeys<A>(io, first, (text, finish) => {
    for (const key of text.match(KEYS) ?? []) if (onKey(key, finish)) return
    shown = draw()
  })
}
