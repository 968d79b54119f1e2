/**
 * The shapes the page reads from the API (the parts of `@lathe/plugin`'s schema it shows, loosely: the page is a
 * view, it validates nothing) and what it computes from them: steps with their time, tokens and cost.
 */

export interface Tokens {
  readonly input: number
  readonly output: number
  readonly reasoning: number
  readonly cache: { readonly read: number; readonly write: number }
}

/** What allowed (or refused) a tool call's permission ask. */
export interface ToolPermission {
  readonly by: "rule" | "person" | "flag" | "hook" | "default"
  readonly rule?: string
  readonly source?: string
  readonly reply?: "once" | "always"
}

export interface ToolState {
  readonly status: "pending" | "running" | "completed" | "error"
  readonly input: Record<string, unknown>
  readonly output?: string
  readonly error?: string
  readonly title?: string
  readonly metadata?: Record<string, unknown>
  readonly permission?: ToolPermission
  readonly time?: { readonly start: number; readonly end?: number }
}

export type Part =
  | {
      readonly id: string
      readonly type: "text"
      readonly text: string
      readonly synthetic?: boolean
      readonly time?: Span
    }
  | { readonly id: string; readonly type: "reasoning"; readonly text: string; readonly time?: Span }
  | {
      readonly id: string
      readonly type: "tool"
      readonly tool: string
      readonly callID: string
      readonly state: ToolState
    }
  | { readonly id: string; readonly type: "step-start"; readonly snapshot?: string }
  | {
      readonly id: string
      readonly type: "step-finish"
      readonly tokens: Tokens
      readonly cost: number
      readonly snapshot?: string
    }
  | { readonly id: string; readonly type: "patch"; readonly hash: string; readonly files: ReadonlyArray<string> }
  | {
      readonly id: string
      readonly type: "subtask"
      readonly agent: string
      readonly description: string
      readonly childSessionID?: string
      /** The task call that ran it, when recorded. */
      readonly callID?: string
    }
  | { readonly id: string; readonly type: "compaction"; readonly auto: boolean }
  | { readonly id: string; readonly type: "retry"; readonly attempt: number; readonly message: string }
  | { readonly id: string; readonly type: "file" | "agent" }

export interface Span {
  readonly start: number
  readonly end?: number
}

export interface MessageInfo {
  readonly id: string
  readonly role: "user" | "assistant"
  readonly agent?: string
  readonly model?: { readonly providerID: string; readonly modelID: string }
  readonly time: { readonly created: number; readonly completed?: number }
  /** Why the turn failed, when it did. */
  readonly error?: { readonly name: string; readonly message?: string }
  /** A compaction summary of the history before it. */
  readonly summary?: boolean
}

export interface Message {
  readonly info: MessageInfo
  readonly parts: ReadonlyArray<Part>
}

export interface SessionInfo {
  readonly id: string
  readonly title: string
  readonly parentID?: string
  readonly agent?: string
  readonly model?: string
  readonly status: "idle" | "busy" | "retry"
  readonly time: { readonly created: number; readonly updated: number }
}

export interface PendingPermission {
  readonly id: string
  readonly sessionID: string
  readonly permission: string
  readonly patterns: ReadonlyArray<string>
}

export interface PendingQuestion {
  readonly id: string
  readonly sessionID: string
  readonly questions: ReadonlyArray<{
    readonly question: string
    readonly header?: string
    readonly options: ReadonlyArray<{ readonly label: string; readonly description?: string }>
  }>
}

/** One model step: from its `step-start` to its `step-finish`. */
export interface Step {
  readonly index: number
  readonly tools: ReadonlyArray<string>
  readonly tokens: Tokens
  readonly cost: number
  /** Wall time of the step (its parts' first start to last end), and of it the time its tools ran. */
  readonly ms: number
  readonly toolMs: number
}

const zero: Tokens = { input: 0, output: 0, reasoning: 0, cache: { read: 0, write: 0 } }

