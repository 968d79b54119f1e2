import type * as acp from "@agentclientprotocol/sdk"
import type { LocalBackend } from "../tui/local-backend.js"

// The editor's MCP servers (`mcpServers` of `session/new` / `session/load`) as Lathe's config takes them.

/** An MCP server config entry, as Lathe's config takes one. */
type McpEntry = NonNullable<Parameters<typeof LocalBackend.make>[2]>["mcpServers"]

/** The editor's MCP servers (`mcpServers` of `session/new` / `session/load`) as a config `mcp` block. */
export const mcpBlock = (servers: ReadonlyArray<acp.McpServer>): NonNullable<McpEntry> =>
  Object.fromEntries(
    servers.map((server) => [
      server.name,
      "url" in server
        ? {
            type: "remote" as const,
            url: server.url,
            ...(server.headers.length > 0
              ? { headers: Object.fromEntries(server.headers.map((h) => [h.name, h.value])) }
              : {})
          }
        : {
            type: "local" as const,
            command: [server.command, ...server.args],
            ...(server.env.length > 0 ? { env: Object.fromEntries(server.env.map((e) => [e.name, e.value])) } : {})
          }
    ])
  )
