/** The `mcp_search` and `mcp_call` tools offered instead of every MCP tool when their definitions are too large. */
import {
  type AnyTool,
  evaluate,
  type MessageWithParts,
  type PluginContext,
  type Ruleset,
  Tool,
  ToolExecutionError,
  type ToolRunContext
} from "@lathe/plugin"
import { Effect } from "effect"
import { z } from "zod"
import { decideToolSearch, ToolIndex } from "./search.js"

/** The search tool's name. */
export const MCP_SEARCH = "mcp_search"
/** The generic call tool's name. */
export const MCP_CALL = "mcp_call"

const SearchArgs = z.object({
  query: z.string().min(1).describe('Words naming what the tool does or works on, e.g. "archive invoice".'),
  limit: z.number().int().min(1).max(20).optional().describe("How many tools to return (default 5, at most 20).")
})

const CallArgs = z.object({
  tool: z.string().min(1).describe(`The tool's name exactly as ${MCP_SEARCH} gave it.`),
  arguments: z
    .record(z.string(), z.unknown())
    .optional()
    .describe("The tool's arguments, following the input schema the search showed (default {}).")
})

/** Options of {@link createSearchTools}. */
export interface SearchToolsOptions {
  /**
   * The names an earlier `mcp_search` of the session found, for sessions resumed after a restart (the in-memory
   * record is per process). Default: none.
   */
  readonly recall?: (sessionID: string) => Promise<ReadonlyArray<string>>
}

/** What {@link createSearchTools} returns: the two tools, and a hook input that keeps each session's ruleset. */
export interface SearchTools {
  readonly tools: ReadonlyArray<AnyTool>
  /** Records the step's ruleset so searches leave out tools a rule denies (feed it the `system.transform` input). */
  readonly observe: (input: { readonly sessionID: string; readonly permission: Ruleset }) => void
}

/** The names `mcp_search` found in a session's history (its completed calls' `metadata.tools`). */
export const foundInHistory = (messages: ReadonlyArray<MessageWithParts>): Array<string> =>
  messages.flatMap((message) =>
    message.parts.flatMap((part) => {
      if (part.type !== "tool" || part.tool !== MCP_SEARCH || part.state.status !== "completed") return []
      const tools = part.state.metadata.tools
      return Array.isArray(tools) ? tools.filter((name): name is string => typeof name === "string") : []
    })
  )

/**
 * `mcp_search` (words → the best matching MCP tools with their input schemas) and `mcp_call` (`{ tool, arguments }`
 * runs a tool a search of the same session found). The plugin API fixes the tool list at load, so found tools are
 * reached through `mcp_call` rather than offered themselves. `mcp_call` runs the MCP tool itself: it asks the
 * permission named after the MCP tool (`github_create_issue`, never `mcp_call`), and its result, errors and
 * truncation are the tool's own.
 */
