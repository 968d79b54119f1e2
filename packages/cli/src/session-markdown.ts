import { patchLine, subtaskStatus } from "./part-lines.js"
import { duration, totalsLine } from "./render.js"
import type { DocumentPart, SessionDocument } from "./session-document.js"
import { clockTime, decisionLine, errorLines, localTime, sessionTotals, stepLine, toolStatus } from "./session-text.js"
import { plainText } from "./terminal-text.js"

/** A fenced block that no backtick run inside `text` can close early. */
const fenced = (text: string, lang = ""): string => {
  const longest = Math.max(0, ...[...text.matchAll(/`+/g)].map((m) => m[0].length))
  const fence = "`".repeat(Math.max(3, longest + 1))
  return `${fence}${lang}\n${text.replace(/\n+$/, "")}\n${fence}`
}

/** Text inside `<details>`, folded in viewers that render HTML and readable where they do not. */
const details = (summary: string, body: string): string =>
  `<details><summary>${summary.replace(/[<>&]/g, "")}</summary>\n\n${body}\n\n</details>`

const heading = (depth: number, extra: number) => "#".repeat(Math.min(6, depth + extra))

/**
 * Renders a session document as a Markdown transcript: a header with its totals, then every message in order with
 * reasoning and tool outputs folded, each call's input, status, duration and permission decisions, retries, step
 * usage, compaction points, and subagent sessions quoted under the call that started them. Nothing is cut.
 */
export const renderMarkdown = (doc: SessionDocument): string => `${blocks(doc, 0).join("\n\n")}\n`

const blocks = (doc: SessionDocument, depth: number): Array<string> => {
  const { session } = doc
  const out: Array<string> = [
    `${heading(depth, 1)} ${plainText(session.title.replace(/\s+/g, " "))}`,
    [
      `- session: \`${session.id}\`${session.parentID ? ` (subagent of \`${session.parentID}\`)` : ""}`,
      `- directory: \`${plainText(session.directory)}\``,
      ...(session.agent ? [`- agent: ${session.agent}`] : []),
      `- created ${localTime(session.time.created)}, updated ${localTime(session.time.updated)}`,
      `- ${totalsLine(sessionTotals(doc))}`,
      ...(session.summary ? [`- summary: ${plainText(session.summary.replace(/\s+/g, " "))}`] : []),
      ...(session.revert
        ? [`- undone from message \`${session.revert.messageID}\` on (\`lathe redo\` brings it back)`]
        : [])
    ].join("\n")
  ]
  for (const { info, parts } of doc.messages) {
    const compaction = parts.find((p) => p.part.type === "compaction")?.part
    if (compaction?.type === "compaction") {
      out.push(
        `---\n\n*Compaction (${compaction.auto ? "automatic" : "requested"}) at ${clockTime(info.time.created)}: ` +
          "the model sees a summary of the history before this point.*"
      )
      continue
    }
    const model = `${info.model.providerID}/${info.model.modelID}`
    const when = clockTime(info.time.created)
    if (info.role === "user") out.push(`${heading(depth, 2)} You · ${when}\n\n*${info.agent} · ${model}*`)
    else {
      const took = info.time.completed === undefined ? "unfinished" : duration(info.time.completed - info.time.created)
      out.push(
        `${heading(depth, 2)} ${info.summary ? "Summary by " : ""}${info.agent} · ${when} · ${took}\n\n*${model}*`
      )
    }
    for (const entry of parts) out.push(...partBlocks(entry, depth))
    if (info.role === "assistant" && info.error) {
      const [first = "", ...rest] = errorLines(info.error).map(plainText)
      out.push(`**Error** ${first}`, ...(rest.length > 0 ? [fenced(rest.join("\n"))] : []))
    }
  }
  for (const child of doc.subagents) out.push(quote(["Subagent session no call names:", ...blocks(child, depth + 1)]))
  return out
}

const quote = (parts: ReadonlyArray<string>): string =>
  parts
    .join("\n\n")
    .split("\n")
    .map((line) => (line === "" ? ">" : `> ${line}`))
    .join("\n")

const partBlocks = ({ part, decisions, subagent }: DocumentPart, depth: number): Array<string> => {
  const nested = subagent ? [quote(blocks(subagent, depth + 1))] : []
  switch (part.type) {
    case "text":
      return part.synthetic
        ? [details(`Context Lathe added (${part.text.length} characters)`, fenced(plainText(part.text)))]
        : [plainText(part.text)]
    case "reasoning":
      return [details(`Reasoning (${part.text.length} characters)`, plainText(part.text))]
    case "tool": {
      const { mark, word } = toolStatus(part)
      const state = part.state
      const title = state.status === "completed" ? ` ${plainText(state.title)}` : ""
      const took =
        state.status === "completed" || state.status === "error"
          ? ` · ${duration(state.time.end - state.time.start)}`
          : ""
      const result =
        state.status === "completed"
          ? [details("Output", fenced(plainText(state.output)))]
          : state.status === "error"
            ? [`Error:\n\n${fenced(plainText(state.error))}`]
            : []
      return [
        `**${mark} ${part.tool}**${title} · ${word}${took}`,
        fenced(plainText(JSON.stringify(state.input, null, 2) ?? ""), "json"),
        ...(decisions && decisions.length > 0
          ? [decisions.map((entry) => `- permission: ${plainText(decisionLine(entry))}`).join("\n")]
          : []),
        ...result,
        ...nested
      ]
    }
    case "subtask":
      return [`→ **@${part.agent}**: ${plainText(part.description)}${subtaskStatus(part)}`, ...nested]
    case "retry":
      return [`> ↻ attempt ${part.attempt} failed at ${clockTime(part.time.created)}: ${plainText(part.message)}`]
    case "step-finish":
      return [`*${stepLine(part)}*`]
    case "patch":
      return [patchLine(part, (f) => `\`${plainText(f)}\``)]
    case "file":
      return [`📎 ${plainText(part.filename ?? part.url.slice(0, 80))} (${part.mime})`]
    case "agent":
      return [`@${part.name}`]
    default:
      return []
  }
}
