import type { SessionUpdate, StopReason, ToolCallContent, ToolCallLocation, ToolKind } from "@agentclientprotocol/sdk"
import type { AssistantMessage, MessageWithParts, ToolPart, ToolState } from "@lathe/plugin/schema"
import { inputSummary } from "../tui/tool-view.js"

// How Lathe's events and stored parts read as ACP `session/update`s. Pure functions (no SDK runtime, only its types):
// the live stream (agent.ts) and a loaded session's replay use the same ones, so an editor sees a call the same way
// whether it watched it run or loaded it later.

/** The tools that change files, whose calls carry `diff` content. */
const EDIT_TOOLS = new Set(["edit", "write", "multiedit", "apply_patch"])

/** The ACP kind of a Lathe tool (an MCP or plugin tool: `other`). */
export const toolKind = (tool: string): ToolKind => {
  if (tool === "read") return "read"
  if (EDIT_TOOLS.has(tool)) return "edit"
  if (tool === "bash") return "execute"
  if (tool === "grep" || tool === "glob" || tool === "list") return "search"
  if (tool === "webfetch") return "fetch"
  if (tool === "todowrite" || tool === "todoread") return "think"
  return "other"
}

const text = (value: unknown): string | undefined => (typeof value === "string" && value !== "" ? value : undefined)
const count = (value: unknown): number | undefined =>
  typeof value === "number" && Number.isInteger(value) && value > 0 ? value : undefined

/**
 * The one-line title of a call: the tool, then its own title once it has one (`read a.txt`, `bash Show the log`), else
 * what its input names.
 */
export const toolTitle = (tool: string, state: ToolState): string => {
  const own = state.status === "completed" || state.status === "running" ? text(state.title) : undefined
  const summary = own?.replace(/\s+/g, " ") ?? inputSummary(tool, state.input)
  return summary === "" || summary.startsWith(tool) ? summary || tool : `${tool} ${summary}`
}

/** `path` as an absolute path (a tool names files relative to the project root). */
const absolute = (path: string, root: string): string =>
  path.startsWith("/") ? path : `${root.replace(/\/$/, "")}/${path}`

/**
 * The files a call works on (absolute, as editors open them), with the line where known (the edit's first changed
 * line, the read's offset).
 */
export const toolLocations = (tool: string, state: ToolState, root: string): Array<ToolCallLocation> => {
  const input = state.input
  const metadata = "metadata" in state && state.metadata ? state.metadata : {}
  const path = text(input.filePath) ?? text(metadata.filepath) ?? (tool === "list" ? text(input.path) : undefined)
  if (path) {
    const line = count(metadata.startLine) ?? (tool === "read" ? count(input.offset) : undefined)
    return [{ path: absolute(path, root), ...(line ? { line } : {}) }]
  }
  const files = metadata.files
  if (Array.isArray(files))
    return files.flatMap((file: unknown) => {
      const named =
        typeof file === "string"
          ? file
          : typeof file === "object" && file !== null
            ? text((file as { path?: unknown }).path)
            : undefined
      return named ? [{ path: absolute(named, root) }] : []
    })
  return []
}

/**
 * Splits a unified diff (one file's, or `apply_patch`'s several) into ACP `diff` content: per file, the old text (the
 * hunks' context and removed lines) and the new text (context and added lines). A new file has no old text.
 */
export const diffContent = (diff: string, root: string): Array<ToolCallContent> => {
  const out: Array<ToolCallContent> = []
  let current: { path: string; old: Array<string>; new: Array<string>; created: boolean } | undefined
  const flush = () => {
    if (current && (current.old.length > 0 || current.new.length > 0))
      out.push({
        type: "diff",
        path: absolute(current.path, root),
        oldText: current.created ? null : current.old.join("\n"),
        newText: current.new.join("\n")
      })
    current = undefined
  }
  let oldName = ""
  // Lines left in the hunk being read (old side, new side): inside a hunk, `--- x` is a removed line `-- x`.
  let left = { old: 0, new: 0 }
  for (const line of diff.split("\n")) {
    if (current && (left.old > 0 || left.new > 0)) {
      if (line.startsWith("\\")) continue
      const mark = line[0]
      const body = line.slice(1)
      if (mark === "-" || mark === " ") {
        current.old.push(body)
        left.old--
      }
      if (mark === "+" || mark === " " || line === "") {
        current.new.push(mark === "+" || mark === " " ? body : "")
        left.new--
      }
      if (line === "") {
        current.old.push("")
        left.old--
      }
      continue
    }
    if (line.startsWith("--- ")) {
      oldName = line.slice(4).split("\t")[0] ?? ""
      continue
    }
    if (line.startsWith("+++ ")) {
      flush()
      const name = line.slice(4).split("\t")[0] ?? ""
      current = { path: name === "/dev/null" ? oldName : name, old: [], new: [], created: false }
      continue
    }
    const hunk = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/.exec(line)
    if (!current || !hunk) continue
    left = { old: Number(hunk[2] ?? 1), new: Number(hunk[4] ?? 1) }
    current.created = hunk[1] === "0" && left.old === 0 && current.old.length === 0
    // Hunks far apart are told apart in the texts, as an editor folds unchanged lines.
    if (current.old.length > 0 || current.new.length > 0) {
      current.old.push("…")
      current.new.push("…")
    }
  }
  flush()
  return out
}