export const createSearchTools = (mcpTools: ReadonlyArray<AnyTool>, options: SearchToolsOptions = {}): SearchTools => {
  const index = new ToolIndex(mcpTools)
  const found = new Map<string, Set<string>>()
  const rulesets = new Map<string, Ruleset>()
  const allowed = (sessionID: string) => (tool: AnyTool) => {
    const ruleset = rulesets.get(sessionID)
    return ruleset === undefined || evaluate(tool.id, "*", ruleset).action !== "deny"
  }

  const search = Tool.define(MCP_SEARCH, {
    description:
      `Finds MCP tools by words. ${index.size} MCP tools are available but not listed, to save context: search for ` +
      `what you need (e.g. "create issue", "query database"), read the input schema of the tool you pick, then call ` +
      `it with ${MCP_CALL} from your next step.`,
    parameters: SearchArgs,
    mutates: false,
    execute: (args, ctx) => {
      const hits = index.search(args.query, args.limit ?? 5, allowed(ctx.sessionID))
      if (hits.length === 0)
        return {
          title: `no MCP tool for "${args.query}"`,
          output:
            `No MCP tool matches "${args.query}". Try other words: what the tool does (create, list, query) or what ` +
            `it works on (issue, file, table).`,
          metadata: { tools: [] }
        }
      const names = hits.map((hit) => hit.tool.id)
      const session = found.get(ctx.sessionID) ?? new Set<string>()
      for (const name of names) session.add(name)
      found.set(ctx.sessionID, session)
      const entries = hits.map(
        ({ tool }) => `## ${tool.id}\n${tool.description}\nInput schema: ${JSON.stringify(tool.jsonSchema())}`
      )
      return {
        title: `${names.length} MCP tools for "${args.query}"`,
        output:
          `Call one with ${MCP_CALL} { "tool": "<name>", "arguments": { … } }, arguments as its input schema says.\n\n` +
          entries.join("\n\n"),
        metadata: { tools: names }
      }
    }
  })

  const wasFound = async (sessionID: string, name: string): Promise<boolean> => {
    if (found.get(sessionID)?.has(name)) return true
    const recalled = options.recall ? await options.recall(sessionID).catch(() => []) : []
    if (recalled.length > 0) found.set(sessionID, new Set([...(found.get(sessionID) ?? []), ...recalled]))
    return recalled.includes(name)
  }

  const failure = (message: string) => new ToolExecutionError({ tool: MCP_CALL, message })
  const base = Tool.define(MCP_CALL, {
    description:
      `Calls an MCP tool that ${MCP_SEARCH} found, by its exact name, with its arguments. The call asks the same ` +
      "permission and returns the same result as the tool itself.",
    parameters: CallArgs,
    // An MCP tool may change anything; the loop snapshots before it runs.
    mutates: true,
    execute: () => {
      throw new Error(`${MCP_CALL} runs through its own run()`)
    }
  }) as AnyTool
  const run = Effect.fn("McpSearch.call")(function* (input: unknown, ctx: ToolRunContext) {
    const parsed = CallArgs.safeParse(input)
    // Invalid arguments are reported by the defined tool, worded like every other tool's.
    if (!parsed.success) return yield* base.run(input, ctx)
    const { tool: name, arguments: args = {} } = parsed.data
    const target = index.get(name)
    if (target === undefined || !allowed(ctx.sessionID)(target))
      return yield* failure(
        `There is no MCP tool named "${name}". Find the tool with ${MCP_SEARCH} and use the name it gives.`
      )
    if (!(yield* Effect.promise(() => wasFound(ctx.sessionID, name))))
      return yield* failure(
        `Search for "${name}" with ${MCP_SEARCH} first, so you have its input schema; then call it from the next step.`
      )
    return yield* target.run(args, ctx)
  })

  return {
    tools: [search as AnyTool, { ...base, run }],
    observe: ({ sessionID, permission }) => {
      rulesets.set(sessionID, permission)
    }
  }
}

/** What the plugin contributes for its MCP tools: the tools to offer, and the hook search needs. */
export interface OfferedTools {
  readonly tools: ReadonlyArray<AnyTool>
  readonly "system.transform"?: (input: { readonly sessionID: string; readonly permission: Ruleset }) => void
}

/**
 * Every MCP tool when their definitions fit the budget (see {@link decideToolSearch}), else `mcp_search` and
 * `mcp_call` in their place, saying so in the log. Found tools are recalled from the session's history after a
 * restart.
 */
export const offerMcpTools = (
  mcpTools: ReadonlyArray<AnyTool>,
  ctx: Pick<PluginContext, "config" | "log" | "client" | "catalog">
): OfferedTools => {
  const decision = decideToolSearch(mcpTools, ctx.config, ctx.catalog)
  if (!decision.search) return { tools: mcpTools }
  ctx.log.info(
    `The ${mcpTools.length} MCP tools' definitions (~${decision.tokens} tokens) exceed the budget of ${decision.budget} ` +
      `tokens (mcp_tool_search × ${decision.model.name}'s context of ${decision.model.limit.context}): the model ` +
      `finds them with ${MCP_SEARCH} and calls them with ${MCP_CALL}.`
  )
  const search = createSearchTools(mcpTools, {
    recall: async (sessionID) => foundInHistory(await ctx.client.sessions.messages(sessionID))
  })
  return { tools: search.tools, "system.transform": (input) => search.observe(input) }
}
