import type { PendingAsk } from "@lathe/core"
import { describeAsk } from "@lathe/permission"
import type { Style } from "../style.js"
import { plainText, visibleText } from "../terminal-text.js"
import { displayWidth, truncate, wrapText } from "../wrap.js"
import { renderDiff } from "./diff.js"
import { type EditorState, layout } from "./editor.js"
import type { PermissionAsk, QuestionAsk, Transcript } from "./transcript.js"

/** A horizontal rule with an optional label. */
export const rule = (width: number, style: Style, label = ""): string =>
  style.dim(label ? `── ${label} ${"─".repeat(Math.max(0, width - displayWidth(label) - 4))}` : "─".repeat(width))

/**
 * The permission ask in front of the queue: what is asked and why (the deciding rule, from describeAsk), the diff of
 * an edit, and the answers. `message` is the reject reason being typed; undefined while the hotkeys act.
 */
export const askPanel = (
  ask: PermissionAsk,
  queued: number,
  message: string | undefined,
  width: number,
  style: Style,
  transcript?: Transcript
): Array<string> => {
  const pending: PendingAsk = {
    id: ask.id,
    sessionID: ask.sessionID,
    permission: ask.permission,
    patterns: ask.patterns,
    always: ask.always,
    metadata: ask.metadata,
    ...(ask.callID ? { callID: ask.callID } : {})
  }
  const described = describeAsk(pending).trimEnd().split("\n").slice(0, -1) // the last line lists answers for `run`
  const tool = transcript?.toolFor(ask.callID)
  const child = tool && ask.sessionID !== transcript?.rootID ? " (a subagent)" : ""
  const lines = [
    rule(
      width,
      style,
      `${style.yellow(style.bold("Permission"))}${child}${queued > 1 ? style.dim(` 1 of ${queued}`) : ""}`
    ),
    ...described.flatMap((line, i) => wrapText(visibleText(line), width).map((l) => (i === 0 ? style.bold(l) : l)))
  ]
  const diff = typeof ask.metadata.diff === "string" ? ask.metadata.diff : undefined
  if (diff) lines.push(...renderDiff(diff, width - 2, style, { maxLines: 12 }).map((l) => `  ${l}`))
  lines.push(
    message !== undefined
      ? `${style.red("reject, because:")} ${plainText(message)}${style.inverse(" ")}  ${style.dim("Enter rejects · Esc goes back")}`
      : `${style.green(style.bold("[o]"))}nce (Enter)  ${style.cyan(style.bold("[a]"))}lways  ${style.red(style.bold("[r]"))}eject with a reason  ${style.red(style.bold("[n]"))}o`
  )
  return lines
}

/** The question in front of the queue (one item of it at a time) with its numbered options. */
export const questionPanel = (
  ask: QuestionAsk,
  index: number,
  answer: string,
  width: number,
  style: Style
): Array<string> => {
  const item = ask.questions[index]
  if (!item) return []
  const lines = [
    rule(
      width,
      style,
      `${style.magenta(style.bold("Question"))}${ask.questions.length > 1 ? style.dim(` ${index + 1} of ${ask.questions.length}`) : ""}`
    ),
    ...wrapText(`${item.header ? `[${plainText(item.header)}] ` : ""}${plainText(item.question)}`, width).map((l) =>
      style.bold(l)
    )
  ]
  for (const [i, option] of (item.options ?? []).entries())
    lines.push(
      ...wrapText(
        `  ${i + 1}. ${plainText(option.label)}${option.description ? style.dim(` — ${plainText(option.description)}`) : ""}`,
        width
      )
    )
  lines.push(
    `${style.cyan("answer:")} ${plainText(answer)}${style.inverse(" ")}  ${style.dim(
      item.options?.length
        ? `${item.multiple ? "numbers like 1,3" : "a number"} or your own words · Enter · Esc dismisses`
        : "Enter · Esc dismisses"
    )}`
  )
  return lines
}

