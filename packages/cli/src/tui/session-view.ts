import { appendFileSync } from "node:fs"
import type { LatheEvent, Session } from "@lathe/plugin/schema"
import { type Backend, type LoadedSession, type LocalFeature, notAvailableWhenAttached } from "../backend.js"
import type { CliIO } from "../io.js"
import { Transcript } from "./transcript.js"

/** How `lathe` (interactive) starts. */
export interface ControllerOptions {
  readonly agent?: string
  readonly model?: string
  /** Resume this session. */
  readonly session?: string
  /** Resume the project's most recent session. */
  readonly continue?: boolean
}

/** A local note: a command's answer, shell output, a warning. */
export interface Note {
  readonly level: string
  readonly title: string
  readonly lines: ReadonlyArray<string>
}

/**
 * The session in view and who is told when it changes: the transcript built from the backend's events and the
 * controller's own notes, the session's id, and the listeners of the UI (a redraw), of the plain line mode (events,
 * notes). Knows nothing of the backend: it exists before the backend does, to take the events sent while it starts.
 */
export class SessionView {
  transcript = new Transcript("")
  /** The session prompts go to; undefined until the first prompt of a new session. */
  sessionID: string | undefined
  /** Increases on every change (React's useSyncExternalStore snapshot). */
  revision = 0
  private readonly listeners = new Set<() => void>()
  private readonly eventListeners = new Set<(event: LatheEvent) => void>()
  private readonly noteListeners = new Set<(note: Note) => void>()
  private readonly shownNotices = new Set<string>()

  constructor(private readonly env: CliIO["env"]) {}

  /** Calls `listener` after every change; returns the unsubscribe function. */
  subscribe(listener: () => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  /** Calls `listener` with every Bus event of the app (the plain line mode renders from these). */
  onEvents(listener: (event: LatheEvent) => void): () => void {
    this.eventListeners.add(listener)
    return () => this.eventListeners.delete(listener)
  }

  /** Calls `listener` with every note added (command answers, shell output, warnings). */
  onNotes(listener: (note: Note) => void): () => void {
    this.noteListeners.add(listener)
    return () => this.noteListeners.delete(listener)
  }

  /** Tells the listeners that something changed. */
  changed(): void {
    this.revision++
    for (const listener of this.listeners) listener()
  }

  /** Takes one of the backend's events: the session's own (once there is one), notices and plugin errors. */
  apply(event: LatheEvent): void {
    for (const listener of this.eventListeners) listener(event)
    if (event.type === "notice" || event.type === "plugin.error" || this.transcript.rootID !== "") {
      if (this.transcript.apply(event)) this.changed()
    }
  }

  /** Adds a local note to the transcript. */
  note(level: "info" | "warn" | "error", title: string, lines: ReadonlyArray<string>): string {
    const id = this.transcript.addLocal({ level, title, lines })
    this.tellNote({ level, title, lines })
    this.changed()
    return id
  }

  /** Says the config's notices not said before (a reload, after trusting the folder, says only what is new). */
  sayNotices(notices: ReadonlyArray<string>): void {
    for (const notice of notices) if (!this.shownNotices.has(notice)) this.note("warn", "config", [notice])
    for (const notice of notices) this.shownNotices.add(notice)
  }

  /** Tells the note listeners of a note whose lines were filled in after it was added (a shell command's output). */
  tellNote(note: Note): void {
    for (const listener of this.noteListeners) listener(note)
  }

  /** The session in view (undefined until the first prompt of a new session). */
  get session(): Session | undefined {
    return this.transcript.session
  }

  /** Whether a tool that changes files or runs commands is executing right now (Esc then asks twice). */
  writing(): boolean {
    return this.transcript
      .messages()
      .some((m) =>
        m.parts.some(
          (p) =>
            p.type === "tool" &&
            p.state.status === "running" &&
            ["edit", "write", "multiedit", "apply_patch", "patch", "bash"].includes(p.tool)
        )
      )
  }

  /** Shows no session: the next prompt creates one. */
  clear(): void {
    this.sessionID = undefined
    this.transcript = new Transcript("")
  }

  /** Shows a session just created for a prompt; what was said before it existed (notices, a missing model) stays. */
  adopt(session: Session): void {
    this.sessionID = session.id
    const before = this.transcript
    this.transcript = new Transcript(session.id)
    this.transcript.session = session
    for (const item of before.timeline) if (item.kind === "local") this.transcript.timeline.push(item)
  }

  /** Shows a stored session with its messages and its subagents' sessions. */
  show({ session, messages, children }: LoadedSession): void {
    this.sessionID = session.id
    this.transcript = new Transcript(session.id)
    this.transcript.session = session
    this.transcript.load(messages, children)
  }

  /** Forgets a session that was discarded (made for a prompt that failed before it was stored). */
  forget(): void {
    this.sessionID = undefined
    this.transcript.session = undefined
  }

  /**
   * Appends a line to the file `$LATHE_TUI_TRACE` names, when it names one: what was submitted and when a turn or a
   * compaction made the session busy and idle again. For finding out what held a session busy (tests set it).
   */
  trace(line: string): void {
    const file = this.env.LATHE_TUI_TRACE
    if (!file) return
    try {
      appendFileSync(file, `${new Date().toISOString()} ${line}\n`)
    } catch {
      // tracing is best effort
    }
  }
}

/** What every part of the controller shares: the person's IO and options, the agent's backend, the view. */
export interface ControllerBase {
  readonly io: CliIO
  readonly options: ControllerOptions
  readonly backend: Backend
  readonly view: SessionView
  /** The project (`root`, empty until the backend's setup is read) and Lathe's data folder for it, if any here. */
  readonly project: { root: string; dataDir: string | undefined }
}

/** Says (one line) that `feature` needs the agent in this process, when it does and the UI is attached. */
export const unavailable = (base: ControllerBase, feature: LocalFeature, title: string, what: string): boolean => {
  if (base.backend.supports(feature)) return false
  base.view.note("warn", title, [notAvailableWhenAttached(what)])
  return true
}
