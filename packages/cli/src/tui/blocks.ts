import type { Part } from "@lathe/plugin/schema"
import { patchLine } from "../part-lines.js"
import type { Style } from "../style.js"
import { plainText } from "../terminal-text.js"
import { wrapText } from "../wrap.js"
import { renderMarkdown } from "./markdown.js"
import { renderTool } from "./tool-view.js"
import type { LocalItem, MessageEntry, TimelineItem, Transcript } from "./transcript.js"

/** Whether a tool call among `parts` ended because the turn was interrupted (its block then says "interrupted"). */
export const stoppedTool = (parts: ReadonlyArray<Part>): boolean =>
  parts.some((p) => p.type === "tool" && p.state.status === "error" && p.state.error === "aborted")

/** How the transcript is drawn right now. */
export interface ViewOptions {
  readonly width: number
  readonly style: Style
  /** Show reasoning in full (else one dimmed line per reasoning part). */
  readonly expandReasoning: boolean
  readonly now: number
  readonly frame: number
}

interface Cached {
  readonly dep: unknown
  readonly key: string
  readonly lines: ReadonlyArray<string>
}

/** At most this many rendered parts are kept; the visible ones are always among the most recent. */
const CACHE_LIMIT = 2_000

/**
 * Renders the transcript to lines, only as far back as the viewport needs, caching each part's lines by the part
 * object (parts are replaced, never mutated, when they change) and the view settings. Drawing a frame of a 2,000-message
 * session therefore costs the visible messages, not the whole history.
 */
export class TranscriptView {
  private readonly cache = new Map<string, Cached>()

  /**
   * The `height` lines ending `scroll` lines above the bottom, whether more lie above them, and the scroll actually
   * used (smaller than asked when the transcript's first line is reached).
   */
  window(
    transcript: Transcript,
    options: ViewOptions,
    height: number,
    scroll: number
  ): { readonly lines: ReadonlyArray<string>; readonly more: boolean; readonly scroll: number } {
    const want = height + scroll
    const chunks: Array<ReadonlyArray<string>> = []
    let count = 0
    let index = transcript.timeline.length - 1
    for (; index >= 0 && count < want; index--) {
      const item = transcript.timeline[index]
      if (!item) continue
      const lines = this.item(transcript, item, options)
      if (lines.length === 0) continue
      chunks.push(lines)
      count += lines.length + 1 // a blank line between items
    }
    const all: Array<string> = []
    for (let i = chunks.length - 1; i >= 0; i--) {
      if (all.length > 0) all.push("")
      all.push(...(chunks[i] ?? []))
    }
    // Scrolled past the first line: show the top of the transcript.
    const top = index < 0 ? Math.max(0, all.length - height) : scroll
    const clamped = Math.min(scroll, top)
    const end = Math.max(0, all.length - clamped)
    const start = Math.max(0, end - height)
    return { lines: all.slice(start, end), more: start > 0 || index >= 0, scroll: clamped }
  }

  /** The lines of one timeline item. */
  item(transcript: Transcript, item: TimelineItem, options: ViewOptions): ReadonlyArray<string> {
    if (item.kind === "local") return this.cached(item.id, item, options, () => renderLocal(item, options))
    const message = transcript.message(item.id)
    if (!message) return []
    const revert = transcript.session?.revert
    if (revert && message.info.id >= revert.messageID) return []
    return this.message(transcript, message, options)
  }

  private message(transcript: Transcript, message: MessageEntry, options: ViewOptions): ReadonlyArray<string> {
    const { style, width } = options
    const info = message.info
    if (info.role === "user") {
      return this.cached(info.id, message, options, () => renderUser(message, options))
    }
    if (info.summary) {
      const text = message.parts.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("\n")
      return [style.dim(`≡ summary of the earlier conversation (${text.split("\n").length} lines)`)]
    }
    const lines: Array<string> = []
    for (const part of message.parts) lines.push(...this.part(transcript, part, options))
    // An interrupt is said once: by the tool it stopped when there was one, else by this line.
    if (info.error && !(info.error.name === "Aborted" && stoppedTool(message.parts))) {
      lines.push(
        info.error.name === "Aborted"
          ? style.yellow("■ interrupted")
          : style.red(wrapText(`✗ ${plainText(info.error.message)}`, width).join("\n"))
      )
    }
    return lines.flatMap((line) => line.split("\n"))
  }

