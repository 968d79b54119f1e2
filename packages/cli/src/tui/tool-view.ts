import type { ToolPart } from "@lathe/plugin/schema"
import type { Style } from "../style.js"
import { plainText } from "../terminal-text.js"
import { displayWidth, truncate, wrapText } from "../wrap.js"
import { renderDiff } from "./diff.js"
import type { MessageEntry } from "./transcript.js"

/** What a tool block needs besides its part. */
export interface ToolContext {
  readonly width: number
  readonly style: Style
  /** Now, for the elapsed time of running calls. */
  readonly now: number
  /** The spinner frame to show for running calls. */
  readonly frame: number
  /** The child session of a task call, when known. */
  readonly child?: ReadonlyArray<MessageEntry>
  /** A permission ask or question waits on this call. */
  readonly waiting?: boolean
}

/** Braille spinner frames. */
export const SPINNER = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"]

const EDIT_TOOLS = new Set(["edit", "write", "multiedit", "apply_patch", "patch"])
const str = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined)
const num = (value: unknown): number | undefined => (typeof value === "number" ? value : undefined)

/** `12 ms`, `3.4 s`, `2m 05s`. */
export const elapsed = (ms: number): string => {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))}ms`
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`
  const s = Math.round(ms / 1000)
  return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, "0")}s`
}

/** A one-line summary of a call's input, for when the tool gave no title (yet). */
export const inputSummary = (tool: string, input: Readonly<Record<string, unknown>>): string => {
  const value =
    tool === "bash"
      ? (str(input.description) ?? (str(input.command) && `$ ${str(input.command)}`))
      : tool === "task"
        ? str(input.description) && `${str(input.description)} (@${str(input.subagent_type) ?? "?"})`
        : (str(input.filePath) ??
          str(input.path) ??
          str(input.pattern) ??
          str(input.url) ??
          str(input.command) ??
          str(input.description) ??
          str(input.query))
  if (value) return plainText(value).replace(/\s+/g, " ")
  const json = JSON.stringify(input)
  return json === "{}" ? "" : plainText(json)
}

const statusIcon = (part: ToolPart, ctx: ToolContext): string => {
  const { style } = ctx
  switch (part.state.status) {
    case "pending":
      return style.gray("○")
    case "running":
      return ctx.waiting ? style.yellow("?") : style.cyan(SPINNER[ctx.frame % SPINNER.length] ?? "•")
    case "completed":
      return style.green("✓")
    case "error":
      return style.red("✗")
  }
}

/** The header line of a call: icon, tool, title or input, counts and elapsed time. */
const header = (part: ToolPart, ctx: ToolContext): string => {
  const { style, state } = { style: ctx.style, state: part.state }
  const title = state.status === "completed" || state.status === "running" ? state.title : undefined
  const summary = title ? plainText(title).replace(/\s+/g, " ") : inputSummary(part.tool, state.input)
  let right = ""
  if (state.status === "completed" || state.status === "error") right = elapsed(state.time.end - state.time.start)
  else if (state.status === "running") right = elapsed(ctx.now - state.time.start)
  if (state.status === "completed" && EDIT_TOOLS.has(part.tool)) {
    const add = num(state.metadata.additions)
    const del = num(state.metadata.deletions)
    if (add !== undefined && del !== undefined) right = `${style.green(`+${add}`)} ${style.red(`-${del}`)} ${right}`
  }
  if (ctx.waiting) right = `${style.yellow("waiting for you")} ${right}`
  const left = `${statusIcon(part, ctx)} ${style.bold(part.tool)} `
  const room = Math.max(8, ctx.width - displayWidth(left) - displayWidth(right) - 2)
  return `${left}${truncate(summary, room)}${right ? `  ${style.dim(right)}` : ""}`
}

const tail = (text: string, count: number): Array<string> => {
  const lines = plainText(text).replace(/\n+$/, "").split("\n")
  return lines.length > count ? [`… ${lines.length - count} more lines`, ...lines.slice(-count)] : lines
}

const indent = (lines: ReadonlyArray<string>, width: number, style: Style): Array<string> =>
  lines.flatMap((line) => wrapText(line, Math.max(10, width - 4)).map((l) => `  ${style.dim("│")} ${l}`))

/** The compact result under a call: a diff, an output tail, counts, todos, or a subagent's progress. */
const body = (part: ToolPart, ctx: ToolContext): Array<string> => {
  const { style, width } = ctx
  const state = part.state
  if (state.status === "error") {
    const text = state.error === "aborted" ? "interrupted" : state.error
    return indent(
      tail(text, 6).map((l) => style.red(l)),
      width,
      style
    )
  }
  if (part.tool === "task") return taskBody(part, ctx)
  if (state.status === "pending") return []
  const metadata = state.metadata ?? {}
  if (part.tool === "bash") {
    const output = state.status === "running" ? str(metadata.output) : state.output
    return output
      ? indent(
          tail(output, 8).map((l) => style.dim(l)),
          width,
          style
        )
      : []
  }
  if (state.status !== "completed") return []
  if (EDIT_TOOLS.has(part.tool)) {
    const diff = str(metadata.diff)
    if (!diff) return []
    return renderDiff(diff, Math.max(10, width - 4), style, { maxLines: 24 }).map((l) => `  ${style.dim("│")} ${l}`)
  }
  if (part.tool === "todowrite" || part.tool === "todoread") return todos(metadata.todos, ctx)
  const count =
    part.tool === "read"
      ? num(metadata.endLine) !== undefined
        ? `${(num(metadata.endLine) ?? 0) - (num(metadata.startLine) ?? 1) + 1} lines`
        : undefined
      : part.tool === "grep"
        ? `${num(metadata.matches) ?? 0} matches`
        : part.tool === "glob"
          ? `${num(metadata.count) ?? 0} files`
          : part.tool === "list"
            ? `${num(metadata.count) ?? 0} entries`
            : part.tool === "webfetch"
              ? `HTTP ${num(metadata.status) ?? "?"}, ${num(metadata.bytes) ?? 0} bytes`
              : undefined
  if (count !== undefined)
    return indent([style.dim(`${count}${metadata.truncated === true ? " (truncated)" : ""}`)], width, style)
  return indent(
    tail(state.output, 3).map((l) => style.dim(l)),
    width,
    style
  )
}

const todos = (value: unknown, ctx: ToolContext): Array<string> => {
  if (!Array.isArray(value)) return []
  const { style } = ctx
  const lines = value.flatMap((item: unknown) => {
    if (typeof item !== "object" || item === null) return []
    const todo = item as Record<string, unknown>
    const content = plainText(str(todo.content) ?? "")
    return todo.status === "completed"
      ? [style.green(`[x] ${style.strike(content)}`)]
      : todo.status === "in_progress"
        ? [style.yellow(`[~] ${content}`)]
        : todo.status === "cancelled"
          ? [style.dim(`[-] ${style.strike(content)}`)]
          : [`[ ] ${content}`]
  })
  return indent(lines, ctx.width, style)
}

/** A subagent's calls nested under its task call, then its latest line of text while it works. */
const taskBody = (part: ToolPart, ctx: ToolContext): Array<string> => {
  const { style } = ctx
  const child = ctx.child ?? []
  const calls = child.flatMap((m) => m.parts.flatMap((p) => (p.type === "tool" ? [p] : [])))
  const shown = calls.slice(-6)
  const lines: Array<string> = []
  if (calls.length > shown.length) lines.push(style.dim(`… ${calls.length - shown.length} earlier calls`))
  const nested = { ...ctx, width: ctx.width - 4, child: [] }
  for (const call of shown) lines.push(header(call, nested))
  if (part.state.status === "running" || part.state.status === "pending") {
    const text = child
      .flatMap((m) => m.parts)
      .findLast((p) => p.type === "text" && !p.synthetic && p.text.trim() !== "")
    const last = text?.type === "text" ? plainText(text.text).trim().split("\n").at(-1) : undefined
    if (last) lines.push(style.dim(style.italic(last)))
  } else if (part.state.status === "completed") {
    const cost = num(part.state.metadata.cost)
    lines.push(style.dim(`${calls.length} call${calls.length === 1 ? "" : "s"}${cost ? ` · $${cost.toFixed(4)}` : ""}`))
  }
  return lines.map((l) => `  ${style.dim("│")} ${truncate(l, Math.max(10, ctx.width - 4))}`)
}

/** Renders one tool call as a block of lines at most `ctx.width` wide. */
export const renderTool = (part: ToolPart, ctx: ToolContext): Array<string> => [header(part, ctx), ...body(part, ctx)]
