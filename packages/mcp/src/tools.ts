import { type AnyTool, Tool } from "@lathe/plugin"
import type { Tool as McpTool } from "@modelcontextprotocol/sdk/types.js"
import { z } from "zod"
import type { McpConnection } from "./connection.js"
import { assignToolNames } from "./names.js"
import { MCP_MAY_WRITE, MCP_READ_ONLY } from "./permission.js"
import { toToolResult } from "./result.js"

/** Arguments are checked by the server against its own schema; Lathe passes them through as an object. */
const Args = z.record(z.string(), z.unknown())

/** Whether the server marks the tool read-only (`annotations.readOnlyHint: true`). */
export const isReadOnly = (tool: McpTool): boolean => tool.annotations?.readOnlyHint === true

/** A Lathe tool that calls `tool` of `connection`, named `name`. */
export const mcpTool = (connection: McpConnection, tool: McpTool, name: string): AnyTool => {
  const server = connection.server.name
  const readOnly = isReadOnly(tool)
  const defined = Tool.define(name, {
    description: tool.description ?? tool.title ?? `The ${tool.name} tool of the MCP server "${server}".`,
    parameters: Args,
    mutates: !readOnly,
    execute: async (args, ctx) => {
      await ctx.ask({
        permission: name,
        patterns: [readOnly ? MCP_READ_ONLY : MCP_MAY_WRITE],
        always: ["*"],
        metadata: { server, tool: tool.name, arguments: args, readOnly }
      })
      // Routed by the server's own name at call time, so a refreshed or restarted server is used as it is now.
      if (!connection.tools.some((t) => t.name === tool.name))
        throw new Error(`The MCP server "${server}" no longer offers the tool "${tool.name}".`)
      const result = await connection.callTool(tool.name, args, {
        signal: ctx.abort,
        onprogress: (progress) =>
          ctx.metadata({
            title: progress.message ?? `${name}: ${progress.progress}${progress.total ? `/${progress.total}` : ""}`,
            metadata: {
              progress: progress.progress,
              ...(progress.total !== undefined ? { total: progress.total } : {}),
              ...(progress.message !== undefined ? { message: progress.message } : {})
            }
          })
      })
      return toToolResult(name, result)
    }
  })
  // The server's JSON Schema goes to the model as is (Tool.define would derive one from the zod schema).
  const schema = tool.inputSchema as ReturnType<AnyTool["jsonSchema"]>
  return { ...(defined as AnyTool), jsonSchema: () => schema }
}

/**
 * The Lathe tools of every connected server, named `<server>_<tool>` (see {@link assignToolNames}); `taken` are names
 * that must not be reused (other plugins' tools).
 */
export const mcpTools = (connections: ReadonlyArray<McpConnection>, taken: Iterable<string> = []): Array<AnyTool> => {
  const entries = connections.flatMap((connection) =>
    connection.status.state === "connected" ? connection.tools.map((tool) => ({ connection, tool })) : []
  )
  const names = assignToolNames(
    entries.map(({ connection, tool }) => ({ server: connection.server.name, tool: tool.name })),
    taken
  )
  return entries.map(({ connection, tool }, index) => mcpTool(connection, tool, names[index]?.name ?? tool.name))
}
