import type { Style } from "../style.js"
import { truncate, wrapText } from "../wrap.js"
import type { Offered, UiState } from "./app-state.js"
import { connectPanel } from "./connect.js"
import type { Controller } from "./controller.js"
import { askPanel, editorPanel, footerLine, listPanel, questionPanel, rule, statusOf } from "./panels.js"

/** The screen's size and colours. */
export interface Screen {
  readonly width: number
  readonly rows: number
  readonly style: Style
}

/** What the panels below the transcript read of the controller. */
export type BottomSource = Pick<
  Controller,
  "transcript" | "trustPrompt" | "queue" | "agent" | "modelLabel" | "contextLimit" | "attached" | "busy" | "budget"
>

/** USD left under the config's tighter cap: the turn's (`budget.max_cost`) or the session's; undefined with none. */
export const budgetLeft = (
  budget: BottomSource["budget"],
  totals: { readonly cost: number; readonly turnCost: number }
): number | undefined => {
  const left = [
    ...(budget?.maxCost !== undefined ? [budget.maxCost - totals.turnCost] : []),
    ...(budget?.maxSessionCost !== undefined ? [budget.maxSessionCost - totals.cost] : [])
  ]
  return left.length === 0 ? undefined : Math.max(0, Math.min(...left))
}

/** The trust prompt of a folder whose config was narrowed. */
const trustLines = (notices: ReadonlyArray<string>, { width, style }: Screen): Array<string> => [
  rule(width, style, style.yellow(style.bold("Trust this folder?"))),
  ...notices.flatMap((notice) => wrapText(notice, width)),
  `${style.green(style.bold("[y]"))}es, trust it (applies now)  ${style.red(style.bold("[n]"))}o, keep it narrowed (not asked again here)`
]

/** The picker `/sessions`, `/agents` or `/models` opened, with its filter. */
const pickerLines = (picker: NonNullable<UiState["picker"]>, offered: Offered, { width, style }: Screen) => [
  rule(width, style, `${style.bold(`/${picker.kind}`)} ${style.dim("type to filter · ↑↓ · Enter · Esc")}`),
  `${style.cyan("filter:")} ${picker.filter}${style.inverse(" ")}`,
  ...listPanel(offered.pickerItems, picker.index, width, style, 10)
]

/** The prompt being written: the popup above it, the prompts queued, and the editor. */
const editorLines = (controller: BottomSource, ui: UiState, offered: Offered, busy: boolean, screen: Screen) => {
  const { width, rows, style } = screen
  const lines: Array<string> = []
  if (offered.popupItems.length > 0) lines.push(...listPanel(offered.popupItems, offered.popupIndex, width, style, 8))
  for (const queued of controller.queue.slice(0, 3))
    lines.push(style.dim(truncate(`queued: ${queued.replace(/\s+/g, " ")}`, width)))
  if (controller.queue.length > 3) lines.push(style.dim(`… and ${controller.queue.length - 3} more queued`))
  lines.push(
    ...editorPanel(ui.editor, width, style, {
      placeholder: busy
        ? "Working… type to queue your next message · Esc interrupts"
        : "Ask Lathe to do something · / commands · @ attach a file · ! shell",
      maxRows: Math.max(3, Math.floor(rows / 3))
    })
  )
  return lines
}

/**
 * Everything below the transcript, top to bottom: the one panel that has the keys (the trust prompt, the `/connect`
 * dialog, a picker, the permission ask in front, the question in front, or the editor), the armed key's hint, and
 * the footer.
 */
export const bottomLines = (
  controller: BottomSource,
  ui: UiState,
  offered: Offered,
  busy: boolean,
  screen: Screen
): Array<string> => {
  const { width, style } = screen
  const transcript = controller.transcript
  const ask = transcript.permissions[0]
  const pendingQuestion = transcript.questions[0]
  const { picker, question, armed } = ui
  const panel: ReadonlyArray<string> = controller.trustPrompt
    ? trustLines(controller.trustPrompt, screen)
    : ui.connect
      ? connectPanel(ui.connect, width, style)
      : picker
        ? pickerLines(picker, offered, screen)
        : ask
          ? askPanel(ask, transcript.permissions.length, ui.askMessage, width, style, transcript)
          : pendingQuestion
            ? questionPanel(
                pendingQuestion,
                question.id === pendingQuestion.id ? question.index : 0,
                question.id === pendingQuestion.id ? question.input : "",
                width,
                style
              )
            : editorLines(controller, ui, offered, busy, screen)
  const bottom = [...panel]
  const hint =
    armed?.kind === "ctrl-c"
      ? "Press Ctrl+C again to quit"
      : armed?.kind === "esc"
        ? "A tool is running (it may change files): press Esc again to interrupt it"
        : undefined
  if (hint) bottom.push(style.yellow(hint))
  const totals = transcript.totals()
  const { cost, context } = totals
  const left = budgetLeft(controller.budget, totals)
  bottom.push(
    footerLine(
      {
        agent: controller.agent,
        model: controller.modelLabel || "…",
        contextUsed: context,
        contextLimit: controller.contextLimit,
        cost,
        ...(left !== undefined ? { budgetLeft: left } : {}),
        ...(controller.attached ? { attached: controller.attached } : {}),
        ...statusOf(transcript, controller.busy, Date.now())
      },
      width,
      style
    )
  )
  return bottom
}
