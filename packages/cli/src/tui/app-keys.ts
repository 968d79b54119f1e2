import type { Key } from "ink"
import { localTime } from "../session-text.js"
import type { Offered, Picker, UiState } from "./app-state.js"
import { askKeyAction } from "./ask-keys.js"
import { type ConnectKeyFlags, connectKey, serverAnswered, startConnect } from "./connect.js"
import type { Controller } from "./controller.js"
import * as ed from "./editor.js"

/** What the key handlers work with: the controller, the UI state and how to change it, and the screen's height. */
export interface KeyContext {
  readonly controller: Controller
  readonly ui: UiState
  /** Writes `patch` into `ui` and asks for a render. */
  readonly update: (patch: Partial<UiState>) => void
  /** What the popup and the picker offer now (see `offered`). */
  readonly offered: () => Offered
  readonly rows: number
  readonly onExit: () => void
}

const PICKER_COMMANDS = new Set(["sessions", "agents", "models"])
const emptyQuestion = (): UiState["question"] => ({ id: "", index: 0, answers: [], input: "" })

/**
 * A key typed in the full-screen UI. The open dialog, picker, ask or question takes it first (the trust prompt before
 * all); otherwise Esc interrupts (twice while a tool writes), the popup takes arrows, Tab and Enter, Enter submits,
 * Tab cycles the agent, ↑ and ↓ walk the history at the editor's edges, and the rest edits the prompt.
 */
export const onKey = (ctx: KeyContext, input: string, key: Key) => {
  const { controller, ui, update, rows } = ctx
  // Keys typed faster than the terminal is read arrive together ("a\r", "v\t"): split them at control characters
  // so Enter, Tab and Backspace still act (a bracketed paste comes through usePaste and keeps its line breaks).
  if (input.length > 1 && !key.return && /[\r\n\t\x7f\b]/.test(input)) {
    for (const piece of input.split(/([\r\n\t\x7f\b])/)) {
      if (piece === "") continue
      if (piece === "\r" || piece === "\n") onKey(ctx, "", { ...key, return: true })
      else if (piece === "\t") onKey(ctx, "", { ...key, tab: true })
      else if (piece === "\x7f" || piece === "\b") onKey(ctx, "", { ...key, backspace: true })
      else onKey(ctx, piece, key)
    }
    return
  }
  const { editor, armed, popup, picker } = ui
  const { text, commandQuery, popupItems, popupIndex } = ctx.offered()
  const busy = controller.busy || controller.transcript.status.type !== "idle"
  if (key.ctrl && input === "c") {
    if (armed?.kind === "ctrl-c") return ctx.onExit()
    if (editor.text) update({ editor: ed.emptyEditor })
    return update({ armed: { kind: "ctrl-c", at: Date.now() } })
  }
  if (key.ctrl && input === "r") return update({ expandReasoning: !ui.expandReasoning })
  if (key.pageUp) return update({ scroll: ui.scroll + Math.max(1, rows - 10) })
  if (key.pageDown) return update({ scroll: Math.max(0, ui.scroll - Math.max(1, rows - 10)) })
  if (controller.trustPrompt) {
    const lower = input.toLowerCase()
    if (lower === "y") void controller.answerTrust(true)
    else if (lower === "n" || key.escape) void controller.answerTrust(false)
    return
  }
  if (ui.connect) return connectInput(ctx, input, key)
  if (picker) return pickerKey(ctx, input, key)
  if (controller.transcript.permissions[0]) return askKey(ctx, input, key)
  if (controller.transcript.questions[0]) return questionKey(ctx, input, key)
  if (key.escape) {
    if (popupItems.length > 0) return update({ popup: { index: 0, dismissed: text } })
    if (busy) {
      if (controller.writing() && armed?.kind !== "esc") return update({ armed: { kind: "esc", at: Date.now() } })
      update({ armed: undefined })
      controller.interrupt()
    }
    return
  }
  if (popupItems.length > 0) {
    if (key.upArrow) return update({ popup: { ...popup, index: Math.max(0, popupIndex - 1) } })
    if (key.downArrow) return update({ popup: { ...popup, index: Math.min(popupItems.length - 1, popupIndex + 1) } })
    if (key.tab && acceptPopup(ctx, false)) return
    if (key.return && !key.meta && acceptPopup(ctx, commandQuery !== undefined)) return
  }
  if (key.return) return enter(ctx, key)
  if (key.tab) return controller.cycleAgent()
  if (key.upArrow || key.downArrow) return historyKey(ctx, key.upArrow ? "up" : "down")
  const next = editKey(editor, input, key)
  if (next !== editor) update({ editor: next, popup: { index: 0, dismissed: popup.dismissed } })
}

