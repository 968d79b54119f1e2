import { type AgentInfo, type AnyTool, evaluate, type Ruleset } from "@lathe/plugin"
import { compilePattern } from "@lathe/plugin/host"
import { agentAllowsTool } from "../plugin-host/agent.js"

/** The permission that offers or withholds a tool: `edit` for the tools that edit files (trait `edits`), else its id. */
export const toolPermission = (tool: AnyTool): string => (tool.edits ? "edit" : tool.id)

/**
 * Rules appended to a subagent's turn: the tools a subagent may not use (trait `subagents: false`: the one that starts
 * subagents, so no recursion, and the todo tools, since the caller plans) are denied.
 */
export const subagentRules = (tools: ReadonlyArray<AnyTool>): Ruleset =>
  tools.flatMap((tool) =>
    tool.subagents
      ? []
      : [{ permission: toolPermission(tool), pattern: "*", action: "deny" as const, source: "subagent (no recursion)" }]
  )

/**
 * The tools an agent is offered: switched on for it, not denied outright (`*` → deny as the last word), and, for a
 * subagent, offered to its caller too (`callerTools`, the caller's own offer): a subagent never gets back a tool an
 * agent above it was not offered, so along a chain of subagents the offer only shrinks.
 */
export const offeredTools = (
  tools: ReadonlyArray<AnyTool>,
  agent: AgentInfo,
  ruleset: Ruleset,
  callerTools?: ReadonlyArray<string>
): Record<string, AnyTool> => {
  const offered: Record<string, AnyTool> = {}
  const cap = callerTools === undefined ? undefined : new Set(callerTools)
  for (const tool of tools) {
    if (cap !== undefined && !cap.has(tool.id)) continue
    if (!agentAllowsTool(agent, tool.id)) continue
    const permission = toolPermission(tool)
    const last = ruleset.findLast((rule) => compilePattern(rule.permission)(permission))
    if (last && last.pattern === "*" && last.action === "deny") continue
    offered[tool.id] = tool
  }
  return offered
}

/**
 * The tools of a turn, decided again only when a plugin changed its tools (an MCP server that connected while the turn
 * ran): its tools are offered from the next step, within `callerTools` for a subagent. Returns the offer for the
 * plugins' tools as they are now.
 */
export const turnTools = (agent: AgentInfo, ruleset: Ruleset, callerTools?: ReadonlyArray<string>) => {
  let source: ReadonlyArray<AnyTool> | undefined
  let offered: Record<string, AnyTool> = {}
  return (current: ReadonlyArray<AnyTool>): Record<string, AnyTool> => {
    const seen = source
    if (seen === undefined || current.length !== seen.length || current.some((tool, index) => tool !== seen[index])) {
      source = current
      offered = offeredTools(current, agent, ruleset, callerTools)
    }
    return offered
  }
}

/**
 * Whether a step may use the model provider's own web search: the agent has `websearch` switched on and every ruleset
 * (the step's, and for a subagent each caller's) allows `websearch` outright. The provider runs those searches without
 * asking, so an ask (the default) keeps it off and leaves search to Lathe's own `websearch` tool, which asks each call.
 */
export const nativeSearchAllowed = (
  agent: AgentInfo,
  ruleset: Ruleset,
  constraints: ReadonlyArray<Ruleset> = []
): boolean =>
  agentAllowsTool(agent, "websearch") &&
  [ruleset, ...constraints].every((rules) => evaluate("websearch", "*", rules).action === "allow")
