import type { ConnectFlow } from "./connect.js"
import type { Controller } from "./controller.js"
import * as ed from "./editor.js"
import { fuzzyFiles, mentionAt } from "./mentions.js"

/**
 * What the full-screen UI holds beside the controller: the editor, the scroll, the open picker, popup or dialog, and
 * what is being typed into an ask. Key handlers read and write it directly (several keys may arrive before React
 * renders again, and each must see what the one before it did), then ask for a render.
 */
export interface UiState {
  editor: ed.EditorState
  scroll: number
  expandReasoning: boolean
  popup: { readonly index: number; readonly dismissed: string }
  picker: Picker | undefined
  /** The reject reason being typed after `r`; undefined while the ask's hotkeys act. */
  askMessage: string | undefined
  question: { id: string; index: number; answers: Array<Array<string>>; input: string }
  armed: { readonly kind: "ctrl-c" | "esc"; readonly at: number } | undefined
  /** The `/connect` dialog, while it is open. */
  connect: ConnectFlow | undefined
}

/** The state of a UI that just opened. */
export const initialUi = (): UiState => ({
  editor: ed.emptyEditor,
  scroll: 0,
  expandReasoning: false,
  popup: { index: 0, dismissed: "" },
  picker: undefined,
  askMessage: undefined,
  question: { id: "", index: 0, answers: [], input: "" },
  armed: undefined,
  connect: undefined
})

/** One line of a popup or a picker. */
export type PopupItem = { readonly label: string; readonly detail?: string; readonly value: string }

/** The list `/sessions`, `/agents` or `/models` opened, filtered by what is typed. */
export type Picker = {
  readonly kind: "sessions" | "agents" | "models"
  readonly items: ReadonlyArray<PopupItem>
  readonly filter: string
  readonly index: number
}

/** What the popup above the editor and the open picker offer now, derived from the UI state. */
export interface Offered {
  readonly text: string
  /** What follows "/" when the editor holds only a command name being typed. */
  readonly commandQuery: string | undefined
  readonly mention: ReturnType<typeof mentionAt>
  readonly popupItems: ReadonlyArray<PopupItem>
  readonly popupIndex: number
  readonly pickerItems: ReadonlyArray<PopupItem>
}

/** What the popup reads of the controller. */
export type PopupSource = Pick<Controller, "transcript" | "listedRevision" | "commands" | "mentionTargets">

/** The last popup computed, by what it was computed from (the controller's listings change its revision). */
export type PopupCache = { key: string; items: ReadonlyArray<PopupItem> }

/**
 * What the popup above the editor offers: commands after "/", files and resources after "@" (none while a picker or
 * an ask is open, or after Esc dismissed it for this text); and the picker's items that match its filter. Computed
 * from `ui` on demand, so a key handler sees the effect of the key before it.
 */
export const offered = (ui: UiState, controller: PopupSource, cache: PopupCache): Offered => {
  const { editor, picker, popup } = ui
  const text = editor.text
  const commandQuery = /^\/(\S*)$/.exec(text)?.[1]
  const mention = commandQuery === undefined ? mentionAt(text, editor.cursor) : undefined
  const blocked =
    picker !== undefined || controller.transcript.permissions.length > 0 || controller.transcript.questions.length > 0
  let popupItems: ReadonlyArray<PopupItem> = []
  if (!blocked && popup.dismissed !== text) {
    const key = `${commandQuery ?? ""}\u0000${mention?.query ?? "\u0001"}\u0000${controller.listedRevision}`
    if (cache.key === key) popupItems = cache.items
    else {
      if (commandQuery !== undefined)
        popupItems = controller
          .commands()
          .filter((c) => c.name.startsWith(commandQuery) || (commandQuery.length > 1 && c.name.includes(commandQuery)))
          .map((c) => ({ label: `/${c.name}`, detail: c.description, value: c.name }))
      else if (mention)
        popupItems = fuzzyFiles(mention.query, controller.mentionTargets, 8).map((f) => ({ label: `@${f}`, value: f }))
      cache.key = key
      cache.items = popupItems
    }
  }
  const popupIndex = Math.min(popup.index, Math.max(0, popupItems.length - 1))
  const pickerItems = picker
    ? picker.items.filter((item) => item.label.toLowerCase().includes(picker.filter.toLowerCase()))
    : []
  return { text, commandQuery, mention, popupItems, popupIndex, pickerItems }
}
