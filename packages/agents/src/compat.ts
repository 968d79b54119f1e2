import type { PermissionConfig, PluginCatalog } from "@lathe/plugin"

/*
 * Claude Code's agent-file fields, turned into Lathe's: its model aliases and its `tools` list (tool names, and
 * `Tool(pattern)` entries that allow one tool only for some inputs). OpenCode's fields are Lathe's own already.
 */

/** Claude Code's model aliases. */
export const CLAUDE_MODEL_ALIASES: ReadonlyArray<string> = ["sonnet", "opus", "haiku"]

/**
 * Maps a Claude model name, an alias (`sonnet`) or a bare id (`claude-sonnet-4-5`), to `provider/model` on the
 * configured Anthropic-family provider; `undefined` when there is none.
 */
export type ClaudeModelResolver = (name: string) => string | undefined

/**
 * The resolver for the configured default model (`provider/model`) and the host's catalogue (`ctx.catalog`). The
 * Anthropic-family provider is the configured model's when that provider has type `anthropic`, else the first such
 * provider of the run (config's first, then `anthropic` when its key is in the environment or stored, as the LLM
 * service does). An alias becomes that provider's configured model whose id contains it (the configured default
 * model first), else the newest model of that family in Lathe's catalogue.
 */
export const claudeModels =
  (defaultModel: string | undefined, catalog: Pick<PluginCatalog, "providers" | "newestModel">): ClaudeModelResolver =>
  (name) => {
    const providers = catalog.providers().filter((provider) => provider.type === "anthropic")
    const [providerID, modelID] = splitModel(defaultModel)
    const provider = providers.find((p) => p.id === providerID) ?? providers[0]
    if (!provider) return undefined
    if (!CLAUDE_MODEL_ALIASES.includes(name)) return `${provider.id}/${name}`
    const own = [...(provider.id === providerID && modelID ? [modelID] : []), ...provider.models]
    const model = own.find((id) => id.includes(name)) ?? catalog.newestModel("anthropic", `claude-${name}`) ?? name
    return `${provider.id}/${model}`
  }

const splitModel = (model: string | undefined): [string | undefined, string | undefined] => {
  const slash = model?.indexOf("/") ?? -1
  return model && slash > 0 ? [model.slice(0, slash), model.slice(slash + 1)] : [undefined, undefined]
}

/** Claude Code's tools and the Lathe tools that do their work (keys lowercase). */
const CLAUDE_TOOLS: Readonly<Record<string, ReadonlyArray<string>>> = {
  read: ["read"],
  write: ["write"],
  edit: ["edit"],
  multiedit: ["multiedit"],
  glob: ["glob"],
  grep: ["grep"],
  ls: ["list"],
  bash: ["bash"],
  webfetch: ["webfetch"],
  websearch: ["websearch"],
  todowrite: ["todowrite", "todoread"],
  task: ["task"],
  askuserquestion: ["question"],
  skill: ["skill"]
}

/** Claude Code tools with no Lathe counterpart: named in a notice, never offered. */
const NO_COUNTERPART: ReadonlySet<string> = new Set([
  "notebookedit",
  "notebookread",
  "bashoutput",
  "killshell",
  "killbash",
  "slashcommand",
  "exitplanmode"
])

/** The permission a tool's calls are checked under (as the loop's `toolPermission`). */
const permissionOf = (tool: string): string => (["write", "edit", "multiedit"].includes(tool) ? "edit" : tool)

