import { definePlugin, type Plugin, type PluginContext, type PluginHooks } from "@lathe/core"
import type { McpConnection } from "./connection.js"
import { registerMcpConnections } from "./registry.js"
import { type OfferedTools, offerMcpTools } from "./search-tools.js"
import { type McpServer, resolveServers } from "./servers.js"
import { describeStatus } from "./status.js"
import { mcpTools } from "./tools.js"
import type { AuthProviderFactory } from "./transport.js"

/** Options of {@link createMcpPlugin}. */
export interface McpPluginOptions {
  /** Supplies OAuth for remote servers whose `oauth` is not `false` (the OAuth module's provider). */
  readonly authProvider?: AuthProviderFactory
  /** Where `.mcp.json`'s `${VAR}` come from (default `process.env`). */
  readonly env?: Readonly<Record<string, string | undefined>>
  /** Restart backoff of a server that stopped, in ms (default 0.5 s doubling to 8 s, 5 restarts). */
  readonly restartDelays?: ReadonlyArray<number>
  /**
   * `true` (default): setup waits for every server up to its timeout (`lathe run`). `false` (the interactive UI):
   * setup returns at once and each server's tools are offered from the first turn after it connects.
   */
  readonly wait?: boolean
}

/**
 * The MCP plugin: starts every configured server at once (the `mcp` block of the merged config, then a trusted
 * project's `.mcp.json`), waits for each up to its `timeout`, and contributes the tools of those that connected.
 * A server that failed is named with its reason in a warning and the session goes on without it.
 *
 * With `wait: false` (the interactive UI) setup does not wait: tools appear from the first turn after their server
 * connects, and `tools/list_changed` refreshes them. With the default `wait: true`, tools a server adds later appear
 * from the next start. Tools a server removes fail with a clear message when called.
 */
export const createMcpPlugin = (options: McpPluginOptions = {}): Plugin =>
  definePlugin({
    name: "@lathe/mcp",
    setup: async (ctx) => {
      const { servers, notices } = await resolveServers({
        config: ctx.config,
        root: ctx.root,
        trusted: ctx.trusted,
        env: options.env ?? process.env
      })
      for (const notice of notices) ctx.log.warn(notice)
      if (servers.length === 0) return {}
      // The MCP SDK (and the schemas it builds at load) is loaded only when there is a server to talk to.
      const { connectAll, McpConnection } = await import("./connection.js")
      if (options.wait === false) return startInBackground(servers, ctx, options, McpConnection)
      const known = new Map<McpConnection, Set<string>>()
      const connections = await connectAll(servers, {
        ...(options.authProvider ? { authProvider: options.authProvider } : {}),
        ...(options.restartDelays ? { restartDelays: options.restartDelays } : {}),
        onStatus: (connection) => {
          const { state } = connection.status
          const line = `MCP server "${connection.server.name}": ${describeStatus(connection.status)}`
          if (state === "connected") ctx.log.info(line)
          else ctx.log.warn(line)
        },
        onToolsChanged: (connection) => {
          const before = known.get(connection) ?? new Set()
          const added = connection.tools.map((t) => t.name).filter((name) => !before.has(name))
          if (added.length > 0)
            ctx.log.info(
              `MCP server "${connection.server.name}" now offers ${added.join(", ")}; new tools appear when Lathe next starts.`
            )
        }
      })
      for (const connection of connections) {
        known.set(connection, new Set(connection.tools.map((t) => t.name)))
        const { state } = connection.status
        if (state === "failed" || state === "needs-auth")
          ctx.log.warn(
            `MCP server "${connection.server.name}" did not start: ${describeStatus(connection.status)}. ` +
              "Going on without its tools (`lathe mcp list` shows every server)."
          )
      }
      // Hosts reach the prompts and resources of these servers through `mcpConnections(root)`.
      const unregister = registerMcpConnections(ctx.root, connections)
      return {
        // Every MCP tool, or mcp_search + mcp_call when their definitions would take too much of the context.
        ...offerMcpTools(mcpTools(connections), ctx, options.env ?? process.env),
        dispose: async () => {
          unregister()
          await Promise.all(connections.map((connection) => connection.close()))
        }
      }
    }
  })

/**
 * The no-wait mode: servers connect in the background; whenever one connects or changes its tools, the plugin's
 * tools are replaced by what the connected servers offer (every tool, or the search tools over the budget).
 */
const startInBackground = (
  servers: ReadonlyArray<McpServer>,
  ctx: PluginContext,
  options: McpPluginOptions,
  Connection: typeof McpConnection
): PluginHooks => {
  const env = options.env ?? process.env
  let offered: OfferedTools = { tools: [] }
  const connections: Array<McpConnection> = []
  const refresh = () => {
    const connected = connections.filter((connection) => connection.status.state === "connected")
    offered = offerMcpTools(mcpTools(connected), ctx, env)
    ctx.tools.set(offered.tools)
  }
  const connectionOptions = {
    ...(options.authProvider ? { authProvider: options.authProvider } : {}),
    ...(options.restartDelays ? { restartDelays: options.restartDelays } : {}),
    onStatus: (connection: McpConnection) => {
      const line = `MCP server "${connection.server.name}": ${describeStatus(connection.status)}`
      if (connection.status.state === "connected") ctx.log.info(line)
      else ctx.log.warn(line)
      refresh()
    },
    onToolsChanged: () => refresh()
  }
  for (const server of servers) connections.push(new Connection(server, connectionOptions))
  const unregister = registerMcpConnections(ctx.root, connections)
  for (const connection of connections) void connection.start().catch(() => undefined)
  return {
    "system.transform": (input) => offered["system.transform"]?.(input),
    dispose: async () => {
      unregister()
      await Promise.all(connections.map((connection) => connection.close()))
    }
  }
}
