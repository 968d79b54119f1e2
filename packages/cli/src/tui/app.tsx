/** @jsxRuntime automatic @jsxImportSource react */
import { Box, type Key, Text, useInput, usePaste, useWindowSize } from "ink"
import { useEffect, useReducer, useRef, useState, useSyncExternalStore } from "react"
import { localTime } from "../session-text.js"
import { armExpired } from "./arming.js"
import { askKeyAction } from "./ask-keys.js"
import { TranscriptView } from "./blocks.js"
import {
  type ConnectFlow,
  type ConnectKeyFlags,
  connectKey,
  connectPanel,
  serverAnswered,
  startConnect
} from "./connect.js"
import type { Controller } from "./controller.js"
import * as ed from "./editor.js"
import { fuzzyFiles, mentionAt } from "./mentions.js"
import { askPanel, editorPanel, footerLine, listPanel, questionPanel, rule, statusOf } from "./panels.js"
import type { Style } from "./style.js"
import type { Transcript } from "./transcript.js"
import { truncate, wrapText } from "./wrap.js"

/** Lines drawn as one Text node (Ink lays out one node, not one per line). */
export const Lines = ({ lines }: { readonly lines: ReadonlyArray<string> }) => (
  <Text wrap="truncate-end">{lines.join("\n")}</Text>
)

/** The transcript's visible window. */
export const TranscriptPane = (props: {
  readonly transcript: Transcript
  readonly view: TranscriptView
  readonly style: Style
  readonly width: number
  readonly height: number
  readonly scroll: number
  readonly expandReasoning: boolean
  readonly frame: number
  /** Told the scroll actually used, when it is less than asked (the top was reached). */
  readonly onScroll?: (scroll: number) => void
}) => {
  const { lines, scroll } = props.view.window(
    props.transcript,
    {
      width: props.width,
      style: props.style,
      expandReasoning: props.expandReasoning,
      now: Date.now(),
      frame: props.frame
    },
    props.height,
    props.scroll
  )
  if (scroll < props.scroll) props.onScroll?.(scroll)
  const below = scroll > 0 ? props.style.dim(`↓ ${scroll} more lines below · PgDn to follow`) : undefined
  const shown = below ? [...lines.slice(0, -1), below] : lines
  const padding = Array.from({ length: Math.max(0, props.height - shown.length) }, () => "")
  return <Lines lines={[...padding, ...shown]} />
}

