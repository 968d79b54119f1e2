/**
 * `@lathe/agents/plugin`: the agents plugin alone, the entry a host loads on every run. Unlike the package's main
 * entry it does not load the markdown parser (and `yaml`) until an agent file is found.
 */
import { definePlugin } from "@lathe/plugin"
import { builtinAgents } from "./builtin.js"
import { claudeModels } from "./compat.js"
import { loadMarkdownAgents } from "./discover.js"
import { createPlanTools } from "./plan-tools.js"
import { createTaskTool } from "./task.js"

/**
 * The plugin: returns the built-in agents, then the markdown agents, one definition per name (a file named like a
 * built-in replaces it), the `task` tool that runs the subagents, and
 * `plan_exit`/`plan_enter`, which hand the session between plan and build with the person's approval.
 * Project files load only in a trusted project; see `loadMarkdownAgents`.
 */
const agentsPlugin = definePlugin({
  name: "@lathe/agents",
  setup: async (ctx) => {
    const config = ctx.config
    const agents = new Map(builtinAgents.map((agent) => [agent.name, agent]))
    // Claude's model aliases go to the Anthropic provider the LLM service would use (config, else ANTHROPIC_API_KEY).
    const claudeModel = claudeModels(config.model, ctx.catalog)
    // A `model: sonnet` resolves against the model catalogue: load it before the first agent file is parsed.
    for (const { definition, path } of await loadMarkdownAgents({
      ...ctx,
      claudeModel,
      beforeParse: ctx.catalog.ready
    }))
      agents.set(definition.name, { ...definition, source: path })
    // The task tool lists the subagents it can start: these, plus subagents defined in lathe.json.
    const subagents = new Map<string, { name: string; description?: string }>()
    for (const agent of agents.values())
      if (!agent.hidden && agent.mode !== "primary")
        subagents.set(agent.name, {
          name: agent.name,
          ...(agent.description ? { description: agent.description } : {})
        })
    for (const [name, agent] of Object.entries(config.agent ?? {}))
      if (!agent.disable && (agent.mode === "subagent" || agent.mode === "all"))
        subagents.set(name, { name, ...(agent.description ? { description: agent.description } : {}) })
      else if (agent.disable) subagents.delete(name)
    // plan_exit and plan_enter hand the session between plan and build, when the person approves.
    return { agents: [...agents.values()], tools: [createTaskTool([...subagents.values()]), ...createPlanTools()] }
  }
})

export default agentsPlugin
