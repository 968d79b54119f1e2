import type {
  EventOf,
  LatheEvent,
  Message,
  MessageWithParts,
  Part,
  Session,
  SessionStatus,
  Tokens,
  ToolPart
} from "@lathe/plugin/schema"

/** A message and its parts, in id (creation) order. */
export interface MessageEntry {
  readonly info: Message
  readonly parts: ReadonlyArray<Part>
}

/** Something the UI itself put in the transcript: a notice, a shell command's output, a command's answer. */
export interface LocalItem {
  readonly kind: "local"
  readonly id: string
  readonly level: "info" | "warn" | "error"
  /** A short heading (`$ ls`, `/cost`, `notice`). */
  readonly title: string
  /** Plain text lines (no escapes); rendered dimmed under the title. */
  readonly lines: ReadonlyArray<string>
  /** Set while a shell command runs. */
  readonly running?: boolean
}

/** One row of the root session's timeline: a message (by id) or a local item. */
export type TimelineItem = { readonly kind: "message"; readonly id: string } | LocalItem

/** One finished model call of the root session, for `/cost`. */
export interface StepCost {
  readonly step: number
  readonly tokens: Tokens
  readonly cost: number
}

export type PermissionAsk = EventOf<"permission.asked">
export type QuestionAsk = EventOf<"question.asked">

interface SessionMessages {
  readonly messages: Map<string, MessageEntry>
  /** Bumped on every change, so a parent's task block knows its child changed. */
  version: number
}

/** Local item ids are unique across transcripts (a new session keeps the notes shown before it). */
let localCount = 0

const byId = <T extends { readonly id: string }>(a: T, b: T) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

/**
 * The UI's model of a session: the root session's messages and parts, its subagents' child sessions, pending
 * permission asks and questions, status and costs, built only from Bus events (and the store's history on resume).
 * Mutable for speed; `version` increases on every change, and every part is replaced (never mutated) when it
 * changes, so renderers may cache by part identity.
 */
export class Transcript {
  version = 0
  session: Session | undefined
  status: SessionStatus = { type: "idle" }
  readonly timeline: Array<TimelineItem> = []
  readonly permissions: Array<PermissionAsk> = []
  readonly questions: Array<QuestionAsk> = []
  readonly steps: Array<StepCost> = []
  private readonly sessions = new Map<string, SessionMessages>()
  /** task tool call id → the child session running it. */
  private readonly childOfCall = new Map<string, string>()

  constructor(readonly rootID: string) {
    this.sessions.set(rootID, { messages: new Map(), version: 0 })
  }

  /** Fills the transcript from stored history (resume): the root's messages and every child session's. */
  load(messages: ReadonlyArray<MessageWithParts>, children: ReadonlyMap<string, ReadonlyArray<MessageWithParts>>) {
    for (const message of messages) this.putMessage({ info: message.info, parts: [...message.parts].sort(byId) })
    for (const [sessionID, childMessages] of children) {
      for (const message of childMessages)
        this.putMessage({ info: message.info, parts: [...message.parts].sort(byId) }, sessionID)
    }
    for (const message of messages) for (const part of message.parts) this.linkChild(part)
    this.touch()
  }

  /** The root session's message, if known. */
  message(id: string): MessageEntry | undefined {
    return this.sessions.get(this.rootID)?.messages.get(id)
  }

  /** The child session a task call runs in, with its messages in order. */
  child(
    callID: string
  ): { readonly id: string; readonly messages: ReadonlyArray<MessageEntry>; readonly version: number } | undefined {
    const id = this.childOfCall.get(callID)
    const entry = id === undefined ? undefined : this.sessions.get(id)
    if (id === undefined || !entry) return undefined
    return { id, messages: [...entry.messages.values()].sort((a, b) => byId(a.info, b.info)), version: entry.version }
  }