  private part(transcript: Transcript, part: Part, options: ViewOptions): ReadonlyArray<string> {
    const { style, width } = options
    switch (part.type) {
      case "text":
        if (part.synthetic || part.text.trim() === "") return []
        return this.cached(part.id, part, options, () => renderMarkdown(plainText(part.text), width, style))
      case "reasoning": {
        if (part.text.trim() === "") return []
        const flag = options.expandReasoning
        return this.cached(`${part.id}:${flag}`, part, options, () => {
          const text = plainText(part.text).trim()
          if (!flag) {
            const first = text.split("\n")[0] ?? ""
            const lines = text.split("\n").length
            return wrapText(`∴ ${first}${lines > 1 ? ` (+${lines - 1} lines, ctrl+r to show)` : ""}`, width)
              .slice(0, 1)
              .map((l) => style.dim(style.italic(l)))
          }
          return wrapText(`∴ ${text}`, width).map((l) => style.dim(style.italic(l)))
        })
      }
      case "tool": {
        const child = part.tool === "task" ? transcript.child(part.callID) : undefined
        const waiting =
          transcript.permissions.some((a) => a.callID === part.callID) ||
          transcript.questions.some((q) => q.callID === part.callID)
        const live = part.state.status === "running" || part.state.status === "pending"
        const dep = `${child?.version ?? ""}:${waiting}:${live ? `${options.frame}:${Math.floor(options.now / 100)}` : ""}`
        return this.cached(`${part.id}:${dep}`, part, options, () =>
          renderTool(part, {
            width,
            style,
            now: options.now,
            frame: options.frame,
            waiting,
            ...(child ? { child: child.messages } : {})
          })
        )
      }
      case "patch":
        return part.files.length === 0 ? [] : wrapText(patchLine(part), width).map((l) => style.dim(l))
      case "retry":
        return wrapText(`↻ attempt ${part.attempt} failed: ${plainText(part.message)}`, width).map((l) =>
          style.yellow(l)
        )
      case "subtask":
        // A task call's own block already shows the subagent and its session: its subtask part adds nothing here.
        return part.callID !== undefined ? [] : [style.dim(`→ @${part.agent}: ${plainText(part.description)}`)]
      default:
        return []
    }
  }

  private cached(key: string, dep: unknown, options: ViewOptions, render: () => ReadonlyArray<string>) {
    const fullKey = `${key}@${options.width}:${options.style.color}`
    const hit = this.cache.get(fullKey)
    if (hit && hit.dep === dep) {
      // Most recently used last, so eviction drops the oldest.
      this.cache.delete(fullKey)
      this.cache.set(fullKey, hit)
      return hit.lines
    }
    const lines = render()
    this.cache.delete(fullKey)
    this.cache.set(fullKey, { dep, key: fullKey, lines })
    if (this.cache.size > CACHE_LIMIT) {
      const oldest = this.cache.keys().next().value
      if (oldest !== undefined) this.cache.delete(oldest)
    }
    return lines
  }
}

const renderUser = (message: MessageEntry, options: ViewOptions): ReadonlyArray<string> => {
  const { style, width } = options
  const lines: Array<string> = []
  for (const part of message.parts) {
    if (part.type === "text" && !part.synthetic) {
      const all = wrapText(plainText(part.text), width - 2)
      // A long prompt (a paste) shows its start and how much more there is.
      const wrapped = all.length > 12 ? [...all.slice(0, 8), style.dim(`… ${all.length - 8} more lines`)] : all
      wrapped.forEach((line, i) => {
        lines.push(`${i === 0 ? style.bold(style.cyan("›")) : " "} ${style.bold(line)}`)
      })
    } else if (part.type === "file") lines.push(style.dim(`  + ${plainText(part.filename ?? part.url)}`))
    else if (part.type === "agent") lines.push(style.dim(`  @${part.name}`))
    else if (part.type === "compaction")
      lines.push(style.dim(`── history summarised${part.auto ? " (the context was full)" : ""} ──`))
  }
  return lines
}

const renderLocal = (item: LocalItem, options: ViewOptions): ReadonlyArray<string> => {
  const { style, width } = options
  const color = item.level === "error" ? style.red : item.level === "warn" ? style.yellow : style.magenta
  const title = `${item.running ? "… " : ""}${plainText(item.title)}`
  return [
    color(style.bold(title)),
    ...item.lines.flatMap((line) => wrapText(plainText(line), width - 2).map((l) => `  ${style.dim(l)}`))
  ]
}
