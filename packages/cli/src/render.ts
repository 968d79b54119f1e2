import type { LatheEvent, Tokens } from "@lathe/core"

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

const number = (n: number) => n.toLocaleString("en-US")

/** `12 ms`, `3.4 s`. */
export const duration = (ms: number): string => (ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`)

/** The closing line: steps, tokens, cost. */
export const totalsLine = (totals: Totals): string =>
  `${totals.steps} step${totals.steps === 1 ? "" : "s"} · tokens in ${number(totals.tokens.input)}, out ` +
  `${number(totals.tokens.output)}, reasoning ${number(totals.tokens.reasoning)}, cache read ` +
  `${number(totals.tokens.cache.read)}, cache write ${number(totals.tokens.cache.write)} · $${totals.cost.toFixed(4)}`

/**
 * Renders events as text for a person: the model's text streamed to `out`, one line per finished tool call
 * (status, tool, title, duration), retries and errors to `err`. Returns a handler to feed events to.
 */
export const textRenderer = (out: (text: string) => void, err: (text: string) => void, totals: Totals) => {
  const textParts = new Set<string>()
  // Subagents run in child sessions: their calls are shown indented under the task, their text is not streamed
  // (the task's result carries their answer to the model).
  const children = new Set<string>()
  let atLineStart = true
  const write = (text: string) => {
    if (text.length === 0) return
    out(text)
    atLineStart = text.endsWith("\n")
  }
  const line = (text: string) => {
    if (!atLineStart) write("\n")
    write(`${text}\n`)
  }
  return (event: LatheEvent): void => {
    switch (event.type) {
      case "session.created":
        if (event.session.parentID !== undefined) children.add(event.session.id)
        return
      case "part.updated":
        if (children.has(event.part.sessionID)) return
        if (event.part.type === "text" && !event.part.synthetic) textParts.add(event.part.id)
        if (event.part.type === "text" && event.part.time?.end !== undefined && !atLineStart) write("\n")
        return
      case "part.delta":
        if (textParts.has(event.partID)) write(event.delta)
        return
      case "tool.completed":
      case "tool.error": {
        const state = event.state
        const time = state.status === "completed" || state.status === "error" ? state.time.end - state.time.start : 0
        const title = state.status === "completed" ? state.title : ""
        const status = state.status === "completed" ? "✓" : "✗"
        const failure = state.status === "error" ? `: ${state.error.split("\n")[0]}` : ""
        const indent = children.has(event.sessionID) ? "    " : ""
        line(`${indent}${status} ${event.tool}${title ? ` ${title}` : ""} (${duration(time)})${failure}`)
        return
      }
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
          err(
            `lathe: ${event.status.message} Retrying (attempt ${event.status.attempt}) in ` +
              `${duration(Math.max(0, event.status.next - Date.now()))}.\n`
          )
        return
      case "session.compacted":
        err("lathe: the conversation was summarised to fit the model's context.\n")
        return
      case "plugin.error":
        err(`lathe: ${event.message}\n`)
        return
      case "notice":
        err(`lathe: ${event.message}\n`)
        return
      default:
        return
    }
  }
}
