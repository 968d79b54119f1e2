/** The keys of a permission ask that matter here (a subset of Ink's `Key`). */
export interface AskKeyFlags {
  readonly return?: boolean
  readonly escape?: boolean
  readonly backspace?: boolean
  readonly delete?: boolean
  readonly ctrl?: boolean
  readonly meta?: boolean
}

/** What a key press does to a permission ask: answer it, change the reject reason being typed, or nothing. */
export type AskKeyAction =
  | { readonly type: "reply"; readonly reply: "once" | "always" | "reject"; readonly message?: string }
  /** The reject reason input: open with this text, or closed (`undefined`, the hotkeys act again). */
  | { readonly type: "reason"; readonly reason: string | undefined }
  | { readonly type: "none" }

const none: AskKeyAction = { type: "none" }

/**
 * The permission ask's keys. While no reason is being typed (`reason` undefined), single key presses are hotkeys:
 * Enter, `o` or `y` allow once, `a` always, `n` rejects, `r` opens the reason input; any other text (another letter, a
 * chunk typed faster than the terminal is read, a paste) opens the reason input holding it, so a reason is never
 * taken for a hotkey. While the reason input is open every character is text, Enter rejects with the reason and
 * Esc closes the input.
 */
export const askKeyAction = (reason: string | undefined, input: string, key: AskKeyFlags): AskKeyAction => {
  const typed = input !== "" && !key.ctrl && !key.meta ? input : ""
  if (reason === undefined) {
    if (key.return) return { type: "reply", reply: "once" }
    if (key.escape || key.backspace || key.delete) return none
    if (typed.length === 1) {
      const lower = typed.toLowerCase()
      if (lower === "o" || lower === "y") return { type: "reply", reply: "once" }
      if (lower === "a") return { type: "reply", reply: "always" }
      if (lower === "n") return { type: "reply", reply: "reject" }
      if (lower === "r") return { type: "reason", reason: "" }
    }
    return typed.trim() !== "" ? { type: "reason", reason: typed } : none
  }
  if (key.return) {
    const message = reason.trim()
    return message ? { type: "reply", reply: "reject", message } : { type: "reply", reply: "reject" }
  }
  if (key.escape) return { type: "reason", reason: undefined }
  if (key.backspace || key.delete) return { type: "reason", reason: reason.slice(0, -1) }
  return typed ? { type: "reason", reason: reason + typed } : none
}
