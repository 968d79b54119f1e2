import { describe, expect, it } from "@effect/vitest"
import { type AnyTool, type ModelInfo, type PluginCatalog, Tool } from "@lathe/plugin"
import { z } from "zod"
import { decideToolSearch, estimateToolTokens, ToolIndex, words } from "../src/search.js"
import { createSearchTools, MCP_CALL, MCP_SEARCH } from "../src/search-tools.js"
import { runTool } from "./helpers.js"

/** A real tool that asks under its own name, like an MCP tool, and echoes its arguments. */
const tool = (id: string, description: string): AnyTool =>
  Tool.define(id, {
    description,
    parameters: z.object({ id: z.string() }),
    execute: async (args, ctx) => {
      await ctx.ask({ permission: id, patterns: ["mcp:may-write"] })
      return { title: id, output: `${id}(${args.id})` }
    }
  }) as AnyTool

const tools = [
  tool("tracker_create_issue", "Open a new issue in the tracker."),
  tool("tracker_close_issue", "Close an issue."),
  tool("db_runQuery", "Run a read-only SQL query against the warehouse database."),
  tool("files_read_text_file", "Read a file as text.")
]

/** A model of `context` tokens, as `ctx.catalog.model` describes one. */
const modelOf = (providerID: string, modelID: string, context: number): ModelInfo => ({
  providerID,
  modelID,
  name: modelID,
  limit: { context, output: 4_096 },
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  capabilities: { reasoning: false, toolCall: true, temperature: true, image: false }
})

/** A catalogue that knows `models` (by `provider/model`, their context) and picks `fallback` when config names none. */
const catalog = (
  models: Readonly<Record<string, number>>,
  fallback?: string
): Pick<PluginCatalog, "model" | "defaultModel"> => ({
  model: (providerID, modelID) => modelOf(providerID, modelID, models[`${providerID}/${modelID}`] ?? 32_768),
  defaultModel: () => fallback
})

const sonnet = catalog({ "anthropic/claude-sonnet-4-5": 200_000 })

const byName = (list: ReadonlyArray<AnyTool>, name: string): AnyTool => {
  const found = list.find((t) => t.id === name)
  if (!found) throw new Error(`no tool ${name}`)
  return found
}

describe("the tool index", () => {
  it("splits names at underscores and camelCase humps", () => {
    expect(words("db_runQuery")).toEqual(["db", "run", "query"])
  })

  it("ranks name matches above description matches, tolerates plurals, and leaves out tools matching nothing", () => {
    const index = new ToolIndex(tools)
    expect(index.search("create issues", 5).map((hit) => hit.tool.id)).toEqual([
      "tracker_create_issue",
      "tracker_close_issue"
    ])
    expect(index.search("sql database", 5).map((hit) => hit.tool.id)).toEqual(["db_runQuery"])
    expect(index.search("kubernetes", 5)).toEqual([])
    expect(index.search("files_read_text_file", 1)[0]?.tool.id).toBe("files_read_text_file")
  })
})

describe("deciding on tool search", () => {
  const tokens = estimateToolTokens(tools)

  it("turns on when the definitions exceed the share of the configured model's context", () => {
    const context = 200_000
    const model = "anthropic/claude-sonnet-4-5"
    const on = decideToolSearch(tools, { model, mcp_tool_search: 0 }, sonnet)
    expect(on).toMatchObject({ search: true, tokens, budget: 0 })
    const off = decideToolSearch(tools, { model }, sonnet)
    expect(off).toMatchObject({ search: false, budget: context / 10 })
    expect(decideToolSearch(tools, { mcp_tool_search: false }, sonnet)).toMatchObject({ search: false })
  })

  // What `ctx.catalog.model` and `defaultModel` answer (overrides, the keys' default) is the host's: core's
  // plugin-catalog tests.
  it("uses config's model, else the catalogue's default model, else the unknown model's window", () => {
    const local = catalog({ "local/tiny": tokens * 5 })
    expect(decideToolSearch(tools, { model: "local/tiny" }, local)).toMatchObject({
      search: true,
      budget: Math.floor(tokens / 2)
    })
    expect(decideToolSearch(tools, {}, catalog({}, "openai/gpt-5")).model.modelID).toBe("gpt-5")
    expect(decideToolSearch(tools, {}, catalog({})).model).toMatchObject({
      modelID: "unknown",
      limit: { context: 32_768 }
    })
  })
})

describe("mcp_search and mcp_call", () => {
  it("a found tool is called under its own permission name with its arguments", async () => {
    const search = createSearchTools(tools)
    const found = await runTool(byName(search.tools, MCP_SEARCH), { query: "create issue", limit: 1 }).result
    expect(found.metadata.tools).toEqual(["tracker_create_issue"])
    expect(found.output).toContain('"required":["id"]')
    const call = runTool(byName(search.tools, MCP_CALL), { tool: "tracker_create_issue", arguments: { id: "7" } })
    expect((await call.result).output).toBe("tracker_create_issue(7)")
    expect(call.record.asks.map((ask) => ask.permission)).toEqual(["tracker_create_issue"])
  })

  it("refuses a tool not searched for yet, or unknown, with a message that says what to do", async () => {
    const search = createSearchTools(tools)
    const call = byName(search.tools, MCP_CALL)
    const early = await runTool(call, { tool: "tracker_close_issue", arguments: { id: "1" } }).error()
    expect(early.message).toMatch(/Search for "tracker_close_issue" with mcp_search first/)
    const unknown = await runTool(call, { tool: "nope", arguments: {} }).error()
    expect(unknown.message).toMatch(/no MCP tool named "nope"/)
    const invalid = await runTool(call, { arguments: {} }).error()
    expect(invalid._tag).toBe("ToolInvalidArguments")
  })

  it("recalls what an earlier process found, and leaves out tools a rule denies", async () => {
    const search = createSearchTools(tools, { recall: async () => ["tracker_close_issue"] })
    const call = byName(search.tools, MCP_CALL)
    expect((await runTool(call, { tool: "tracker_close_issue", arguments: { id: "2" } }).result).output).toBe(
      "tracker_close_issue(2)"
    )
    search.observe({
      sessionID: "s1",
      permission: [{ permission: "tracker_*", pattern: "*", action: "deny", source: "test" }]
    })
    const found = await runTool(byName(search.tools, MCP_SEARCH), { query: "issue" }).result
    expect(found.metadata.tools).toEqual([])
    const denied = await runTool(call, { tool: "tracker_close_issue", arguments: { id: "2" } }).error()
    expect(denied.message).toMatch(/no MCP tool named/)
  })
})
