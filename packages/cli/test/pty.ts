// A pseudo-terminal harness for end-to-end tests of the interactive UI: it runs a real program in a real pty
// (node-pty) and feeds everything the program writes into a headless xterm.js of the same size, so a test reads the
// screen a person would see (alternate screen included) and answers the program's terminal queries as xterm would.
import pty from "@lydell/node-pty"
import xterm from "@xterm/headless"

/** The keys `press` knows, named as a person would say them. */
export type KeyName =
  | "enter"
  | "escape"
  | "tab"
  | "shift-tab"
  | "backspace"
  | "up"
  | "down"
  | "left"
  | "right"
  | "pageup"
  | "pagedown"
  | "home"
  | "end"
  | "ctrl-c"
  | "ctrl-d"
  | "ctrl-j"
  | "alt-enter"

/** A program running in a pseudo-terminal, and the screen it drew. */
export interface Terminal {
  /** The visible screen: `rows` lines, trailing spaces trimmed, joined with \n. */
  screen(): string
  /** Everything written so far, as text lines (scrollback + screen) — useful when a test fails. */
  transcript(): string
  /** Writes raw data to the program (keys, text). */
  write(data: string): void
  /** Presses a named key `times` times (default once), with the bytes xterm sends in the terminal's current modes. */
  press(key: KeyName, times?: number): void
  /** Types text like a person: one write per character, `delayMs` (default 0) between them. */
  type(text: string, delayMs?: number): Promise<void>
  /**
   * Pastes text as xterm.js does: line breaks become \r, and the text is wrapped in bracketed-paste markers when the
   * program has turned bracketed paste on (otherwise it arrives as if typed).
   */
  paste(text: string): void
  /** Resizes the screen and the pty; the program gets SIGWINCH. */
  resize(cols: number, rows: number): void
  /**
   * Resolves when the screen matches (string: includes; RegExp: test); rejects after timeoutMs (default 10 s) with an
   * error showing the current screen.
   */
  waitFor(match: string | RegExp, timeoutMs?: number): Promise<void>
  /** Resolves when the screen does NOT match any more; rejects like `waitFor`. */
  waitForGone(match: string | RegExp, timeoutMs?: number): Promise<void>
  /** The exit code once the process exits (128 + signal number when a signal ended it). */
  readonly exited: Promise<number>
  /** Kills the program's whole process group (SIGKILL) and frees the screen. Safe to call more than once. */
  kill(): void
}

/** How to start the program. */
export interface SpawnOptions {
  readonly command: string
  readonly args: ReadonlyArray<string>
  readonly cwd: string
  /** The program's whole environment (nothing is inherited), minus CI markers; TERM defaults to xterm-256color. */
  readonly env: Readonly<Record<string, string>>
  /** Default 80. */
  readonly cols?: number
  /** Default 24. */
  readonly rows?: number
}

const keys: Record<KeyName, string | { readonly normal: string; readonly application: string }> = {
  enter: "\r",
  escape: "\x1b",
  tab: "\t",
  "shift-tab": "\x1b[Z",
  backspace: "\x7f",
  up: { normal: "\x1b[A", application: "\x1bOA" },
  down: { normal: "\x1b[B", application: "\x1bOB" },
  right: { normal: "\x1b[C", application: "\x1bOC" },
  left: { normal: "\x1b[D", application: "\x1bOD" },
  home: { normal: "\x1b[H", application: "\x1bOH" },
  end: { normal: "\x1b[F", application: "\x1bOF" },
  pageup: "\x1b[5~",
  pagedown: "\x1b[6~",
  "ctrl-c": "\x03",
  "ctrl-d": "\x04",
  "ctrl-j": "\n",
  "alt-enter": "\x1b\r"
}

/**
 * Removes what makes a program (Ink through is-in-ci, and others) believe it runs in CI and so is not interactive:
 * `CI`, `CONTINUOUS_INTEGRATION`, `BUILD_NUMBER`, `RUN_ID`, `GITHUB_ACTIONS` and every `CI_*`.
 */
export const interactiveEnv = (env: Readonly<Record<string, string>>): Record<string, string> => {
  const ciNames = new Set(["CI", "CONTINUOUS_INTEGRATION", "BUILD_NUMBER", "RUN_ID", "GITHUB_ACTIONS"])
  const result: Record<string, string> = { TERM: "xterm-256color" }
  for (const [name, value] of Object.entries(env)) {
    if (ciNames.has(name) || name.startsWith("CI_")) continue
    result[name] = value
  }
  return result
}

const live = new Set<Terminal>()

/** Kills every terminal that is still running; use as `afterEach(closeAll)`. Resolves once they have all exited. */
export const closeAll = async (): Promise<void> => {
  const running = [...live]
  for (const terminal of running) terminal.kill()
  await Promise.all(running.map((terminal) => terminal.exited))
}

// A worker that dies (a test timeout, a crash) must not leave programs holding ptys behind.
process.once("exit", () => {
  for (const terminal of live) terminal.kill()
})

const describeMatch = (match: string | RegExp) => (typeof match === "string" ? JSON.stringify(match) : String(match))