  /** The root session's messages in order. */
  messages(): ReadonlyArray<MessageEntry> {
    const root = this.sessions.get(this.rootID)
    return root ? [...root.messages.values()].sort((a, b) => byId(a.info, b.info)) : []
  }

  /** Adds a local item at the end of the timeline and returns its id (to update it later). */
  addLocal(item: Omit<LocalItem, "kind" | "id">): string {
    const id = `local-${++localCount}`
    this.timeline.push({ kind: "local", id, ...item })
    this.touch()
    return id
  }

  /** Replaces a local item's fields. */
  updateLocal(id: string, patch: Partial<Omit<LocalItem, "kind" | "id">>): void {
    const index = this.timeline.findIndex((item) => item.kind === "local" && item.id === id)
    const item = this.timeline[index]
    if (item?.kind !== "local") return
    this.timeline[index] = { ...item, ...patch }
    this.touch()
  }

  /** Tokens and cost of the root session (children's are rolled up into the steps that called them). */
  totals(): { readonly tokens: Tokens; readonly cost: number; readonly context: number; readonly turnCost: number } {
    const tokens = { input: 0, output: 0, reasoning: 0, cache: { read: 0, write: 0 } }
    let cost = 0
    let context = 0
    // The latest turn's cost: its answers' (their parentID is the newest user message; ids ascend).
    let turnUser = ""
    const turnCosts = new Map<string, number>()
    // Every frame's footer asks: a sum needs no order, so no sorted copy of the whole history.
    for (const { info } of this.sessions.get(this.rootID)?.messages.values() ?? []) {
      if (info.role === "user" && info.id > turnUser) turnUser = info.id
      if (info.role !== "assistant") continue
      turnCosts.set(info.parentID, (turnCosts.get(info.parentID) ?? 0) + info.cost)
      tokens.input += info.tokens.input
      tokens.output += info.tokens.output
      tokens.reasoning += info.tokens.reasoning
      tokens.cache.read += info.tokens.cache.read
      tokens.cache.write += info.tokens.cache.write
      cost += info.cost
    }
    const last = this.lastStepTokens
    if (last) context = last.input + last.cache.read + last.cache.write + last.output
    return { tokens, cost, context, turnCost: turnCosts.get(turnUser) ?? 0 }
  }

  private lastStepTokens: Tokens | undefined

  /** Applies one Bus event; returns whether anything the UI shows changed. */
  apply(event: LatheEvent): boolean {
    switch (event.type) {
      case "session.created":
        if (event.session.parentID !== undefined && this.sessions.has(event.session.parentID)) {
          this.sessions.set(event.session.id, { messages: new Map(), version: 0 })
          if (event.callID) this.childOfCall.set(event.callID, event.session.id)
          return this.touch()
        }
        return false
      case "session.updated":
        if (event.session.id !== this.rootID) return false
        this.session = event.session
        return this.touch()
      case "session.status":
        if (event.sessionID !== this.rootID) return false
        this.status = event.status
        return this.touch()
      case "message.updated": {
        const entry = this.sessions.get(event.message.sessionID)
        if (!entry) return false
        const existing = entry.messages.get(event.message.id)
        this.putMessage({ info: event.message, parts: existing?.parts ?? [] })
        return this.touch()
      }
      case "message.removed": {
        const entry = this.sessions.get(event.sessionID)
        if (!entry?.messages.delete(event.messageID)) return false
        entry.version++
        if (event.sessionID === this.rootID) {
          const index = this.timeline.findIndex((item) => item.kind === "message" && item.id === event.messageID)
          if (index >= 0) this.timeline.splice(index, 1)
        }
        return this.touch()
      }
      case "part.updated":
        this.linkChild(event.part)
        return this.putPart(event.part)
      case "part.delta": {
        const part = this.findPart(event.sessionID, event.messageID, event.partID)
        if (!part || (part.type !== "text" && part.type !== "reasoning")) return false
        return this.putPart({ ...part, text: part.text + event.delta })
      }
      case "part.removed": {
        const entry = this.sessions.get(event.sessionID)
        const message = entry?.messages.get(event.messageID)
        if (!entry || !message) return false
        entry.messages.set(event.messageID, { ...message, parts: message.parts.filter((p) => p.id !== event.partID) })
        entry.version++
        return this.touch()
      }
      case "step.finished":
        if (event.sessionID !== this.rootID) return false
        this.steps.push({ step: this.steps.length + 1, tokens: event.tokens, cost: event.cost })
        this.lastStepTokens = event.tokens
        return this.touch()
      case "permission.asked":
        if (!this.sessions.has(event.sessionID)) return false
        this.permissions.push(event)
        return this.touch()
      case "permission.replied": {
        const index = this.permissions.findIndex((ask) => ask.id === event.id)
        if (index < 0) return false
        this.permissions.splice(index, 1)
        return this.touch()
      }
      case "question.asked":
        if (!this.sessions.has(event.sessionID)) return false
        this.questions.push(event)
        return this.touch()
      case "question.replied": {
        const index = this.questions.findIndex((ask) => ask.id === event.id)
        if (index < 0) return false
        this.questions.splice(index, 1)
        return this.touch()
      }
      case "session.compacted":
        if (event.sessionID !== this.rootID) return false
        this.addLocal({
          level: "info",
          title: "compacted",
          lines: ["Older history was summarised to fit the model's context."]
        })
        return true
      case "plugin.error":
        this.addLocal({ level: "warn", title: `plugin ${event.plugin}`, lines: [event.message] })
        return true
      case "notice":
        this.addLocal({ level: event.level === "warn" ? "warn" : "info", title: "notice", lines: [event.message] })
        return true
      default:
        return false
    }
  }

