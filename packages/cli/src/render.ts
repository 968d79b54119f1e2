import { groupDigits } from "@lathe/core"
import type { LatheEvent, Tokens, ToolState } from "@lathe/plugin/schema"
import type { LiveLine, LiveLineOptions } from "./live-line.js"
import { createStyle, type Style } from "./style.js"
import { plainText } from "./terminal-text.js"

/** Running totals of a turn, for the closing line. */
export interface Totals {
  steps: number
  cost: number
  tokens: Tokens
}

/** Fresh totals. */
export const emptyTotals = (): Totals => ({
  steps: 0,
  cost: 0,
  tokens: { input: 0, output: 0, reasoning: 0, cache: { read: 0, write: 0 } }
})

/** `12 ms`, `3.4 s`. */
export const duration = (ms: number): string => (ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`)

/**
 * The closing line: steps, tokens, cost. Fields that are zero are left out (no reasoning, no cache, a cost that is
 * unknown), so `1 step · tokens in 120, out 12` for a local model; input and output are shown whenever either is known.
 */
export const totalsLine = (totals: Totals): string => {
  const { input, output, reasoning, cache } = totals.tokens
  const tokens = [
    ...(input > 0 || output > 0 ? [`in ${groupDigits(input)}`, `out ${groupDigits(output)}`] : []),
    ...(reasoning > 0 ? [`reasoning ${groupDigits(reasoning)}`] : []),
    ...(cache.read > 0 ? [`cache read ${groupDigits(cache.read)}`] : []),
    ...(cache.write > 0 ? [`cache write ${groupDigits(cache.write)}`] : [])
  ]
  return [
    `${totals.steps} step${totals.steps === 1 ? "" : "s"}`,
    ...(tokens.length > 0 ? [`tokens ${tokens.join(", ")}`] : []),
    ...(totals.cost > 0 ? [`$${totals.cost.toFixed(4)}`] : [])
  ].join(" · ")
}

/** A call's title as shown: the tool's own (a bash call's description), none when it only repeats the tool's name. */
const titleOf = (tool: string, state: ToolState): string => {
  const input = state.input as Record<string, unknown>
  const own = state.status === "completed" || state.status === "running" ? state.title : undefined
  // A running call or a failed one has no title yet: a bash call's description stands in.
  const title = own ?? (typeof input.description === "string" ? input.description : "")
  const clean = plainText(title).replace(/\s+/g, " ").trim()
  // An MCP tool's result is titled with its Lathe name (`server_tool`), its progress `server_tool: 3/10`: shown once.
  if (clean === tool) return ""
  return clean.startsWith(`${tool}: `) ? clean.slice(tool.length + 2) : clean
}

/**
 * Why a finished call failed, or undefined when it did not: its error's first line ("interrupted" for one the
 * person stopped), or for a command that ran, `exit <code>`, `timed out` or `killed by <signal>` from its metadata.
 */
const failureOf = (state: ToolState): string | undefined => {
  if (state.status === "error")
    return state.error === "aborted" ? "interrupted" : plainText(state.error.split("\n")[0] ?? "")
  if (state.status !== "completed") return undefined
  const { exitCode, signal, timedOut } = state.metadata
  if (timedOut === true) return "timed out"
  if (typeof exitCode === "number" && exitCode !== 0) return `exit ${exitCode}`
  if (exitCode === null && typeof signal === "string") return `killed by ${signal}`
  return undefined
}

/** How the text renderer presents a turn; every option is off by default (plain, stable lines for a pipe). */
export interface TextRendererOptions {
  /** Colours for the ✓/✗ marks and Markdown (see `colorEnabled`); none when absent. */
  readonly style?: Style
  /** Render the model's text as terminal Markdown, a block at a time as each completes (stdout is a terminal). */
  readonly markdown?: MarkdownBlocks
  /**
   * Show a live line (spinner, tool, elapsed seconds) while a tool runs, redrawn in place (stdout is a terminal):
   * `liveLine` from `live-line.ts`, which the caller imports only then, since it loads the text measuring (Intl
   * segmenters, the emoji tables) that a piped run never needs.
   */
  readonly live?: (write: (text: string) => void, options: LiveLineOptions) => LiveLine
  /** The terminal's width in columns; default 80. */
  readonly columns?: () => number
  /**
   * `markdown` and `live` given later: what they need (the Markdown renderer, the text measuring and with it ICU)
   * costs a terminal run more than the rest of its start-up, and is not needed before the model answers, so the
   * caller loads it while the first request is out. Until this settles, the model's text and whatever comes after it
   * are held, in order, and shown once it has (see `TextRenderer.ready`).
   */
  readonly later?: Promise<Pick<TextRendererOptions, "markdown" | "live">>
}

/** How Markdown is shown on a terminal (see `answerMarkdown`, loaded only when needed). */
export interface MarkdownBlocks {
  /** The length of the leading blocks of `source` that are complete and will not change (0 when none is). */
  readonly complete: (source: string) => number
  /** `source` as styled terminal lines at most `columns` wide. */
  readonly render: (source: string, columns: number) => ReadonlyArray<string>
}

/** Feeds events to the text renderer; `finish` ends it. */
export interface TextRenderer {
  (event: LatheEvent): void
  /** Prints the Markdown still held back, erases the live line and stops its timer. Call once the turn is over. */
  readonly finish: () => void
  /** Wraps a writer to the same terminal so that it erases the live line before it writes (stderr notices, asks). */
  readonly around: (write: (text: string) => void) => (text: string) => void
  /** Settles once `later` has (at once without it): await it before `finish` so held text is shown as Markdown. */
  readonly ready: Promise<void>
}

/** A call that is running, for the live line. */
interface Running {
  readonly label: string
  readonly start: number
}

/** Markdown of one text part: what has arrived and is not yet printed, and whether a block was printed already. */
interface Held {
  pending: string
  printed: boolean
}

/**
 * Renders events as text for a person: the model's text to `out` (streamed as it comes, or with `markdown` as
 * terminal Markdown a block at a time), one line per finished tool call (✓, or ✗ with why: `exit 1`, the error),
 * indented for a subagent's calls; retries and notices to `err`. With `live`, a running tool shows as a spinner line
 * that later output replaces. Returns a handler to feed events to.
 */
export const textRenderer = (
  out: (text: string) => void,
  err: (text: string) => void,
  totals: Totals,
  options: TextRendererOptions = {}
): TextRenderer => {
  const style = options.style ?? createStyle(false)
  const columns = options.columns ?? (() => 80)
  const textParts = new Set<string>()
  const held = new Map<string, Held>()
  // Plain text: each part's trailing whitespace, written only once more text follows it (the stored answer is trimmed
  // at its end, so the shown one ends at its last visible character too).
  const trailing = new Map<string, string>()
  // Subagents run in child sessions: their calls are shown indented under the task, their text is not streamed
  // (the task's result carries their answer to the model).
  const children = new Set<string>()
  const running = new Map<string, Running>()
  // While the person is asked something the live line stays off: the question is written below it.
  let asking = 0
  let atLineStart = true
  let live: LiveLine | undefined
  let markdown = options.markdown
  // Events held while `later` is pending: from the first that needs it (the model's text) on, in order.
  let heldEvents: Array<LatheEvent> | undefined = options.later ? [] : undefined
  const write = (text: string) => {
    if (text.length === 0) return
    live?.clear()
    out(text)
    atLineStart = text.endsWith("\n")
  }
  const line = (text: string) => {
    if (!atLineStart) write("\n")
    write(`${text}\n`)
  }
  const startLive = (make: NonNullable<TextRendererOptions["live"]>) => {
    live = make(out, {
      columns,
      atLineStart: () => atLineStart && asking === 0,
      text: (spinner) => {
        const calls = [...running.values()]
        const latest = calls.at(-1)
        if (latest === undefined) return undefined
        const seconds = Math.max(0, Math.floor((Date.now() - latest.start) / 1000))
        const more = calls.length > 1 ? ` (+${calls.length - 1} more)` : ""
        return `${style.cyan(spinner)} ${latest.label} ${style.dim(`· ${seconds}s`)}${more}`
      }
    })
  }
  if (options.live) startLive(options.live)
  const printMarkdown = (part: Held, source: string) => {
    if (source.trim() === "") return
    const lines = markdown?.render(source, columns()) ?? [source]
    if (lines.length === 0) return
    line(`${part.printed ? "\n" : ""}${lines.join("\n")}`)
    part.printed = true
  }
  const flush = (partID: string) => {
    const part = held.get(partID)
    if (part === undefined) return
    held.delete(partID)
    printMarkdown(part, part.pending)
  }
  const render = (event: LatheEvent): void => {
    switch (event.type) {
      case "session.created":
        if (event.session.parentID !== undefined) children.add(event.session.id)
        return
      case "part.updated":
        if (children.has(event.part.sessionID)) return
        if (event.part.type === "text" && !event.part.synthetic) textParts.add(event.part.id)
        if (event.part.type === "text" && event.part.time?.end !== undefined) {
          trailing.delete(event.part.id)
          flush(event.part.id)
          if (!atLineStart) write("\n")
        }
        return
      case "part.delta": {
        if (!textParts.has(event.partID)) return
        if (!markdown) {
          const text = (trailing.get(event.partID) ?? "") + event.delta
          const shown = text.trimEnd()
          trailing.set(event.partID, text.slice(shown.length))
          write(plainText(shown))
          return
        }
        const part = held.get(event.partID) ?? { pending: "", printed: false }
        held.set(event.partID, part)
        part.pending += event.delta
        // A block can only have completed at a line break: no need to look again before one arrives.
        if (!event.delta.includes("\n")) return
        const complete = markdown.complete(part.pending)
        if (complete > 0) {
          printMarkdown(part, part.pending.slice(0, complete))
          part.pending = part.pending.slice(complete)
        }
        return
      }
      case "tool.running":
        running.set(event.callID, {
          label: `${children.has(event.sessionID) ? "  " : ""}${[plainText(event.tool), titleOf(event.tool, event.state)].filter(Boolean).join(" ")}`,
          start: event.state.status === "running" ? event.state.time.start : Date.now()
        })
        return
      case "tool.completed":
      case "tool.error": {
        running.delete(event.callID)
        // Text the model wrote before the call comes first, even when its part never said it had ended.
        for (const partID of [...held.keys()]) flush(partID)
        const state = event.state
        const time = state.status === "completed" || state.status === "error" ? state.time.end - state.time.start : 0
        const title = titleOf(event.tool, state)
        const failure = failureOf(state)
        const status = failure === undefined ? style.green("✓") : style.red("✗")
        const indent = children.has(event.sessionID) ? "    " : ""
        const took = style.dim(`(${duration(time)})`)
        line(
          `${indent}${status} ${plainText(event.tool)}${title ? ` ${title}` : ""} ${took}${failure ? `: ${failure}` : ""}`
        )
        return
      }
      case "permission.asked":
      case "question.asked":
        asking++
        live?.clear()
        return
      case "permission.replied":
      case "question.replied":
        asking = Math.max(0, asking - 1)
        return
      case "step.finished":
        totals.steps++
        totals.cost += event.cost
        totals.tokens = {
          input: totals.tokens.input + event.tokens.input,
          output: totals.tokens.output + event.tokens.output,
          reasoning: totals.tokens.reasoning + event.tokens.reasoning,
          cache: {
            read: totals.tokens.cache.read + event.tokens.cache.read,
            write: totals.tokens.cache.write + event.tokens.cache.write
          }
        }
        return
      case "session.status":
        if (event.status.type === "retry")
          notice(
            `lathe: ${plainText(event.status.message)} Retrying (attempt ${event.status.attempt}) in ` +
              `${duration(Math.max(0, event.status.next - Date.now()))}.\n`
          )
        return
      case "session.compacted":
        notice("lathe: the conversation was summarised to fit the model's context.\n")
        return
      case "plugin.error":
      case "notice":
        notice(`lathe: ${plainText(event.message)}\n`)
        return
      default:
        return
    }
  }
  const notice = (text: string) => {
    live?.clear()
    err(text)
  }
  /** Shows the held events (with what `later` gave, or plainly when it failed or has not come). */
  const release = () => {
    const events = heldEvents ?? []
    heldEvents = undefined
    for (const event of events) render(event)
  }
  const ready = options.later
    ? options.later.then(
        (late) => {
          if (heldEvents === undefined) return // finished already
          if (late.markdown) markdown = late.markdown
          if (late.live && live === undefined) startLive(late.live)
          release()
        },
        () => release()
      )
    : Promise.resolve()
  const feed = (event: LatheEvent): void => {
    if (heldEvents !== undefined && (heldEvents.length > 0 || needsLater(event, textParts))) {
      // Which parts are the model's text is known only from their `part.updated`: keep that bookkeeping current.
      if (event.type === "part.updated" && event.part.type === "text" && !event.part.synthetic)
        textParts.add(event.part.id)
      heldEvents.push(event)
      return
    }
    render(event)
  }
  return Object.assign(feed, {
    ready,
    finish: () => {
      release()
      for (const partID of [...held.keys()]) flush(partID)
      live?.stop()
      running.clear()
    },
    around: (target: (text: string) => void) => (text: string) => {
      live?.clear()
      target(text)
    }
  })
}

/** Whether `event` shows the model's text, which waits for the Markdown renderer when it is still loading. */
const needsLater = (event: LatheEvent, textParts: ReadonlySet<string>): boolean =>
  (event.type === "part.delta" && textParts.has(event.partID)) ||
  (event.type === "part.updated" && event.part.type === "text" && textParts.has(event.part.id))
