/** Tool search: whether MCP tools are sent whole or found by words, and the word index that finds them. */

import type { AnyTool, ModelInfo, PluginCatalog, PluginConfig } from "@lathe/plugin"

/** The share of the context window MCP tool definitions may take before search takes over (config default). */
export const DEFAULT_TOOL_SEARCH_SHARE = 0.1
/** The estimate's rate: one token per 4 characters of JSON. */
export const CHARS_PER_TOKEN = 4

/** What the model receives for one tool (name, description, input schema), as JSON. */
export const toolDefinitionJson = (tool: AnyTool): string =>
  JSON.stringify({ name: tool.id, description: tool.description, input_schema: tool.jsonSchema() })

/** Estimated tokens of `tools`' definitions: their JSON's length / {@link CHARS_PER_TOKEN}, rounded up. */
export const estimateToolTokens = (tools: ReadonlyArray<AnyTool>): number =>
  Math.ceil(tools.reduce((sum, tool) => sum + toolDefinitionJson(tool).length, 0) / CHARS_PER_TOKEN)

/**
 * The model whose context window sets the budget. Plugins load before any model is resolved and the tool list is
 * fixed then, so this is the configured one: config `model` (which `LATHE_MODEL` sets), else the default Lathe picks
 * for the provider keys present (`catalog.defaultModel()`: Anthropic's, then OpenAI's, then another provider's),
 * as `catalog.model` knows it (config's `provider.<id>.models.<model>` overrides on top; an unknown model gets the
 * catalogue's small safe window). An agent or `--model` that picks another model is not seen.
 */
export const configuredModel = (
  config: Pick<PluginConfig, "model">,
  catalog: Pick<PluginCatalog, "model" | "defaultModel">
): ModelInfo => {
  const ref = config.model ?? catalog.defaultModel()
  const slash = ref?.indexOf("/") ?? -1
  const providerID = ref && slash > 0 ? ref.slice(0, slash) : "unknown"
  const modelID = ref && slash > 0 ? ref.slice(slash + 1) : "unknown"
  return catalog.model(providerID, modelID)
}

/** Whether tool search is on, and the figures it was decided from. */
export interface ToolSearchDecision {
  readonly search: boolean
  /** Estimated tokens of every MCP tool's definition. */
  readonly tokens: number
  /** The most tokens they may take: share × context window (Infinity when search is off in config). */
  readonly budget: number
  readonly model: ModelInfo
}

/**
 * Search is on when the MCP tools' definitions would take more than `mcp_tool_search` (default 0.1) of the
 * configured model's context window; `mcp_tool_search: false` turns it off, `0` turns it on for any tool.
 */
export const decideToolSearch = (
  tools: ReadonlyArray<AnyTool>,
  config: Pick<PluginConfig, "model" | "mcp_tool_search">,
  catalog: Pick<PluginCatalog, "model" | "defaultModel">
): ToolSearchDecision => {
  const model = configuredModel(config, catalog)
  const tokens = estimateToolTokens(tools)
  const share = config.mcp_tool_search ?? DEFAULT_TOOL_SEARCH_SHARE
  if (share === false) return { search: false, tokens, budget: Number.POSITIVE_INFINITY, model }
  const budget = Math.floor(share * model.limit.context)
  return { search: tools.length > 0 && tokens > budget, tokens, budget, model }
}

/** Lower-case words of a name or text: split at non-alphanumerics and camelCase humps. */
export const words = (text: string): Array<string> =>
  text
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word.length > 0)

/** Whether two words are the same up to a short ending (`invoice` / `invoices`, `archive` / `archived`). */
const alike = (a: string, b: string): boolean => {
  if (a === b) return true
  const [short, long] = a.length <= b.length ? [a, b] : [b, a]
  return short.length >= 4 && long.startsWith(short) && long.length - short.length <= 3
}

interface Indexed {
  readonly tool: AnyTool
  readonly name: ReadonlyArray<string>
  readonly description: ReadonlyArray<string>
}

/** One hit of {@link ToolIndex.search}. */
export interface ToolHit {
  readonly tool: AnyTool
  readonly score: number
}

/**
 * A word index over tools' names and descriptions. A query's words score 3 each when they match a word of the
 * name, 1 when they match one of the description (once per word); the exact tool name scores above everything.
 * Hits are ranked by score, then name.
 */
export class ToolIndex {
  private readonly entries: ReadonlyArray<Indexed>

  constructor(tools: ReadonlyArray<AnyTool>) {
    this.entries = tools.map((tool) => ({ tool, name: words(tool.id), description: words(tool.description) }))
  }

  /** The tool named `name`, if indexed. */
  get(name: string): AnyTool | undefined {
    return this.entries.find((entry) => entry.tool.id === name)?.tool
  }

  /** How many tools are indexed. */
  get size(): number {
    return this.entries.length
  }

  /** The best `limit` tools for `query` among those `keep` accepts; tools matching no word are left out. */
  search(query: string, limit: number, keep: (tool: AnyTool) => boolean = () => true): Array<ToolHit> {
    const wanted = [...new Set(words(query))]
    const exact = query.trim()
    const hits: Array<ToolHit> = []
    for (const entry of this.entries) {
      if (!keep(entry.tool)) continue
      let score = entry.tool.id === exact ? 1000 : 0
      for (const word of wanted) {
        if (entry.name.some((w) => alike(w, word))) score += 3
        else if (entry.description.some((w) => alike(w, word))) score += 1
      }
      if (score > 0) hits.push({ tool: entry.tool, score })
    }
    hits.sort((a, b) => b.score - a.score || (a.tool.id < b.tool.id ? -1 : a.tool.id > b.tool.id ? 1 : 0))
    return hits.slice(0, limit)
  }
}