  /** The tool call a permission ask or question belongs to (root or child session), if it is known. */
  toolFor(callID: string | undefined): ToolPart | undefined {
    if (callID === undefined) return undefined
    for (const entry of this.sessions.values())
      for (const message of entry.messages.values())
        for (const part of message.parts) if (part.type === "tool" && part.callID === callID) return part
    return undefined
  }

  private touch(): true {
    this.version++
    return true
  }

  private putMessage(message: MessageEntry, sessionID = message.info.sessionID): void {
    const entry = this.sessions.get(sessionID) ?? { messages: new Map(), version: 0 }
    this.sessions.set(sessionID, entry)
    const isNew = !entry.messages.has(message.info.id)
    entry.messages.set(message.info.id, message)
    entry.version++
    if (isNew && sessionID === this.rootID) this.timeline.push({ kind: "message", id: message.info.id })
  }

  private findPart(sessionID: string, messageID: string, partID: string): Part | undefined {
    return this.sessions
      .get(sessionID)
      ?.messages.get(messageID)
      ?.parts.find((p) => p.id === partID)
  }

  private putPart(part: Part): boolean {
    const entry = this.sessions.get(part.sessionID)
    const message = entry?.messages.get(part.messageID)
    if (!entry || !message) return false
    const parts = [...message.parts]
    const index = parts.findIndex((p) => p.id === part.id)
    if (index >= 0) parts[index] = part
    else {
      parts.push(part)
      parts.sort(byId)
    }
    entry.messages.set(part.messageID, { ...message, parts })
    entry.version++
    return this.touch()
  }

  /** A task call names its child session in its input (continuing one) or, once done, in its metadata. */
  private linkChild(part: Part): void {
    if (part.type !== "tool" || part.tool !== "task") return
    const fromInput = part.state.input.session_id
    const fromMetadata =
      part.state.status === "completed" || part.state.status === "running" ? part.state.metadata?.sessionID : undefined
    const id = typeof fromMetadata === "string" ? fromMetadata : typeof fromInput === "string" ? fromInput : undefined
    if (id === undefined) return
    this.childOfCall.set(part.callID, id)
    if (!this.sessions.has(id)) this.sessions.set(id, { messages: new Map(), version: 0 })
  }
}
