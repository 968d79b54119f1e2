import type { AgentInfo, AgentMode, Ruleset } from "@lathe/plugin"
import { compilePattern } from "@lathe/plugin/host"

/** The agents core itself needs: a default `build` agent and the hidden `compaction` and `title` agents. */
export const coreAgents: ReadonlyArray<AgentInfo> = [
  {
    name: "build",
    description: "The default agent: reads, edits and runs code to get the task done.",
    mode: "primary",
    hidden: false,
    permission: [],
    tools: {},
    source: "builtin"
  },
  {
    name: "compaction",
    description: "Summarises history when the context fills up.",
    mode: "primary",
    hidden: true,
    permission: [{ permission: "*", pattern: "*", action: "deny", source: "builtin compaction agent" }],
    tools: { "*": false },
    source: "builtin"
  },
  {
    name: "title",
    description: "Names a session from its first message.",
    mode: "primary",
    hidden: true,
    permission: [{ permission: "*", pattern: "*", action: "deny", source: "builtin title agent" }],
    tools: { "*": false },
    source: "builtin"
  }
]

/** An agent as config adjusts or defines it (the merged `agent` section of the config). */
export interface AgentOverride {
  readonly description?: string | undefined
  readonly mode?: AgentMode | undefined
  readonly hidden?: boolean | undefined
  readonly disable?: boolean | undefined
  readonly prompt?: string | undefined
  readonly model?: string | undefined
  readonly temperature?: number | undefined
  readonly top_p?: number | undefined
  readonly max_steps?: number | undefined
  readonly tools?: Readonly<Record<string, boolean>> | undefined
  readonly permission: Ruleset
}

/**
 * Every agent by name: core's, then plugins' (a later definition replaces an earlier one), then config's, which
 * adjust an existing agent field by field (permission rules are appended) or define a new one; `disable` removes it.
 */
export const resolveAgents = (
  pluginAgents: ReadonlyArray<AgentInfo>,
  config: Readonly<Record<string, AgentOverride>>
): Map<string, AgentInfo> => {
  const agents = new Map<string, AgentInfo>()
  for (const agent of [...coreAgents, ...pluginAgents]) agents.set(agent.name, agent)
  for (const [name, override] of Object.entries(config)) {
    if (override.disable) {
      agents.delete(name)
      continue
    }
    const base: AgentInfo = agents.get(name) ?? {
      name,
      mode: "all",
      hidden: false,
      permission: [],
      tools: {},
      source: "config"
    }
    agents.set(name, {
      ...base,
      ...(override.description !== undefined ? { description: override.description } : {}),
      ...(override.mode !== undefined ? { mode: override.mode } : {}),
      ...(override.hidden !== undefined ? { hidden: override.hidden } : {}),
      ...(override.prompt !== undefined ? { prompt: override.prompt } : {}),
      ...(override.model !== undefined ? { model: override.model } : {}),
      ...(override.temperature !== undefined ? { temperature: override.temperature } : {}),
      ...(override.top_p !== undefined ? { topP: override.top_p } : {}),
      ...(override.max_steps !== undefined ? { maxSteps: override.max_steps } : {}),
      tools: { ...base.tools, ...override.tools },
      permission: [...base.permission, ...override.permission]
    })
  }
  return agents
}

/** Whether an agent offers a tool: its `tools` map, wildcards allowed, the last matching key wins; default on. */
export const agentAllowsTool = (agent: AgentInfo, toolID: string): boolean => {
  let allowed = true
  for (const [pattern, on] of Object.entries(agent.tools)) if (compilePattern(pattern)(toolID)) allowed = on
  return allowed
}
