import type { LatheEvent } from "@lathe/plugin"

/** The events that notify, by default all of them. */
export const NOTIFY_EVENTS = ["session.idle", "session.error", "permission.asked", "question.asked"] as const

/** An event kind that notifies. */
export type NotifyEvent = (typeof NOTIFY_EVENTS)[number]

/**
 * How the terminal is rung: a plain bell, or a desktop notification by OSC 9 (iTerm2, WezTerm, Windows Terminal,
 * Ghostty, kitty) or OSC 777 (foot, Ghostty, rxvt).
 */
export type NotifyStyle = "bell" | "osc9" | "osc777"

const MAX_SUMMARY = 200

const isControl = (code: number) => code < 0x20 || (code >= 0x7f && code <= 0x9f)

/**
 * `text` without control characters (C0, DEL, C1), which could end or forge an escape sequence; whitespace runs
 * become one space.
 */
export const sanitize = (text: string): string =>
  Array.from(text, (char) => (isControl(char.charCodeAt(0)) ? " " : char))
    .join("")
    .replace(/\s+/g, " ")
    .trim()

const clip = (text: string) => (text.length > MAX_SUMMARY ? `${text.slice(0, MAX_SUMMARY - 1)}…` : text)

/**
 * One line for the person about an event that needs them, or `undefined` for every other event. Plain text,
 * at most 200 characters, no control characters.
 */
export const summarize = (event: LatheEvent): string | undefined => {
  switch (event.type) {
    case "session.idle":
      return "Done: waiting for your next message"
    case "session.error":
      return clip(sanitize(`Failed: ${event.error.message}`))
    case "permission.asked":
      return clip(sanitize(`Permission needed: ${event.permission} ${event.patterns.join(", ")}`))
    case "question.asked": {
      const [first] = event.questions
      const more = event.questions.length > 1 ? ` (+${event.questions.length - 1} more)` : ""
      return clip(sanitize(`Question: ${first?.header ?? first?.question ?? ""}${more}`))
    }
    default:
      return undefined
  }
}

/**
 * The bytes that ring the terminal in `style`: BEL (`\x07`); OSC 9 (`ESC ] 9 ; title: message BEL`); or OSC 777
 * (`ESC ] 777 ; notify ; title ; message BEL`). Title and message are sanitized; `;` is removed from an OSC 777 title,
 * where it would end the field.
 */
export const encode = (style: NotifyStyle, title: string, message: string): string => {
  const body = sanitize(message)
  switch (style) {
    case "bell":
      return "\x07"
    case "osc9":
      return `\x1b]9;${sanitize(title)}: ${body}\x07`
    case "osc777":
      return `\x1b]777;notify;${sanitize(title).replaceAll(";", ",")};${body}\x07`
  }
}