/** The prompt editor: a rule, then the text with the cursor drawn inverted (or the placeholder when empty). */
export const editorPanel = (
  state: EditorState,
  width: number,
  style: Style,
  options: { readonly placeholder: string; readonly label?: string; readonly maxRows: number }
): Array<string> => {
  const top = rule(width, style, options.label ?? "")
  if (state.text === "")
    return [top, `${style.cyan("›")} ${style.inverse(" ")}${style.dim(truncate(options.placeholder, width - 4))}`]
  const { lines, row, col } = layout(state, width - 2)
  const drawn = lines.map((line, i) => {
    const prefix = i === 0 ? style.cyan("›") : " "
    if (i !== row) return `${prefix} ${line}`
    const chars = [...line]
    let at = 0
    let before = ""
    let cursor = " "
    let after = ""
    for (const ch of chars) {
      if (at < col) before += ch
      else if (at === col) cursor = ch
      else after += ch
      at += displayWidth(ch)
    }
    return `${prefix} ${before}${style.inverse(cursor)}${after}`
  })
  const start = Math.max(0, Math.min(row - Math.floor(options.maxRows / 2), drawn.length - options.maxRows))
  return [top, ...drawn.slice(start, start + options.maxRows)]
}

/** A list to pick from (completions, commands, sessions, agents, models): the selected row inverted. */
export const listPanel = (
  items: ReadonlyArray<{ readonly label: string; readonly detail?: string }>,
  selected: number,
  width: number,
  style: Style,
  maxRows: number
): Array<string> => {
  if (items.length === 0) return [style.dim("  (nothing matches)")]
  const start = Math.max(0, Math.min(selected - Math.floor(maxRows / 2), items.length - maxRows))
  return items.slice(start, start + maxRows).map((item, i) => {
    const text = truncate(`${item.label}${item.detail ? `  ${item.detail}` : ""}`, width - 2)
    return start + i === selected
      ? style.inverse(` ${text}${" ".repeat(Math.max(0, width - 2 - displayWidth(text)))}`)
      : ` ${style.dim(text)}`
  })
}

/** What the footer shows. */
export interface FooterInfo {
  readonly agent: string
  readonly model: string
  readonly contextUsed: number
  readonly contextLimit: number
  readonly cost: number
  /** USD left under the config's cost budget, when one is set. */
  readonly budgetLeft?: number
  readonly status: string
  readonly statusTone: "idle" | "busy" | "retry" | "waiting" | "warn"
  /** `host:port` of the server the UI is attached to, if it is. */
  readonly attached?: string
}

/** The status line: agent · model · context % · cost (· attached: host:port) on the left, the status on the right. */
export const footerLine = (info: FooterInfo, width: number, style: Style): string => {
  const pct = info.contextLimit > 0 ? Math.min(100, Math.round((info.contextUsed / info.contextLimit) * 100)) : 0
  const left = `${style.bold(style.cyan(info.agent))} ${style.dim("·")} ${info.model} ${style.dim("·")} ${style.dim(
    `ctx ${pct}%`
  )} ${style.dim("·")} ${style.dim(`$${info.cost.toFixed(4)}`)}${
    info.budgetLeft !== undefined ? ` ${style.dim("·")} ${style.dim(`$${info.budgetLeft.toFixed(2)} left`)}` : ""
  }${info.attached ? ` ${style.dim("·")} ${style.magenta(`attached: ${info.attached}`)}` : ""}`
  const tone =
    info.statusTone === "busy"
      ? style.cyan
      : info.statusTone === "retry" || info.statusTone === "warn"
        ? style.yellow
        : info.statusTone === "waiting"
          ? style.magenta
          : style.dim
  const right = tone(info.status)
  const gap = width - displayWidth(left) - displayWidth(right)
  return gap >= 1 ? `${left}${" ".repeat(gap)}${right}` : truncate(`${left} ${right}`, width)
}

/** The status words for the footer, from the transcript's status and what waits on the person. */
export const statusOf = (
  transcript: Transcript,
  busy: boolean,
  now: number
): Pick<FooterInfo, "status" | "statusTone"> => {
  if (transcript.permissions.length > 0 || transcript.questions.length > 0)
    return { status: "waiting for you", statusTone: "waiting" }
  const status = transcript.status
  if (status.type === "retry")
    return {
      status: `retrying in ${Math.max(0, Math.ceil((status.next - now) / 1000))}s (attempt ${status.attempt})`,
      statusTone: "retry"
    }
  if (busy || status.type === "busy") return { status: "working", statusTone: "busy" }
  return { status: "ready", statusTone: "idle" }
}