/** Enter in the editor: a new line (Alt+Enter, or after a trailing backslash), or the prompt goes. */
const enter = (ctx: KeyContext, key: Key) => {
  const { editor } = ctx.ui
  if (key.meta) return ctx.update({ editor: ed.newline(editor) })
  // A trailing backslash continues the prompt on a new line.
  if (editor.text.slice(0, editor.cursor).endsWith("\\"))
    return ctx.update({ editor: ed.newline(ed.backspace(editor)) })
  const raw = ed.submitText(editor)
  if (!raw.trim()) return
  ctx.update({ editor: ed.emptyEditor, scroll: 0, popup: { index: 0, dismissed: "" } })
  return submit(ctx, raw)
}

/** ↑ and ↓: move in the editor, or past its first or last line, to the older or newer prompt of the history. */
const historyKey = (ctx: KeyContext, direction: "up" | "down") => {
  const { editor } = ctx.ui
  const moved = direction === "up" ? ed.up(editor) : ed.down(editor)
  if (moved !== "edge") return ctx.update({ editor: moved })
  const history = ctx.controller.history
  const other = direction === "up" ? history?.previous(ed.submitText(editor)) : history?.next()
  if (other !== undefined) ctx.update({ editor: ed.editorFrom(other) })
}

/** What the editor sends: a picker or a dialog to open, the exit, a prompt held for a model, or the controller's. */
const submit = (ctx: KeyContext, raw: string) => {
  const { controller } = ctx
  const trimmed = raw.trim()
  const name = /^\/(\S+)$/.exec(trimmed)?.[1]
  if (name && PICKER_COMMANDS.has(name)) return void openPicker(ctx, name as Picker["kind"])
  if (name === "exit" || name === "quit") return ctx.onExit()
  if (name === "connect" && !controller.attached) return ctx.update({ connect: startConnect() })
  // No model yet: the prompt waits for /connect instead of failing and being lost.
  if (!trimmed.startsWith("/") && !trimmed.startsWith("!") && controller.waitsForModel)
    return controller.holdPrompt(raw)
  if (name === "new") ctx.update({ scroll: 0 })
  void controller.submit(raw)
}

/** Takes the popup's item: a command (run it, or only complete it) or a file or resource mention. */
const acceptPopup = (ctx: KeyContext, run: boolean): boolean => {
  const { editor } = ctx.ui
  const { text, commandQuery, mention, popupItems, popupIndex } = ctx.offered()
  const item = popupItems[popupIndex]
  if (!item) return false
  if (commandQuery !== undefined) {
    if (run) {
      ctx.update({ editor: ed.emptyEditor })
      submit(ctx, `/${item.value}`)
    } else ctx.update({ editor: ed.editorFrom(`/${item.value} `) })
    return true
  }
  if (mention) {
    const token = /\s/.test(item.value) ? `@"${item.value}" ` : `@${item.value} `
    const next = `${text.slice(0, mention.start)}${token}${text.slice(editor.cursor)}`
    ctx.update({ editor: { ...editor, text: next, cursor: mention.start + token.length } })
    return true
  }
  return false
}

const openPicker = async (ctx: KeyContext, kind: Picker["kind"]): Promise<void> => {
  const { controller } = ctx
  const items =
    kind === "sessions"
      ? (await controller.sessions()).map((s) => ({
          label: s.title,
          detail: `${localTime(s.time.updated)} · ${s.id}`,
          value: s.id
        }))
      : kind === "agents"
        ? controller.primaryAgents.map((a) => ({
            label: a,
            ...(a === controller.agent ? { detail: "(current)" } : {}),
            value: a
          }))
        : (await controller.models()).map((m) => ({
            label: m,
            ...(m === controller.modelLabel ? { detail: "(current)" } : {}),
            value: m
          }))
  ctx.update({ picker: { kind, items, filter: "", index: 0 } })
}

/** A key (or a paste) in the `/connect` dialog; a server's models are asked for when a question needs them. */
export const connectInput = (ctx: KeyContext, input: string, key: ConnectKeyFlags) => {
  const { ui, update, controller } = ctx
  if (!ui.connect) return
  const next = connectKey(ui.connect, input, key)
  if (next === undefined) return
  if ("flow" in next) {
    const pending = next.flow.pending
    if (pending !== undefined && pending !== ui.connect.pending)
      void controller.serverModels(pending).then((found) => {
        // Only the question still waiting for this server takes its answer (not after Esc or a new /connect).
        if (ui.connect?.pending === pending) update({ connect: serverAnswered(ui.connect, found) })
      })
    return update({ connect: next.flow })
  }
  update({ connect: undefined })
  if ("done" in next) void controller.connect(next.done)
}