/** The steps of a session's messages, in order. Times come from the parts' own spans (a step records none). */
export const stepsOf = (messages: ReadonlyArray<Message>): ReadonlyArray<Step> => {
  const steps: Array<Step> = []
  for (const message of messages) {
    if (message.info.role !== "assistant") continue
    let tools: Array<string> = []
    let first = Number.POSITIVE_INFINITY
    let last = 0
    let toolMs = 0
    for (const part of message.parts) {
      if (part.type === "step-start") {
        tools = []
        first = Number.POSITIVE_INFINITY
        last = 0
        toolMs = 0
      } else if (part.type === "tool") {
        tools.push(part.tool)
        const time = part.state.time
        if (time !== undefined) {
          first = Math.min(first, time.start)
          last = Math.max(last, time.end ?? time.start)
          toolMs += (time.end ?? time.start) - time.start
        }
      } else if ((part.type === "text" || part.type === "reasoning") && part.time !== undefined) {
        first = Math.min(first, part.time.start)
        last = Math.max(last, part.time.end ?? part.time.start)
      } else if (part.type === "step-finish") {
        const start = Number.isFinite(first) ? Math.min(first, message.info.time.created) : message.info.time.created
        const end = Math.max(last, message.info.time.completed ?? last)
        steps.push({
          index: steps.length + 1,
          tools,
          tokens: part.tokens ?? zero,
          cost: part.cost ?? 0,
          ms: Math.max(0, end - start),
          toolMs
        })
        // The next step of the same message starts where this one ended.
        first = Number.POSITIVE_INFINITY
        last = 0
      }
    }
  }
  return steps
}

/** A session's totals for the list page, as `GET /sessions/summaries` computes them. */
export interface Summary {
  readonly steps: number
  readonly tokens: Tokens
  readonly cost: number
  readonly files: number
  readonly agent?: string
  readonly model?: string
  readonly ms: number
}

/** A range of the session's snapshots the file view can show: a step's, or a turn's (its first step to its last). */
export interface DiffRange {
  readonly label: string
  readonly from: string
  readonly to: string
}

/**
 * The steps and turns that recorded snapshots before and after (a step that ran a tool that may change files), in
 * order: a step from its `step-start` (or its patch's) snapshot to its `step-finish` one; a turn, from a prompt to the
 * next, from its first such step to its last.
 */
export const diffRanges = (messages: ReadonlyArray<Message>): ReadonlyArray<DiffRange> => {
  const turns: Array<DiffRange> = []
  const steps: Array<DiffRange> = []
  let turn = 0
  let step = 0
  let turnFrom: string | undefined
  let turnTo: string | undefined
  const closeTurn = () => {
    if (turnFrom !== undefined && turnTo !== undefined && turnFrom !== turnTo)
      turns.push({ label: `Turn ${turn}`, from: turnFrom, to: turnTo })
    turnFrom = undefined
    turnTo = undefined
  }
  for (const message of messages) {
    if (message.info.role === "user") {
      closeTurn()
      turn++
      continue
    }
    let from: string | undefined
    for (const part of message.parts) {
      if (part.type === "step-start") {
        step++
        from = part.snapshot
      } else if (part.type === "patch") from ??= part.hash
      else if (part.type === "step-finish") {
        if (from !== undefined && part.snapshot !== undefined && from !== part.snapshot) {
          steps.push({ label: `Step ${step}`, from, to: part.snapshot })
          turnFrom ??= from
          turnTo = part.snapshot
        }
        from = undefined
      }
    }
  }
  closeTurn()
  return [...turns, ...steps]
}

/** Time per tool over the whole session, longest first. */
export const toolTimes = (
  messages: ReadonlyArray<Message>
): ReadonlyArray<{ tool: string; ms: number; calls: number }> => {
  const byTool = new Map<string, { ms: number; calls: number }>()
  for (const message of messages)
    for (const part of message.parts)
      if (part.type === "tool") {
        const entry = byTool.get(part.tool) ?? { ms: 0, calls: 0 }
        const time = part.state.time
        entry.ms += time === undefined ? 0 : (time.end ?? time.start) - time.start
        entry.calls += 1
        byTool.set(part.tool, entry)
      }
  return [...byTool].map(([tool, v]) => ({ tool, ...v })).sort((a, b) => b.ms - a.ms)
}

/** Tokens the model read and wrote: input, cache reads, output, reasoning. */
export const totalTokens = (t: Tokens): number => t.input + t.output + t.reasoning + t.cache.read

export const formatMs = (ms: number): string => (ms < 1_000 ? `${Math.round(ms)} ms` : `${(ms / 1_000).toFixed(1)} s`)
export const formatCost = (cost: number): string => `$${cost.toFixed(cost < 1 ? 4 : 2)}`
export const formatCount = (n: number): string => (n < 10_000 ? String(n) : `${(n / 1_000).toFixed(1)}k`)
