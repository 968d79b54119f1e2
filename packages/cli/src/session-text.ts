import { type AuditEntry, describeRule } from "@lathe/permission"
import type { Message, MessageError, Part, ToolPart } from "@lathe/plugin/schema"
import { patchLine, subtaskStatus } from "./part-lines.js"
import { duration, emptyTotals, type Totals, totalsLine } from "./render.js"
import { type DocumentPart, type SessionDocument, startedSession } from "./session-document.js"
import { plainText } from "./terminal-text.js"

/** How much of a session `lathe session show` prints. */
export interface ShowOptions {
  /** Print the model's reasoning (otherwise one line says how long it is). */
  readonly reasoning?: boolean
  /** Print tool inputs and outputs whole (otherwise long ones are cut). */
  readonly full?: boolean
}

const OUTPUT_LINES = 12
const OUTPUT_CHARS = 2_000
const INPUT_CHARS = 300

const two = (n: number) => String(n).padStart(2, "0")

/** A time as the person reads it: local `YYYY-MM-DD HH:MM`. */
export const localTime = (ms: number): string => {
  const d = new Date(ms)
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} ${two(d.getHours())}:${two(d.getMinutes())}`
}

/** A time of day, local `HH:MM:SS`. */
export const clockTime = (ms: number): string => {
  const d = new Date(ms)
  return `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`
}

/** The steps, tokens and cost of a session's own messages (not its subagents'), from its step-finish parts. */
export const sessionTotals = (doc: SessionDocument): Totals => {
  const totals = emptyTotals()
  for (const { parts } of doc.messages)
    for (const { part } of parts) {
      if (part.type !== "step-finish") continue
      totals.steps++
      totals.cost += part.cost
      const t = totals.tokens
      totals.tokens = {
        input: t.input + part.tokens.input,
        output: t.output + part.tokens.output,
        reasoning: t.reasoning + part.tokens.reasoning,
        cache: { read: t.cache.read + part.tokens.cache.read, write: t.cache.write + part.tokens.cache.write }
      }
    }
  return totals
}

/** One step's tokens and cost, as the closing line of `lathe run` says them. */
export const stepLine = (part: Extract<Part, { type: "step-finish" }>): string =>
  `step finished: ${part.reason} · ${totalsLine({ steps: 1, cost: part.cost, tokens: part.tokens }).replace(/^1 step · /, "")}`

/** A permission decision in words: `bash "ls": allow by rule — rule bash "*": allow (from …)`. */
export const decisionLine = (entry: AuditEntry): string => {
  const why = entry.reason ?? (entry.rule ? describeRule(entry.rule) : "")
  return `${entry.permission} ${JSON.stringify(entry.pattern)}: ${entry.decision} by ${entry.by}${why ? ` — ${why}` : ""}`
}

const valueText = (value: unknown): string => (typeof value === "string" ? value : JSON.stringify(value))

/**
 * A stored error's name and message, then whatever else it carries: one `key: value` line each, a list one line per
 * item (a doom loop's repeated calls read `- read {"filePath":"a.ts"}`).
 */
export const errorLines = (error: MessageError): Array<string> => [
  `${error.name}: ${error.message}`,
  ...Object.entries(error)
    .filter(([key]) => key !== "name" && key !== "message")
    .flatMap(([key, value]) =>
      Array.isArray(value)
        ? [
            `  ${key}:`,
            ...value.map(
              (item: unknown) =>
                `    - ${typeof item === "object" && item !== null ? Object.values(item).map(valueText).join(" ") : valueText(item)}`
            )
          ]
        : [`  ${key}: ${valueText(value)}`]
    )
]

/** A tool call's state in a word and a mark. */
export const toolStatus = (part: ToolPart): { readonly mark: string; readonly word: string } => {
  switch (part.state.status) {
    case "completed":
      return { mark: "✓", word: "completed" }
    case "error":
      return { mark: "✗", word: "error" }
    default:
      return { mark: "…", word: `${part.state.status} (never finished)` }
  }
}

/** `input`, cut to a line's worth unless `full`. */
const inputText = (input: unknown, full: boolean): string => {
  const text = JSON.stringify(input) ?? ""
  return full || text.length <= INPUT_CHARS
    ? text
    : `${text.slice(0, INPUT_CHARS)}… (${text.length - INPUT_CHARS} more characters; --full shows all)`
}

/** Text cut to its first lines unless `full`, with a line saying how much was left out. */
const cut = (text: string, full: boolean): Array<string> => {
  const lines = text.replace(/\n+$/, "").split("\n")
  if (full) return lines
  const kept: Array<string> = []
  let chars = 0
  for (const line of lines) {
    if (kept.length === OUTPUT_LINES || chars + line.length > OUTPUT_CHARS) break
    kept.push(line)
    chars += line.length + 1
  }
  if (kept.length === 0 && lines.length > 0) kept.push((lines[0] ?? "").slice(0, OUTPUT_CHARS))
  const left = lines.length - kept.length
  return left > 0 ? [...kept, `… ${left} more line${left === 1 ? "" : "s"} (--full shows all)`] : kept
}

const messageHeader = (info: Message, undone: boolean): string => {
  const mark = undone ? " · undone (lathe redo brings it back)" : ""
  const model = `${info.model.providerID}/${info.model.modelID}`
  if (info.role === "user") return `▶ you · ${clockTime(info.time.created)} · ${info.agent} · ${model}${mark}`
  const took =
    info.time.completed === undefined ? " · unfinished" : ` · ${duration(info.time.completed - info.time.created)}`
  return `◀ ${info.summary ? "summary by " : ""}${info.agent} · ${model} · ${clockTime(info.time.created)}${took}${mark}`
}

/** Renders a session document as text for a terminal: every message and part in order, subagents nested. */
export const renderSession = (doc: SessionDocument, options: ShowOptions = {}): string => {
  const out: Array<string> = []
  render(doc, options, "", out)
  return `${out.join("\n")}\n`
}

const render = (doc: SessionDocument, options: ShowOptions, indent: string, out: Array<string>) => {
  const put = (text: string, more = "") => {
    for (const line of plainText(text).split("\n")) out.push(`${indent}${more}${line}`.trimEnd())
  }
  const { session } = doc
  put(`Session ${session.id} · ${session.title.replace(/\s+/g, " ")}`)
  const agent = session.agent ? ` · agent ${session.agent}` : ""
  put(
    `  ${session.directory}${agent} · created ${localTime(session.time.created)} · updated ${localTime(session.time.updated)}`
  )
  put(`  ${totalsLine(sessionTotals(doc))}`)
  if (session.summary) put(session.summary, "  summary: ")
  const revert = session.revert?.messageID
  for (const { info, parts } of doc.messages) {
    out.push("")
    const compaction = parts.find((p) => p.part.type === "compaction")?.part
    if (compaction?.type === "compaction") {
      const kept = compaction.keepFrom ? `; the turn from ${compaction.keepFrom} on stays verbatim` : ""
      put(
        `── compaction (${compaction.auto ? "automatic" : "requested"}) · ${clockTime(info.time.created)}: the model sees a summary of the history before this point${kept}`
      )
      continue
    }
    put(messageHeader(info, revert !== undefined && info.id >= revert))
    for (const entry of parts) renderPart(entry, doc, options, indent, out, put)
    if (info.role === "assistant" && info.error) for (const line of errorLines(info.error)) put(line, "  ✗ ")
  }
  if (doc.subagents.length > 0) {
    out.push("", `${indent}Subagent sessions no call names:`)
    for (const child of doc.subagents) render(child, options, `${indent}    `, out)
  }
}

const renderPart = (
  { part, decisions, subagent }: DocumentPart,
  doc: SessionDocument,
  options: ShowOptions,
  indent: string,
  out: Array<string>,
  put: (text: string, more?: string) => void
) => {
  switch (part.type) {
    case "text":
      if (!part.synthetic) put(part.text, "  ")
      else if (options.full) put(`(context Lathe added)\n${part.text}`, "  ")
      else put(`(context Lathe added: ${part.text.length} characters; --full shows it)`, "  ")
      return
    case "reasoning":
      if (options.reasoning) put(part.text, "  ∴ ")
      else put(`∴ reasoning (${part.text.length} characters; --reasoning shows it)`, "  ")
      return
    case "tool": {
      const { mark, word } = toolStatus(part)
      const state = part.state
      const title = state.status === "completed" ? ` ${state.title}` : ""
      const took =
        state.status === "completed" || state.status === "error"
          ? ` · ${duration(state.time.end - state.time.start)}`
          : ""
      put(`${mark} ${part.tool}${title} · ${word}${took}`, "  ")
      put(`input: ${inputText(state.input, options.full === true)}`, "      ")
      for (const entry of decisions ?? []) put(`permission: ${decisionLine(entry)}`, "      ")
      if (state.status === "completed") {
        if (state.time.compacted !== undefined)
          put(`(output pruned from the model's context at ${clockTime(state.time.compacted)})`, "      ")
        for (const line of cut(state.output, options.full === true)) put(line, "      │ ")
      } else if (state.status === "error")
        for (const line of cut(state.error, options.full === true)) put(line, "      error: ")
      break
    }
    case "subtask":
      put(`→ @${part.agent}: ${part.description}${subtaskStatus(part)}`, "  ")
      break
    case "retry":
      put(`↻ attempt ${part.attempt} failed at ${clockTime(part.time.created)}: ${part.message}`, "  ")
      return
    case "step-finish":
      put(stepLine(part), "  ")
      return
    case "patch":
      put(patchLine(part), "  ")
      return
    case "file":
      put(`[file] ${part.filename ?? part.url.slice(0, 80)} (${part.mime})`, "  ")
      return
    case "agent":
      put(`@${part.name}`, "  ")
      return
    default:
      return
  }
  if (subagent) render(subagent, options, `${indent}      `, out)
  else {
    const started = startedSession(part)
    if (started !== undefined && started !== doc.session.id)
      put(`subagent session ${started} (nested under the call that started it)`, "      ")
  }
}