/** A call's content: its diff for a tool that changes files, else its output (or its error) as text. */
export const toolContent = (tool: string, state: ToolState, root: string): Array<ToolCallContent> => {
  if (state.status === "completed") {
    const diff = EDIT_TOOLS.has(tool) ? text(state.metadata.diff) : undefined
    if (diff) {
      const diffs = diffContent(diff, root)
      if (diffs.length > 0) return diffs
    }
    return state.output === "" ? [] : [{ type: "content", content: { type: "text", text: state.output } }]
  }
  if (state.status === "error") return [{ type: "content", content: { type: "text", text: state.error } }]
  return []
}

/** The ACP status of a call. */
export const toolStatus = (state: ToolState): "pending" | "in_progress" | "completed" | "failed" =>
  state.status === "pending"
    ? "pending"
    : state.status === "running"
      ? "in_progress"
      : state.status === "completed"
        ? "completed"
        : "failed"

/** The whole of a call as one `tool_call` (a loaded session's replay, and a call first seen already running). */
export const toolCallUpdate = (part: Pick<ToolPart, "callID" | "tool" | "state">, root: string): SessionUpdate => ({
  sessionUpdate: "tool_call",
  toolCallId: part.callID,
  title: toolTitle(part.tool, part.state),
  kind: toolKind(part.tool),
  status: toolStatus(part.state),
  locations: toolLocations(part.tool, part.state, root),
  content: toolContent(part.tool, part.state, root),
  rawInput: part.state.input,
  ...(part.state.status === "completed" ? { rawOutput: { output: part.state.output } } : {})
})

/** `todowrite`'s list as an ACP plan; undefined for any other call. */
export const planOf = (part: Pick<ToolPart, "tool" | "state">): SessionUpdate | undefined => {
  if (part.tool !== "todowrite" || part.state.status !== "completed") return undefined
  const todos = part.state.metadata.todos
  if (!Array.isArray(todos)) return undefined
  return {
    sessionUpdate: "plan",
    entries: todos.flatMap((todo: unknown) => {
      if (typeof todo !== "object" || todo === null) return []
      const item = todo as { content?: unknown; status?: unknown; priority?: unknown }
      const content = text(item.content)
      if (!content) return []
      const status = item.status === "in_progress" ? "in_progress" : item.status === "pending" ? "pending" : "completed"
      const priority = item.priority === "high" || item.priority === "low" ? item.priority : "medium"
      return [{ content, status, priority }]
    })
  }
}

/**
 * How a turn's end reads as an ACP stop reason: the step cap is `max_turn_requests`, an abort `cancelled`, a reply
 * cut by the output limit `max_tokens`, a provider's content filter `refusal`. Undefined for a failure to report as
 * a JSON-RPC error (its message says what went wrong).
 */
export const stopReason = (answer: AssistantMessage | undefined, cancelled: boolean): StopReason | undefined => {
  if (cancelled || answer?.error?.name === "Aborted") return "cancelled"
  const error = answer?.error
  if (error?.name === "StepLimit") return "max_turn_requests"
  if (error !== undefined && error.name !== "PermissionRejected") return undefined
  if (answer?.finish === "length") return "max_tokens"
  if (answer?.finish === "content-filter") return "refusal"
  return "end_turn"
}

/**
 * A stored session as the updates that replay it (`session/load`): the person's words, the model's answers and
 * thoughts, every call as it ended, and the last plan. Text Lathe added (attached files' contents) stays out.
 */
export const historyUpdates = (messages: ReadonlyArray<MessageWithParts>, root: string): Array<SessionUpdate> =>
  messages.flatMap(({ info, parts }) =>
    parts.flatMap((part): Array<SessionUpdate> => {
      if (part.type === "text" && part.synthetic !== true && part.text !== "")
        return [
          {
            sessionUpdate: info.role === "user" ? "user_message_chunk" : "agent_message_chunk",
            content: { type: "text", text: part.text },
            messageId: info.id
          }
        ]
      if (part.type === "reasoning" && part.text !== "")
        return [
          { sessionUpdate: "agent_thought_chunk", content: { type: "text", text: part.text }, messageId: info.id }
        ]
      if (part.type === "tool") {
        const plan = planOf(part)
        return [toolCallUpdate(part, root), ...(plan ? [plan] : [])]
      }
      return []
    })
  )
