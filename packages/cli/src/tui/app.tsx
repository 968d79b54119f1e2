/** @jsxRuntime automatic @jsxImportSource react */
import { Box, Text, useInput, usePaste, useWindowSize } from "ink"
import { useEffect, useReducer, useRef, useState, useSyncExternalStore } from "react"
import type { Style } from "../style.js"
import { bottomLines } from "./app-bottom.js"
import { type KeyContext, onKey, onPaste } from "./app-keys.js"
import { initialUi, offered, type PopupCache, type UiState } from "./app-state.js"
import { armExpired } from "./arming.js"
import { TranscriptView } from "./blocks.js"
import type { Controller } from "./controller.js"
import type { Transcript } from "./transcript.js"

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
  const ui = useRef<UiState>(initialUi()).current
  const [, force] = useReducer((n: number) => n + 1, 0)
  const [frame, setFrame] = useState(0)
  const popupCache = useRef<PopupCache>({ key: "", items: [] }).current
  const keys: KeyContext = {
    controller,
    ui,
    update: (patch) => {
      Object.assign(ui, patch)
      force()
    },
    offered: () => offered(ui, controller, popupCache),
    rows,
    onExit
  }
  const transcript = controller.transcript
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

  useInput((input, key) => onKey(keys, input, key))
  usePaste((pasted) => onPaste(keys, pasted))

  // Everything below the transcript first; the transcript gets the rest.
  const bottom = bottomLines(controller, ui, keys.offered(), busy, { width, rows, style })
  const height = Math.max(3, rows - bottom.length)
  return (
    <Box flexDirection="column" width={width} height={rows}>
      <TranscriptPane
        transcript={transcript}
        view={view}
        style={style}
        width={width}
        height={height}
        scroll={ui.scroll}
        expandReasoning={ui.expandReasoning}
        frame={frame}
        onScroll={(clamped) => {
          ui.scroll = clamped
        }}
      />
      <Lines lines={bottom.slice(-(rows - 3))} />
    </Box>
  )
}