const pickerKey = (ctx: KeyContext, input: string, key: Key) => {
  const { ui, update, controller } = ctx
  const { picker } = ui
  const { pickerItems } = ctx.offered()
  if (!picker) return
  if (key.escape) return update({ picker: undefined })
  if (key.upArrow) return update({ picker: { ...picker, index: Math.max(0, picker.index - 1) } })
  if (key.downArrow) return update({ picker: { ...picker, index: Math.min(pickerItems.length - 1, picker.index + 1) } })
  if (key.return) {
    const item = pickerItems[picker.index]
    update({ picker: undefined })
    if (!item) return
    if (picker.kind === "agents") controller.setAgent(item.value)
    else if (picker.kind === "models") void controller.setModel(item.value)
    else {
      update({ scroll: 0 })
      void controller.switchSession(item.value)
    }
    return
  }
  if (key.backspace || key.delete)
    return update({ picker: { ...picker, filter: picker.filter.slice(0, -1), index: 0 } })
  if (input && !key.ctrl && !key.meta) update({ picker: { ...picker, filter: picker.filter + input, index: 0 } })
}

const askKey = (ctx: KeyContext, input: string, key: Key) => {
  const ask = ctx.controller.transcript.permissions[0]
  if (!ask) return
  const action = askKeyAction(ctx.ui.askMessage, input, key)
  if (action.type === "reason") return ctx.update({ askMessage: action.reason })
  if (action.type !== "reply") return
  ctx.update({ askMessage: undefined })
  void ctx.controller.replyPermission(ask.id, action.reply, action.message)
}

/** A key in the question panel: answers are typed (or picked by number, `1,3`), one question after the other. */
const questionKey = (ctx: KeyContext, input: string, key: Key) => {
  const { ui, update, controller } = ctx
  const pending = controller.transcript.questions[0]
  const { question } = ui
  if (!pending) return
  const state = question.id === pending.id ? question : { id: pending.id, index: 0, answers: [], input: "" }
  if (key.escape) {
    update({ question: emptyQuestion() })
    return void controller.replyQuestion(pending.id, undefined)
  }
  if (key.return) {
    const item = pending.questions[state.index]
    const options = item?.options ?? []
    const typed = state.input.trim()
    const picks = /^\d+(\s*,\s*\d+)*$/.test(typed)
      ? typed.split(",").map((n) => options[Number(n.trim()) - 1]?.label)
      : undefined
    const answer = picks?.every((p) => p !== undefined) ? (picks as Array<string>) : typed ? [typed] : []
    const answers = [...state.answers, answer]
    if (answers.length >= pending.questions.length) {
      update({ question: emptyQuestion() })
      return void controller.replyQuestion(pending.id, answers)
    }
    return update({ question: { id: pending.id, index: state.index + 1, answers, input: "" } })
  }
  if (key.backspace || key.delete) return update({ question: { ...state, input: state.input.slice(0, -1) } })
  if (input && !key.ctrl && !key.meta) update({ question: { ...state, input: state.input + input } })
}

/** A bracketed paste: into the open dialog, picker filter, reject reason or answer, else into the editor. */
export const onPaste = (ctx: KeyContext, pasted: string) => {
  const { ui, update, controller } = ctx
  const { picker } = ui
  const oneLine = pasted.replace(/\s+/g, " ")
  if (ui.connect) return connectInput(ctx, pasted.replace(/\s+/g, ""), {})
  if (picker) return update({ picker: { ...picker, filter: picker.filter + oneLine, index: 0 } })
  if (controller.transcript.permissions[0]) return update({ askMessage: (ui.askMessage ?? "") + oneLine })
  if (controller.transcript.questions[0])
    return update({ question: { ...ui.question, input: ui.question.input + oneLine } })
  update({ editor: ed.paste(ui.editor, pasted) })
}

/** The editing keys of the prompt: characters, deletion, cursor movement, line kills. */
export const editKey = (editor: ed.EditorState, input: string, key: Key): ed.EditorState => {
  if (key.backspace) return key.meta ? ed.deleteWordBackward(editor) : ed.backspace(editor)
  if (key.delete) return ed.deleteForward(editor)
  if (key.leftArrow) return key.meta || key.ctrl ? ed.wordLeft(editor) : ed.left(editor)
  if (key.rightArrow) return key.meta || key.ctrl ? ed.wordRight(editor) : ed.right(editor)
  if (key.home) return ed.home(editor)
  if (key.end) return ed.end(editor)
  if (key.ctrl) {
    if (input === "a") return ed.home(editor)
    if (input === "e") return ed.end(editor)
    if (input === "w") return ed.deleteWordBackward(editor)
    if (input === "u") return ed.deleteToLineStart(editor)
    if (input === "k") return ed.deleteToLineEnd(editor)
    if (input === "j") return ed.newline(editor)
    return editor
  }
  if (key.meta) {
    if (input === "b") return ed.wordLeft(editor)
    if (input === "f") return ed.wordRight(editor)
    return editor
  }
  if (key.escape || key.tab || key.upArrow || key.downArrow || key.pageUp || key.pageDown) return editor
  return input ? ed.insert(editor, input) : editor
}