interface UiState {
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

type PopupItem = { readonly label: string; readonly detail?: string; readonly value: string }

type Picker = {
  readonly kind: "sessions" | "agents" | "models"
  readonly items: ReadonlyArray<{ readonly label: string; readonly detail?: string; readonly value: string }>
  readonly filter: string
  readonly index: number
}

const PICKER_COMMANDS = new Set(["sessions", "agents", "models"])

/** The interactive session: transcript, asks, editor, popups and footer. Keys are handled here, work in Controller. */
export const App = ({
  controller,
  style,
  onExit
}: {
  readonly controller: Controller
  readonly style: Style
  readonly onExit: () => void
}) => {
  const { columns, rows } = useWindowSize()
  const width = Math.max(20, columns)
  useSyncExternalStore(
    (listener) => controller.subscribe(listener),
    () => controller.revision
  )
  const view = useRef(new TranscriptView()).current
  // Key handlers read and write this object directly: several keys may arrive before React renders again, and each
  // must see what the one before it did. `update` then asks for a render.
  const ui = useRef<UiState>({
    editor: ed.emptyEditor,
    scroll: 0,
    expandReasoning: false,
    popup: { index: 0, dismissed: "" },
    picker: undefined,
    askMessage: undefined,
    question: { id: "", index: 0, answers: [], input: "" },
    armed: undefined,
    connect: undefined
  }).current
  const [, force] = useReducer((n: number) => n + 1, 0)
  const update = (patch: Partial<UiState>) => {
    Object.assign(ui, patch)
    force()
  }
  const setEditor = (editor: ed.EditorState) => update({ editor })
  const setScroll = (scroll: number | ((s: number) => number)) =>
    update({ scroll: typeof scroll === "function" ? scroll(ui.scroll) : scroll })
  const setPopup = (popup: UiState["popup"]) => update({ popup })
  const setPicker = (picker: Picker | undefined) => update({ picker })
  const setAskMessage = (askMessage: string | undefined) => update({ askMessage })
  const setQuestion = (q: UiState["question"] | ((q: UiState["question"]) => UiState["question"])) =>
    update({ question: typeof q === "function" ? q(ui.question) : q })
  const setArmed = (armed: UiState["armed"]) => update({ armed })
  const setExpandReasoning = (f: (v: boolean) => boolean) => update({ expandReasoning: f(ui.expandReasoning) })
  const [frame, setFrame] = useState(0)

  const transcript = controller.transcript
  const ask = transcript.permissions[0]
  const pendingQuestion = transcript.questions[0]
  const busy = controller.busy || transcript.status.type !== "idle"

  useEffect(() => {
    if (!busy) return
    const timer = setInterval(() => setFrame((f) => f + 1), 100)
    return () => clearInterval(timer)
  }, [busy])
  // Once per arming: a timer reset on every render would never fire while the UI re-renders (the spinner of a
  // running turn draws every 100 ms), and a Ctrl+C pressed long after the first would quit at once. An armed Esc
  // stays armed while the tool that asked for it still runs (its hint stays on screen), and goes when it ends.
  useEffect(() => {
    const armed = ui.armed
    if (!armed) return
    const timer = setInterval(() => {
      if (ui.armed !== armed) return clearInterval(timer)
      if (!armExpired(armed, Date.now(), controller.writing())) return
      ui.armed = undefined
      clearInterval(timer)
      force()
    }, 250)
    return () => clearInterval(timer)
  }, [ui, ui.armed, controller])

  // What the popup above the editor offers: commands after "/", files after "@". Computed from `ui` on demand, so
  // a key handler sees the effect of the key before it.
  const popupCache = useRef({ key: "", items: [] as ReadonlyArray<PopupItem> })
  const derive = () => {
    const { editor, picker, popup } = ui
    const text = editor.text
    const commandQuery = /^\/(\S*)$/.exec(text)?.[1]
    const mention = commandQuery === undefined ? mentionAt(text, editor.cursor) : undefined
    const blocked =
      picker !== undefined || controller.transcript.permissions.length > 0 || controller.transcript.questions.length > 0
    let popupItems: ReadonlyArray<PopupItem> = []
    if (!blocked && popup.dismissed !== text) {
      const key = `${commandQuery ?? ""}\u0000${mention?.query ?? "\u0001"}\u0000${controller.listedRevision}`
      if (popupCache.current.key === key) popupItems = popupCache.current.items
      else {
        if (commandQuery !== undefined)
          popupItems = controller
            .commands()
            .filter(
              (c) => c.name.startsWith(commandQuery) || (commandQuery.length > 1 && c.name.includes(commandQuery))
            )
            .map((c) => ({ label: `/${c.name}`, detail: c.description, value: c.name }))
        else if (mention)
          popupItems = fuzzyFiles(mention.query, controller.mentionTargets, 8).map((f) => ({
            label: `@${f}`,
            value: f
          }))
        popupCache.current = { key, items: popupItems }
      }
    }
    const popupIndex = Math.min(popup.index, Math.max(0, popupItems.length - 1))
    const pickerItems = picker
      ? picker.items.filter((item) => item.label.toLowerCase().includes(picker.filter.toLowerCase()))
      : []
    return { text, commandQuery, mention, popupItems, popupIndex, pickerItems }
  }

  const openPicker = async (kind: Picker["kind"]) => {
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
    setPicker({ kind, items, filter: "", index: 0 })
  }

  const submit = (raw: string) => {
    const trimmed = raw.trim()
    const name = /^\/(\S+)$/.exec(trimmed)?.[1]
    if (name && PICKER_COMMANDS.has(name)) return void openPicker(name as Picker["kind"])
    if (name === "exit" || name === "quit") return onExit()
    if (name === "connect" && !controller.attached) return update({ connect: startConnect() })
    // No model yet: the prompt waits for /connect instead of failing and being lost.
    if (!trimmed.startsWith("/") && !trimmed.startsWith("!") && controller.waitsForModel)
      return controller.holdPrompt(raw)
    if (name === "new") setScroll(0)
    void controller.submit(raw)
  }

  const acceptPopup = (run: boolean) => {
    const { editor } = ui
    const { text, commandQuery, mention, popupItems, popupIndex } = derive()
    const item = popupItems[popupIndex]
    if (!item) return false
    if (commandQuery !== undefined) {
      if (run) {
        setEditor(ed.emptyEditor)
        submit(`/${item.value}`)
      } else setEditor(ed.editorFrom(`/${item.value} `))
      return true
    }
    if (mention) {
      const token = /\s/.test(item.value) ? `@"${item.value}" ` : `@${item.value} `
      const next = `${text.slice(0, mention.start)}${token}${text.slice(editor.cursor)}`
      setEditor({ ...editor, text: next, cursor: mention.start + token.length })
      return true
    }
    return false
  }

  const onKey = (input: string, key: Key) => {
    // Keys typed faster than the terminal is read arrive together ("a\r", "v\t"): split them at control characters
    // so Enter, Tab and Backspace still act (a bracketed paste comes through usePaste and keeps its line breaks).
    if (input.length > 1 && !key.return && /[\r\n\t\x7f\b]/.test(input)) {
      for (const piece of input.split(/([\r\n\t\x7f\b])/)) {
        if (piece === "") continue
        if (piece === "\r" || piece === "\n") onKey("", { ...key, return: true })
        else if (piece === "\t") onKey("", { ...key, tab: true })
        else if (piece === "\x7f" || piece === "\b") onKey("", { ...key, backspace: true })
        else onKey(piece, key)
      }
      return
    }
    const { editor, armed, popup, picker } = ui
    const { text, commandQuery, popupItems, popupIndex } = derive()
    const ask = controller.transcript.permissions[0]
    const pendingQuestion = controller.transcript.questions[0]
    const busy = controller.busy || controller.transcript.status.type !== "idle"
    if (key.ctrl && input === "c") {
      if (armed?.kind === "ctrl-c") return onExit()
      if (editor.text) setEditor(ed.emptyEditor)
      setArmed({ kind: "ctrl-c", at: Date.now() })
      return
    }
    if (key.ctrl && input === "r") return setExpandReasoning((v) => !v)
    if (key.pageUp) return setScroll((s) => s + Math.max(1, rows - 10))
    if (key.pageDown) return setScroll((s) => Math.max(0, s - Math.max(1, rows - 10)))

    if (controller.trustPrompt) {
      const lower = input.toLowerCase()
      if (lower === "y") void controller.answerTrust(true)
      else if (lower === "n" || key.escape) void controller.answerTrust(false)
      return
    }
    if (ui.connect) return connectInput(input, key)
    if (picker) return pickerKey(input, key)
    if (ask) return askKey(input, key)
    if (pendingQuestion) return questionKey(input, key)

    if (key.escape) {
      if (popupItems.length > 0) return setPopup({ index: 0, dismissed: text })
      if (busy) {
        if (controller.writing() && armed?.kind !== "esc") return setArmed({ kind: "esc", at: Date.now() })
        setArmed(undefined)
        controller.interrupt()
      }
      return
    }
    if (popupItems.length > 0) {
      if (key.upArrow) return setPopup({ ...popup, index: Math.max(0, popupIndex - 1) })
      if (key.downArrow) return setPopup({ ...popup, index: Math.min(popupItems.length - 1, popupIndex + 1) })
      if (key.tab && acceptPopup(false)) return
      if (key.return && !key.meta && acceptPopup(commandQuery !== undefined)) return
    }
    if (key.return) {
      if (key.meta) return setEditor(ed.newline(editor))
      // A trailing backslash continues the prompt on a new line.
      if (editor.text.slice(0, editor.cursor).endsWith("\\")) return setEditor(ed.newline(ed.backspace(editor)))
      const raw = ed.submitText(editor)
      if (!raw.trim()) return
      setEditor(ed.emptyEditor)
      setScroll(0)
      setPopup({ index: 0, dismissed: "" })
      return submit(raw)
    }
    if (key.tab) return controller.cycleAgent()
    if (key.upArrow) {
      const moved = ed.up(editor)
      if (moved !== "edge") return setEditor(moved)
      const older = controller.history?.previous(ed.submitText(editor))
      if (older !== undefined) setEditor(ed.editorFrom(older))
      return
    }
    if (key.downArrow) {
      const moved = ed.down(editor)
      if (moved !== "edge") return setEditor(moved)
      const newer = controller.history?.next()
      if (newer !== undefined) setEditor(ed.editorFrom(newer))
      return
    }
    const next = editKey(editor, input, key)
    if (next !== editor) {
      setEditor(next)
      setPopup({ index: 0, dismissed: popup.dismissed })
    }
  }

  const connectInput = (input: string, key: ConnectKeyFlags) => {
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

  const pickerKey = (input: string, key: Key) => {
    const { picker } = ui
    const { pickerItems } = derive()
    if (!picker) return
    if (key.escape) return setPicker(undefined)
    if (key.upArrow) return setPicker({ ...picker, index: Math.max(0, picker.index - 1) })
    if (key.downArrow) return setPicker({ ...picker, index: Math.min(pickerItems.length - 1, picker.index + 1) })
    if (key.return) {
      const item = pickerItems[picker.index]
      setPicker(undefined)
      if (!item) return
      if (picker.kind === "agents") controller.setAgent(item.value)
      else if (picker.kind === "models") void controller.setModel(item.value)
      else {
        setScroll(0)
        void controller.switchSession(item.value)
      }
      return
    }
    if (key.backspace || key.delete) return setPicker({ ...picker, filter: picker.filter.slice(0, -1), index: 0 })
    if (input && !key.ctrl && !key.meta) setPicker({ ...picker, filter: picker.filter + input, index: 0 })
  }

  const askKey = (input: string, key: Key) => {
    const ask = controller.transcript.permissions[0]
    if (!ask) return
    const action = askKeyAction(ui.askMessage, input, key)
    if (action.type === "reason") return setAskMessage(action.reason)
    if (action.type !== "reply") return
    setAskMessage(undefined)
    void controller.replyPermission(ask.id, action.reply, action.message)
  }

  const questionKey = (input: string, key: Key) => {
    const pendingQuestion = controller.transcript.questions[0]
    const { question } = ui
    if (!pendingQuestion) return
    const state =
      question.id === pendingQuestion.id ? question : { id: pendingQuestion.id, index: 0, answers: [], input: "" }
    if (key.escape) {
      setQuestion({ id: "", index: 0, answers: [], input: "" })
      return void controller.replyQuestion(pendingQuestion.id, undefined)
    }
    if (key.return) {
      const item = pendingQuestion.questions[state.index]
      const options = item?.options ?? []
      const typed = state.input.trim()
      const picks = /^\d+(\s*,\s*\d+)*$/.test(typed)
        ? typed.split(",").map((n) => options[Number(n.trim()) - 1]?.label)
        : undefined
      const answer = picks?.every((p) => p !== undefined) ? (picks as Array<string>) : typed ? [typed] : []
      const answers = [...state.answers, answer]
      if (answers.length >= pendingQuestion.questions.length) {
        setQuestion({ id: "", index: 0, answers: [], input: "" })
        return void controller.replyQuestion(pendingQuestion.id, answers)
      }
      return setQuestion({ id: pendingQuestion.id, index: state.index + 1, answers, input: "" })
    }
    if (key.backspace || key.delete) return setQuestion({ ...state, input: state.input.slice(0, -1) })
    if (input && !key.ctrl && !key.meta) setQuestion({ ...state, input: state.input + input })
  }

  useInput(onKey)
  usePaste((pasted) => {
    const { picker } = ui
    const ask = controller.transcript.permissions[0]
    const pendingQuestion = controller.transcript.questions[0]
    if (ui.connect) return connectInput(pasted.replace(/\s+/g, ""), {})
    if (picker) return setPicker({ ...picker, filter: picker.filter + pasted.replace(/\s+/g, " "), index: 0 })
    if (ask) return setAskMessage((ui.askMessage ?? "") + pasted.replace(/\s+/g, " "))
    if (pendingQuestion) return setQuestion((q) => ({ ...q, input: q.input + pasted.replace(/\s+/g, " ") }))
    setEditor(ed.paste(ui.editor, pasted))
  })

  // ── layout: everything below the transcript first, the transcript gets the rest ──
  const { editor, picker, askMessage, question, armed, scroll, expandReasoning } = ui
  const { popupItems, popupIndex, pickerItems } = derive()
  const bottom: Array<string> = []
  if (controller.trustPrompt) {
    bottom.push(rule(width, style, style.yellow(style.bold("Trust this folder?"))))
    for (const notice of controller.trustPrompt) bottom.push(...wrapText(notice, width))
    bottom.push(
      `${style.green(style.bold("[y]"))}es, trust it (applies now)  ${style.red(style.bold("[n]"))}o, keep it narrowed (not asked again here)`
    )
  } else if (ui.connect) bottom.push(...connectPanel(ui.connect, width, style))
  else if (picker) {
    bottom.push(
      rule(width, style, `${style.bold(`/${picker.kind}`)} ${style.dim("type to filter · ↑↓ · Enter · Esc")}`)
    )
    bottom.push(`${style.cyan("filter:")} ${picker.filter}${style.inverse(" ")}`)
    bottom.push(...listPanel(pickerItems, picker.index, width, style, 10))
  } else if (ask) bottom.push(...askPanel(ask, transcript.permissions.length, askMessage, width, style, transcript))
  else if (pendingQuestion) {
    const state = question.id === pendingQuestion.id ? question : { index: 0, input: "" }
    bottom.push(...questionPanel(pendingQuestion, state.index, state.input, width, style))
  } else {
    if (popupItems.length > 0) bottom.push(...listPanel(popupItems, popupIndex, width, style, 8))
    for (const queued of controller.queue.slice(0, 3))
      bottom.push(style.dim(truncate(`queued: ${queued.replace(/\s+/g, " ")}`, width)))
    if (controller.queue.length > 3) bottom.push(style.dim(`… and ${controller.queue.length - 3} more queued`))
    bottom.push(
      ...editorPanel(editor, width, style, {
        placeholder: busy
          ? "Working… type to queue your next message · Esc interrupts"
          : "Ask Lathe to do something · / commands · @ attach a file · ! shell",
        maxRows: Math.max(3, Math.floor(rows / 3))
      })
    )
  }
  const hint =
    armed?.kind === "ctrl-c"
      ? "Press Ctrl+C again to quit"
      : armed?.kind === "esc"
        ? "A tool is running (it may change files): press Esc again to interrupt it"
        : undefined
  if (hint) bottom.push(style.yellow(hint))
  const { tokens, cost, context } = transcript.totals()
  void tokens
  bottom.push(
    footerLine(
      {
        agent: controller.agent,
        model: controller.modelLabel || "…",
        contextUsed: context,
        contextLimit: controller.contextLimit,
        cost,
        ...(controller.attached ? { attached: controller.attached } : {}),
        ...statusOf(transcript, controller.busy, Date.now())
      },
      width,
      style
    )
  )
  const height = Math.max(3, rows - bottom.length)
  return (
    <Box flexDirection="column" width={width} height={rows}>
      <TranscriptPane
        transcript={transcript}
        view={view}
        style={style}
        width={width}
        height={height}
        scroll={scroll}
        expandReasoning={expandReasoning}
        frame={frame}
        onScroll={(clamped) => {
          ui.scroll = clamped
        }}
      />
      <Lines lines={bottom.slice(-(rows - 3))} />
    </Box>
  )
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