/** Starts `command` in a new pseudo-terminal (its own session and process group) and returns its screen. */
export const spawnTerminal = (options: SpawnOptions): Terminal => {
  const cols = options.cols ?? 80
  const rows = options.rows ?? 24
  const screenBuffer = new xterm.Terminal({ cols, rows, scrollback: 10_000, allowProposedApi: true })
  const child = pty.spawn(options.command, [...options.args], {
    name: options.env.TERM ?? "xterm-256color",
    cols,
    rows,
    cwd: options.cwd,
    env: interactiveEnv(options.env)
  })
  let running = true
  const listeners = new Set<() => void>()
  const notify = () => {
    for (const listener of listeners) listener()
  }
  child.onData((data) => screenBuffer.write(data, notify))
  // What xterm answers to the program's queries (cursor position, device attributes) goes back, as from a terminal.
  screenBuffer.onData((data) => {
    if (running) child.write(data)
  })
  const exited = new Promise<number>((resolve) => {
    child.onExit(({ exitCode, signal }) => {
      running = false
      live.delete(terminal)
      // Let xterm parse the last output before anyone reads the screen.
      screenBuffer.write("", () => {
        notify()
        resolve(signal ? 128 + signal : exitCode)
      })
    })
  })

  const lines = (from: number, to: number) => {
    const buffer = screenBuffer.buffer.active
    const out: Array<string> = []
    for (let y = from; y < to; y++) out.push(buffer.getLine(y)?.translateToString(true) ?? "")
    return out
  }
  const screen = () => {
    const top = screenBuffer.buffer.active.viewportY
    return lines(top, top + screenBuffer.rows).join("\n")
  }
  const transcript = () => {
    const normal = screenBuffer.buffer.normal
    const text = lines(0, normal.length).join("\n").trimEnd()
    if (screenBuffer.buffer.active.type !== "alternate") return text
    return `${text}\n--- alternate screen ---\n${screen()}`
  }
  const write = (data: string) => {
    if (running) child.write(data)
  }

  const waitUntil = (matches: () => boolean, what: string, timeoutMs: number) =>
    new Promise<void>((resolve, reject) => {
      if (matches()) return resolve()
      const finish = (error?: Error) => {
        clearTimeout(timer)
        clearInterval(poll)
        listeners.delete(check)
        if (error) reject(error)
        else resolve()
      }
      const check = () => {
        if (matches()) finish()
      }
      const timer = setTimeout(() => {
        const state = running ? "still running" : "exited"
        finish(
          new Error(`Timed out after ${timeoutMs} ms waiting for ${what} (process ${state}). Screen:\n${screen()}`)
        )
      }, timeoutMs)
      // Output arrives through `notify`; the poll only covers changes xterm makes on its own.
      const poll = setInterval(check, 50)
      listeners.add(check)
    })
  const test = (match: string | RegExp) => {
    const text = screen()
    return typeof match === "string" ? text.includes(match) : match.test(text)
  }

  const terminal: Terminal = {
    screen,
    transcript,
    write,
    press: (key, times = 1) => {
      const bytes = keys[key]
      const sequence =
        typeof bytes === "string"
          ? bytes
          : screenBuffer.modes.applicationCursorKeysMode
            ? bytes.application
            : bytes.normal
      for (let i = 0; i < times; i++) write(sequence)
    },
    type: async (text, delayMs = 0) => {
      for (const char of text) {
        write(char)
        await new Promise((resolve) => setTimeout(resolve, delayMs))
      }
    },
    paste: (text) => {
      const body = text.replace(/\r?\n/g, "\r")
      write(screenBuffer.modes.bracketedPasteMode ? `\x1b[200~${body}\x1b[201~` : body)
    },
    resize: (newCols, newRows) => {
      screenBuffer.resize(newCols, newRows)
      if (running) child.resize(newCols, newRows)
    },
    waitFor: (match, timeoutMs = 10_000) => waitUntil(() => test(match), describeMatch(match), timeoutMs),
    waitForGone: (match, timeoutMs = 10_000) =>
      waitUntil(() => !test(match), `${describeMatch(match)} to disappear`, timeoutMs),
    exited,
    kill: () => {
      if (!running) return
      try {
        // node-pty starts the program as a session leader, so its pid is its process group: kill the whole tree.
        process.kill(-child.pid, "SIGKILL")
      } catch {
        child.kill("SIGKILL")
      }
    }
  }
  live.add(terminal)
  return terminal
}

/**
 * Quits the UI the way a person does: Ctrl+C, and a second Ctrl+C once the "Ctrl+C again" hint shows (some states
 * quit on the first). Resolves with the exit code.
 */
export const quit = async (terminal: Terminal): Promise<number> => {
  // A hint already on screen means the next Ctrl+C quits, and the second press below would reach a process that is
  // restoring the terminal (its default SIGINT handling then ends it with 130): let the hint go first (2 s).
  if (terminal.screen().includes("Ctrl+C again")) await terminal.waitForGone("Ctrl+C again")
  terminal.press("ctrl-c")
  const hint = await Promise.race([
    terminal.exited.then(() => false),
    terminal.waitFor("Ctrl+C again").then(
      () => true,
      () => false
    )
  ])
  if (hint) terminal.press("ctrl-c")
  return terminal.exited
}
