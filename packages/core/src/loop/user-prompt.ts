import type { AgentInfo } from "@lathe/plugin"
import type { AssistantMessage, MessageWithParts, PromptPart, Session, UserMessage } from "@lathe/plugin/schema"
import { emptyTokens, type Part } from "@lathe/plugin/schema"
import type { ModelInfo } from "../catalog/model-info.js"
import { addTokens } from "../llm/usage.js"
import { ascendingId } from "../schema/id.js"
import type { SubagentRequest, SubagentResult } from "./subagents.js"

/** The stored parts of a prompt, in the order given; then an `agent` part for the subagent the person addressed. */
export const promptParts = (
  sessionID: string,
  messageID: string,
  parts: ReadonlyArray<PromptPart>,
  mention?: string
): ReadonlyArray<Part> => [
  ...parts.map(
    (part): Part =>
      part.type === "text"
        ? {
            id: ascendingId("part"),
            sessionID,
            messageID,
            type: "text",
            text: part.text,
            ...(part.synthetic ? { synthetic: true } : {})
          }
        : {
            id: ascendingId("part"),
            sessionID,
            messageID,
            type: "file",
            mime: part.mime,
            url: part.url,
            ...(part.filename ? { filename: part.filename } : {})
          }
  ),
  ...(mention === undefined
    ? []
    : [{ id: ascendingId("part"), sessionID, messageID, type: "agent" as const, name: mention } satisfies Part])
]

/** A user message for a prompt answered by `agent` on `model`. */
export const userMessage = (
  sessionID: string,
  agent: AgentInfo,
  model: ModelInfo,
  created: number,
  id?: string
): UserMessage => ({
  id: id ?? ascendingId("message"),
  sessionID,
  role: "user",
  time: { created },
  agent: agent.name,
  model: { providerID: model.providerID, modelID: model.modelID }
})

/** The empty assistant message of a new step answering `user`. */
export const assistantMessage = (
  user: UserMessage,
  agent: AgentInfo,
  model: ModelInfo,
  path: AssistantMessage["path"],
  created: number
): AssistantMessage => ({
  id: ascendingId("message"),
  sessionID: user.sessionID,
  role: "assistant",
  parentID: user.id,
  agent: agent.name,
  model: { providerID: model.providerID, modelID: model.modelID },
  path,
  time: { created },
  tokens: emptyTokens(),
  cost: 0
})

/** The text parts of a stored prompt, as prompt parts (a prompt stored earlier is answered as it is). */
export const storedPromptParts = (message: MessageWithParts): ReadonlyArray<PromptPart> =>
  message.parts.flatMap((part) => (part.type === "text" ? [{ type: "text" as const, text: part.text }] : []))

/** A new child session for a subagent, in the parent's project, directory and work tree. */
export const childSession = (
  request: SubagentRequest,
  place: { readonly projectID: string; readonly directory: string; readonly root: string },
  now: number
): Session => ({
  id: ascendingId("session"),
  projectID: place.projectID,
  directory: place.directory,
  tree: place.root,
  parentID: request.parentSessionID,
  title: `${request.description} (@${request.agent} subagent)`,
  agent: request.agent,
  time: { created: now, updated: now }
})

/** What one run of a subagent did, from the messages it added: its last answer, its calls, tokens and cost. */
export const childResult = (sessionID: string, fresh: ReadonlyArray<MessageWithParts>): SubagentResult => {
  const answers = fresh.flatMap((m) => (m.info.role === "assistant" ? [m] : []))
  const last = answers.findLast((m) => m.parts.some((p) => p.type === "text" && !p.synthetic && p.text.trim()))
  let tokens = emptyTokens()
  let cost = 0
  for (const answer of answers) {
    if (answer.info.role !== "assistant") continue
    tokens = addTokens(tokens, answer.info.tokens)
    cost += answer.info.cost
  }
  return {
    sessionID,
    text: last?.parts.flatMap((p) => (p.type === "text" && !p.synthetic ? [p.text] : [])).join("\n") ?? "",
    calls: fresh.flatMap((m) =>
      m.parts.flatMap((p) =>
        p.type === "tool" && (p.state.status === "completed" || p.state.status === "error")
          ? [
              {
                tool: p.tool,
                title: p.state.status === "completed" ? p.state.title : p.state.error,
                status: p.state.status
              }
            ]
          : []
      )
    ),
    tokens,
    cost
  }
}
