import { useEffect, useState } from "preact/hooks"
import { api } from "./api.js"
import { Markdown } from "./markdown.js"
import { formatCost, formatMs, type Message, type Part, type ToolPermission } from "./model.js"

type ToolPartOf = Extract<Part, { type: "tool" }>

const duration = (part: ToolPartOf): string => {
  const time = part.state.time
  return time?.end === undefined ? "" : formatMs(time.end - time.start)
}

/** What allowed (or refused) a call, in words: "rule bash "git *" allow · ~/.config/lathe/lathe.json". */
export const permissionText = (permission: ToolPermission): string => {
  const what =
    permission.by === "person"
      ? `you (${permission.reply === "always" ? "always" : permission.reply === "once" ? "once" : "rejected"})`
      : permission.by === "flag"
        ? "a flag of the run"
        : permission.by === "hook"
          ? "a plugin hook"
          : permission.by === "default"
            ? "a built-in default"
            : "a rule"
  return [what, permission.rule, permission.source].filter(Boolean).join(" · ")
}

/** Subagent sessions by the call that started them, as the event stream announced them. */
type Children = Readonly<Record<string, string>>

/** The child session of a `task` call: its tool's metadata once done, else the one the stream said it started. */
const childOf = (part: ToolPartOf, children: Children): string | undefined => {
  const id = part.state.metadata?.sessionID
  return typeof id === "string" ? id : children[part.callID]
}

/**
 * A subagent's session nested under the call that ran it: folded, and read from the API only when opened (again
 * whenever the parent redraws while it is open, so a running subagent stays live).
 */
const Subagent = (props: { readonly id: string; readonly tick: unknown; readonly subagents: Children }) => {
  const { id, tick } = props
  const [open, setOpen] = useState(false)
  const [messages, setMessages] = useState<ReadonlyArray<Message> | undefined>()
  const [failed, setFailed] = useState("")
  useEffect(() => {
    if (!open) return
    let live = true
    api<ReadonlyArray<Message>>(`/sessions/${encodeURIComponent(id)}/messages`)
      .then((list) => live && setMessages(list))
      .catch((error: unknown) => live && setFailed(String((error as Error).message ?? error)))
    return () => {
      live = false
    }
  }, [open, id, tick])
  return (
    <details class="subagent" data-child={id} onToggle={(event) => setOpen(event.currentTarget.open)}>
      <summary>
        Subagent session <a href={`#/s/${encodeURIComponent(id)}`}>open it alone</a>
      </summary>
      {failed ? (
        <p class="error">{failed}</p>
      ) : messages === undefined ? (
        open ? (
          <p aria-live="polite">Loading…</p>
        ) : null
      ) : (
        <Timeline messages={messages} tick={tick} subagents={props.subagents} />
      )}
    </details>
  )
}

/** One part of a message in the timeline; `tick` changes whenever the page reloads its data. */
const PartView = (props: { readonly part: Part; readonly tick: unknown; readonly subagents: Children }) => {
  const { part, tick, subagents } = props
  switch (part.type) {
    case "text":
      return part.synthetic ? null : <Markdown text={part.text} />
    case "reasoning":
      return (
        <details class="reasoning">
          <summary>Reasoning</summary>
          <Markdown text={part.text} />
        </details>
      )
    case "tool": {
      const child = part.tool === "task" ? childOf(part, subagents) : undefined
      const permission = part.state.permission
      return (
        <details class={`tool ${part.state.status}`} open data-tool={part.tool}>
          <summary>
            <span class="tool-name">{part.tool}</span> {part.state.title ?? ""}{" "}
            <span class="status">{part.state.status}</span> <span class="duration">{duration(part)}</span>
            {permission ? (
              <span class="permission" data-by={permission.by}>
                {part.state.status === "error" ? "decided by " : "allowed by "}
                {permissionText(permission)}
              </span>
            ) : null}
          </summary>
          <h4>Input</h4>
          <pre class="tool-input">{JSON.stringify(part.state.input, null, 2)}</pre>
          {part.state.output !== undefined ? (
            <>
              <h4>Output</h4>
              <pre class="tool-output">{part.state.output}</pre>
            </>
          ) : null}
          {part.state.error !== undefined ? <pre class="tool-output error">{part.state.error}</pre> : null}
          {child ? <Subagent id={child} tick={tick} subagents={subagents} /> : null}
        </details>
      )
    }
    case "step-finish":
      return (
        <p class="step-end">
          step: {part.tokens.input} in · {part.tokens.cache.read} cached · {part.tokens.output} out
          {part.tokens.reasoning ? ` · ${part.tokens.reasoning} reasoning` : ""} · {formatCost(part.cost)}
        </p>
      )
    case "patch":
      return <p class="marker">changed {part.files.join(", ")}</p>
    case "subtask":
      return (
        <div class="marker subtask">
          subagent {part.agent}: {part.description}
          {part.childSessionID ? <Subagent id={part.childSessionID} tick={tick} subagents={subagents} /> : null}
        </div>
      )
    case "compaction":
      return <p class="marker compaction">— compacted here{part.auto ? " (automatically)" : ""} —</p>
    case "retry":
      return (
        <p class="marker retry">
          retry {part.attempt}: {part.message}
        </p>
      )
    default:
      return null
  }
}

/**
 * A session's messages in order, each with its parts. A child session named both by a task call and by a subtask
 * part is nested once, under the call.
 */
export const Timeline = (props: {
  readonly messages: ReadonlyArray<Message>
  readonly tick: unknown
  readonly subagents?: Children
}) => {
  const { messages, tick } = props
  // A subtask part naming its call tells the call's child as soon as it starts (the stream may have been missed).
  const recorded: Record<string, string> = {}
  for (const m of messages)
    for (const part of m.parts)
      if (part.type === "subtask" && part.callID && part.childSessionID) recorded[part.callID] = part.childSessionID
  const subagents = { ...recorded, ...props.subagents }
  const underCalls = new Set<string>()
  for (const m of messages)
    for (const part of m.parts) {
      const child = part.type === "tool" && part.tool === "task" ? childOf(part, subagents) : undefined
      if (child) underCalls.add(child)
    }
  return (
    <ol class="timeline">
      {messages.map((m) => (
        <li key={m.info.id} class={`message ${m.info.role}`} data-message={m.info.id}>
          <h3>
            {m.info.role === "user"
              ? "Prompt"
              : `${m.info.agent ?? "agent"}${m.info.model ? ` · ${m.info.model.modelID}` : ""}${m.info.summary ? " · compaction summary" : ""}`}{" "}
            <time dateTime={new Date(m.info.time.created).toISOString()}>
              {new Date(m.info.time.created).toLocaleTimeString()}
            </time>
          </h3>
          {m.parts.map((part) =>
            part.type === "subtask" && part.childSessionID && underCalls.has(part.childSessionID) ? null : (
              <PartView key={part.id} part={part} tick={tick} subagents={subagents} />
            )
          )}
          {m.info.error ? (
            <p class="error">
              {m.info.error.name}
              {m.info.error.message ? `: ${m.info.error.message}` : ""}
            </p>
          ) : null}
        </li>
      ))}
    </ol>
  )
}
