import { z } from "zod"
import { type PermissionConfig, permissionRules, type Ruleset } from "./permission.js"
import { parseOnce } from "./zod-once.js"

/** Where an agent can be chosen: as the main agent, as a subagent of the task tool, or both. */
export type AgentMode = "primary" | "subagent" | "all"

/** An agent as Lathe runs it: normalised, with its permission ruleset expanded. */
export interface AgentInfo {
  readonly name: string
  readonly description?: string
  readonly mode: AgentMode
  /** Hidden agents (compaction, title) are never offered to the person or the task tool. */
  readonly hidden: boolean
  /** The agent's own system prompt, added after the provider prompt and the rules files. */
  readonly prompt?: string
  /** The agent's rules, merged after the defaults and before the user's config. */
  readonly permission: Ruleset
  /** `provider/model`; the session's model when absent. */
  readonly model?: string
  readonly temperature?: number
  readonly topP?: number
  /** A hard cap on model calls per turn, overriding config `max_steps`; 0 = no cap. */
  readonly maxSteps?: number
  /** Tools switched on (`true`) or off (`false`) by id; wildcards allowed (`"mcp_*": false`). */
  readonly tools: Readonly<Record<string, boolean>>
  /** Where the definition came from: "builtin", a plugin name, or a file path. */
  readonly source: string
}

/** An agent as an author writes it (in a plugin, in config, or in markdown frontmatter). */
export const AgentDefinition = z.strictObject({
  name: z.string().regex(/^[a-z][a-z0-9_-]*$/, "use lowercase letters, digits, '-' and '_', starting with a letter"),
  description: z.string().optional(),
  mode: z.enum(["primary", "subagent", "all"]).optional(),
  hidden: z.boolean().optional(),
  prompt: z.string().optional(),
  permission: z.custom<PermissionConfig>().optional(),
  model: z.string().includes("/", { message: 'use "provider/model"' }).optional(),
  temperature: z.number().min(0).max(2).optional(),
  topP: z.number().min(0).max(1).optional(),
  maxSteps: z.number().int().min(0).optional(),
  tools: z.record(z.string(), z.boolean()).optional(),
  /** Where the definition came from (a file path), shown by `lathe agents`; defaults to the plugin's name. */
  source: z.string().optional()
})
/** An agent as an author writes it. */
export type AgentDefinition = z.input<typeof AgentDefinition>

/**
 * Validates and normalises an agent definition. Throws an Error that names the agent and the bad field, so
 * plugin authors see their mistake at load time.
 */
export const defineAgent = (definition: AgentDefinition, source = "plugin"): AgentInfo => {
  const parsed = AgentDefinition.safeParse(definition, parseOnce)
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => `${issue.path.join(".") || "(root)"}: ${issue.message}`)
    throw new Error(`Invalid agent "${String(definition.name)}" from ${source}: ${issues.join("; ")}`)
  }
  const d = parsed.data
  return {
    name: d.name,
    mode: d.mode ?? "all",
    hidden: d.hidden ?? false,
    permission: permissionRules(d.permission, `agent ${d.name}`),
    tools: d.tools ?? {},
    source: d.source ?? source,
    ...(d.description !== undefined ? { description: d.description } : {}),
    ...(d.prompt !== undefined ? { prompt: d.prompt } : {}),
    ...(d.model !== undefined ? { model: d.model } : {}),
    ...(d.temperature !== undefined ? { temperature: d.temperature } : {}),
    ...(d.topP !== undefined ? { topP: d.topP } : {}),
    ...(d.maxSteps !== undefined ? { maxSteps: d.maxSteps } : {})
  }
}