/** A `Tool(pattern)` entry's pattern as the patterns of Lathe rules, or `undefined` when it cannot be translated. */
const rulePatterns = (tool: string, pattern: string): ReadonlyArray<string> | undefined => {
  if (tool === "bash") return [pattern.replace(/:\*$/, " *")]
  if (["read", "write", "edit", "multiedit"].includes(tool))
    // Paths relative to the project, as Lathe's file rules are; `*` already crosses folders.
    return [pattern.replace(/^\.\//, "").replace(/\*+/g, "*")]
  if (tool === "webfetch" && pattern.startsWith("domain:")) {
    const host = pattern.slice("domain:".length)
    return [`https://${host}/*`, `http://${host}/*`]
  }
  return undefined
}

/** Claude Code's `tools` turned into Lathe's: the tools offered, the rules that narrow them, and what was dropped. */
export interface ToolsAllowList {
  /** `"*": false`, then each offered tool `true`. */
  readonly tools: Record<string, boolean>
  /** For tools listed only with patterns: everything else they ask denied, the patterns allowed. */
  readonly permission: Exclude<PermissionConfig, string>
  readonly notices: ReadonlyArray<string>
}

/**
 * Reads Claude Code's `tools` (`Read, Grep, Bash(git diff:*)`, or a YAML list of the same): only the tools named are
 * offered. A tool named only with patterns is offered for those inputs alone; a pattern Lathe cannot translate
 * leaves its tool off. MCP tools (`mcp__server__tool`, `mcp__server`) become Lathe's `server_tool` names; any other
 * name is taken as a Lathe tool id.
 */
export const claudeTools = (entries: ReadonlyArray<string>): ToolsAllowList => {
  const tools: Record<string, boolean> = { "*": false }
  const patterns = new Map<string, Array<string>>()
  const whole = new Set<string>()
  const notices: Array<string> = []
  for (const raw of entries.map((entry) => entry.trim()).filter((entry) => entry !== "")) {
    const match = /^([^()]+?)\s*\((.*)\)$/.exec(raw)
    const name = match?.[1] ?? raw
    const key = name.toLowerCase()
    if (NO_COUNTERPART.has(key)) {
      notices.push(`tools: Lathe has no ${name} tool; it is left out`)
      continue
    }
    const mcp = /^mcp__(.+?)(?:__(.+))?$/.exec(name)
    const ids = CLAUDE_TOOLS[key] ?? (mcp ? [mcp[2] ? `${mcp[1]}_${mcp[2]}` : `${mcp[1]}_*`] : [name])
    const pattern = match?.[2]?.trim()
    if (pattern === undefined || pattern === "" || pattern === "*") {
      for (const id of ids) {
        tools[id] = true
        whole.add(permissionOf(id))
      }
      continue
    }
    const translated = ids.length === 1 && ids[0] ? rulePatterns(ids[0], pattern) : undefined
    if (!translated || !ids[0]) {
      notices.push(`tools: ${raw} cannot be narrowed that way in Lathe; ${name} is left out (use permission rules)`)
      continue
    }
    tools[ids[0]] = true
    const permission = permissionOf(ids[0])
    patterns.set(permission, [...(patterns.get(permission) ?? []), ...translated])
  }
  const permission: Record<string, Record<string, "allow" | "deny">> = {}
  for (const [name, list] of patterns)
    if (!whole.has(name)) permission[name] = { "*": "deny", ...Object.fromEntries(list.map((p) => [p, "allow"])) }
  return { tools, permission, notices }
}

/**
 * The agent's rules: those `tools` patterns imply, then the file's own `permission` (later, so it wins; a single
 * action stands for `"*"` of every permission).
 */
export const mergePermission = (
  implied: Exclude<PermissionConfig, string>,
  own: PermissionConfig | undefined
): PermissionConfig | undefined => {
  if (own === undefined) return Object.keys(implied).length > 0 ? implied : undefined
  if (Object.keys(implied).length === 0) return own
  if (typeof own === "string") return { ...implied, "*": own }
  const merged: Record<string, Exclude<PermissionConfig, string>[string]> = { ...implied }
  for (const [name, value] of Object.entries(own)) {
    const before = merged[name]
    merged[name] =
      typeof before === "object" ? { ...before, ...(typeof value === "string" ? { "*": value } : value) } : value
  }
  return merged
}
