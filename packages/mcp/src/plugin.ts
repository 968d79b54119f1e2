import { catalogReady } from "@lathe/core"
import { definePlugin, type Plugin } from "@lathe/plugin"
import type { McpConnection } from "./connection.js"
import { findPromptCommand, mcpResources, promptCommand } from "./contributions.js"
import { lathesCredentials } from "./environment.js"
import { listPrompts } from "./prompts.js"
import { type OfferedTools, offerMcpTools } from "./search-tools.js"
import { resolveServers } from "./servers.js"
import { describeStatus } from "./status.js"
import { mcpTools } from "./tools.js"
import type { AuthProviderFactory } from "./transport.js"

/** Options of {@link createMcpPlugin}. */
export interface McpPluginOptions {
  /** Supplies OAuth for remote servers whose `oauth` is not `false` (the OAuth module's provider). */
  readonly authProvider?: AuthProviderFactory
  /** The environment: `.mcp.json`'s `${VAR}` and what local servers inherit (default `process.env`). */
  readonly env?: Readonly<Record<string, string | undefined>>
  /** Restart backoff of a server that stopped, in ms (default 0.5 s doubling to 8 s, 5 restarts). */
  readonly restartDelays?: ReadonlyArray<number>
  /**
   * `true` (default; `lathe run`): setup waits for the servers whose config says `wait: true` (each up to its
   * timeout) and for the others up to `grace`. `false` (the interactive UI): setup waits for none.
   */
  readonly wait?: boolean
  /** How long setup waits for servers without `wait: true`, in ms (default {@link START_GRACE_MS}). */
  readonly grace?: number
}

/**
 * How long a run's setup waits for servers that are not marked `wait: true` before its first model request: a quick
 * local server is there from the first step, a slow one (`npx` fetching a package) does not hold the run up.
 */
export const START_GRACE_MS = 1_000

/**
 * The MCP plugin: starts every configured server at once (the `mcp` block of the merged config, then a trusted
 * project's `.mcp.json`) and offers the tools of those that have connected, from the next step after each connects
 * (and after `tools/list_changed`). Their prompts are its commands (`/<server>:<prompt>`) and their resources its
 * resources (`@<server>:<uri>`). Setup waits for servers marked `wait: true` and, briefly, for the rest (see
 * {@link McpPluginOptions.wait}); a slower server's tools arrive while the run goes on. A server that failed is named
 * with its reason in a warning and the session goes on without it. Tools a server removes fail with a clear message.
 */
export const createMcpPlugin = (options: McpPluginOptions = {}): Plugin =>
  definePlugin({
    name: "@lathe/mcp",
    setup: async (ctx) => {
      const env = options.env ?? process.env
      const { servers, notices } = await resolveServers({
        config: ctx.config,
        root: ctx.root,
        trusted: ctx.trusted,
        env
      })
      for (const notice of notices) ctx.log.warn(notice)
      if (servers.length === 0) return {}
      let disposed = false
      // The MCP SDK (and the schemas it builds at load) is loaded only when there is a server to talk to; so is the
      // model catalogue, whose context window decides whether the tools are offered through search.
      const [{ McpConnection }] = await Promise.all([import("./connection.js"), catalogReady()])
      let offered: OfferedTools = { tools: [] }
      const connections: Array<McpConnection> = []
      let listing = 0
      /** Listing problems already warned about (each refresh lists the prompts again). */
      const warned = new Set<string>()
      /**
       * Offers what the connected servers have now (every tool, or the search tools over the budget), and lists their
       * prompts as commands (in the background; the latest listing wins).
       */
      const refresh = () => {
        const connected = connections.filter((connection) => connection.status.state === "connected")
        offered = offerMcpTools(mcpTools(connected), ctx, env)
        ctx.tools.set(offered.tools)
        const turn = ++listing
        void listPrompts(connected).then(
          ({ prompts, problems }) => {
            if (disposed || turn !== listing) return
            for (const problem of problems) {
              if (warned.has(problem)) continue
              warned.add(problem)
              ctx.log.warn(problem)
            }
            ctx.commands.set(prompts.map((prompt) => promptCommand(connections, prompt)))
          },
          () => undefined
        )
      }
      const report = (connection: McpConnection) => {
        const line = `MCP server "${connection.server.name}": ${describeStatus(connection.status)}`
        if (connection.status.state === "connected") ctx.log.info(line)
        else ctx.log.warn(line)
      }
      const connectionOptions = {
        ...(options.authProvider ? { authProvider: options.authProvider } : {}),
        ...(options.restartDelays ? { restartDelays: options.restartDelays } : {}),
        env,
        credentials: lathesCredentials(ctx.config, env),
        onStatus: (connection: McpConnection) => {
          report(connection)
          refresh()
        },
        onToolsChanged: () => refresh()
      }
      for (const server of servers) connections.push(new McpConnection(server, connectionOptions))
      const starts = connections.map((connection) =>
        connection.start().then((status) => {
          if (disposed) return
          if (status.state === "failed" || status.state === "needs-auth") {
            const reason = describeStatus(status)
            ctx.log.warn(
              `MCP server "${connection.server.name}" did not start: ${reason}${reason.includes("\n") ? "\n" : ". "}` +
                "Going on without its tools (`lathe mcp list` shows every server)."
            )
          } else if (status.state === "connected") report(connection)
          refresh()
        })
      )
      if (options.wait !== false) {
        const waited = starts.filter((_, index) => connections[index]?.server.wait === true)
        const grace = new Promise<void>((resolve) => setTimeout(resolve, options.grace ?? START_GRACE_MS).unref())
        await Promise.all([Promise.all(waited), Promise.race([Promise.all(starts), grace])])
      }
      refresh()
      return {
        "system.transform": (input) => offered["system.transform"]?.(input),
        // Prompts as `/<server>:<prompt>` (listed as servers connect; any server's by name), resources as
        // `@<server>:<uri>`.
        findCommand: findPromptCommand(connections),
        resources: mcpResources(connections, (message) => ctx.log.warn(message)),
        dispose: async () => {
          disposed = true
          await Promise.all(connections.map((connection) => connection.close()))
        }
      }
    }
  })
