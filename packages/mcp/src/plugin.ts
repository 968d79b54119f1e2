import { definePlugin, type Plugin, type PluginConfig } from "@lathe/plugin"
import type { McpConnection } from "./connection.js"
import { findPromptCommand, mcpResources, promptCommand } from "./contributions.js"
import { listPrompts } from "./prompts.js"
import { type OfferedTools, offerMcpTools } from "./search-tools.js"
import { type McpServer, resolveServers } from "./servers.js"
import type { StartMemory } from "./start-memory.js"
import type { OfferedMcpTool } from "./startup-wait.js"
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
   * timeout), and a turn's first request waits for the others up to `mcp_startup_wait` (default 10 s). `false` (the
   * interactive UI, which shows tools arriving): setup waits for none, and a first request waits up to 2 s by
   * default. In both, a server the prompt or the agent names is waited for up to its own start timeout.
   */
  readonly wait?: boolean
  /**
   * Where to remember which server commands started here before (`<dataDir>/mcp-started.json`): a package runner's
   * (`npx -y`, `uvx`, …) first start gets a longer timeout, and a prompt naming a remembered tool waits for its
   * server. Without it nothing is remembered.
   */
  readonly dataDir?: string
  /**
   * The credentials of Lathe's own model providers and store (the host's), removed from what local servers inherit
   * along with the provider key variables (`ctx.secretNames`). MCP servers' own settings are not among them: a server
   * gets what its config gives it. Default: every credential the host holds (`ctx.secrets`).
   */
  readonly credentials?: (
    config: PluginConfig,
    env: Readonly<Record<string, string | undefined>>
  ) => ReadonlyArray<string>
}

/**
 * The MCP plugin: starts every configured server at once (the `mcp` block of the merged config, then a trusted
 * project's `.mcp.json`) and offers the tools of those that have connected, from the next step after each connects
 * (and after `tools/list_changed`). Their prompts are its commands (`/<server>:<prompt>`) and their resources its
 * resources (`@<server>:<uri>`). A turn's first request waits for servers still starting, within bounds (see
 * {@link McpPluginOptions.wait}); a server whose tools arrive later is announced to the model at its next step. A
 * server that failed is named with its reason in a warning and the session goes on without it. Tools a server
 * removes fail with a clear message.
 */
export const createMcpPlugin = (options: McpPluginOptions = {}): Plugin =>
  definePlugin({
    name: "@lathe/mcp",
    setup: async (ctx) => {
      const config = ctx.config
      const env = options.env ?? process.env
      const { servers, notices } = await resolveServers({
        config: config,
        root: ctx.root,
        trusted: ctx.trusted,
        env
      })
      for (const notice of notices) ctx.log.warn(notice)
      // A disabled server is never started: with no other, nothing is loaded (the SDK and its schemas took a run
      // ~17 ms before its first request for one `"enabled": false` entry).
      const enabled = servers.filter((server) => server.enabled)
      if (enabled.length === 0) return {}
      let disposed = false
      // The MCP SDK (and the schemas it builds at load) is loaded only when there is a server to talk to; so is the
      // model catalogue, whose context window decides whether the tools are offered through search.
      const [{ McpConnection }, { firstStartTimeout, openStartMemory }, waits] = await Promise.all([
        import("./connection.js"),
        import("./start-memory.js"),
        import("./startup-wait.js"),
        ctx.catalog.ready()
      ])
      const { DEFAULT_STARTUP_WAIT_MS, lateToolNotes, serverNeed, startupWaitMs } = waits
      const memory = options.dataDir === undefined ? forgetful : await openStartMemory(options.dataDir)
      const startedAt = performance.now()
      let offered: OfferedTools = { tools: [] }
      /** The MCP tools of the connected servers with their server (what the late-tool notes list). */
      let available: ReadonlyArray<OfferedMcpTool> = []
      const notes = lateToolNotes()
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
        const tools = mcpTools(connected)
        const servers = connected.flatMap((connection) => connection.tools.map(() => connection.server.name))
        available = tools.map((tool, index) => ({ name: tool.id, server: servers[index] ?? "" }))
        offered = offerMcpTools(tools, ctx)
        ctx.tools.set(offered.tools)
        for (const connection of connected)
          void memory.remember(
            connection.server,
            connection.tools.map((tool) => tool.name)
          )
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
        credentials: options.credentials?.(config, env) ?? ctx.secrets,
        credentialNames: ctx.secretNames,
        onStatus: (connection: McpConnection) => {
          report(connection)
          refresh()
        },
        onToolsChanged: () => refresh()
      }
      for (const server of enabled)
        connections.push(
          new McpConnection(withFirstTimeout(server, firstStartTimeout(server, memory)), connectionOptions)
        )
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
      if (options.wait !== false)
        await Promise.all(starts.filter((_, index) => connections[index]?.server.wait === true))
      refresh()
      const startupWait =
        config.mcp_startup_wait ?? DEFAULT_STARTUP_WAIT_MS[options.wait === false ? "interactive" : "run"]
      // A hook that runs past plugin_timeout_ms is cut off and reported: the wait ends a second before that.
      const cap = Math.max(0, ctx.hookTimeoutMs - 1_000)
      /** Servers already said to be late (said once). */
      const late = new Set<string>()
      return {
        // Before a turn's request: waits for the servers still starting that the turn needs, or while the start-up
        // wait lasts (a server that fails settles at once and holds nothing).
        "prompt.submit": async (input) => {
          const now = performance.now()
          const waits = connections.flatMap((connection) => {
            if (connection.status.state !== "connecting") return []
            const { server } = connection
            const need = serverNeed(
              { name: server.name, wait: server.wait, rememberedTools: memory.tools(server) },
              input
            )
            const ms = startupWaitMs({ need, startedAt, now, startupWait, cap })
            return ms > 0 ? [{ connection, need, ms }] : []
          })
          if (waits.length === 0) return
          ctx.log.info(
            `Waiting for MCP servers still starting: ${waits.map((w) => w.connection.server.name).join(", ")}`
          )
          await Promise.all(
            waits.map(async ({ connection, need, ms }) => {
              if ((await settlesWithin(connection.start(), ms)) || need === undefined) return
              const name = connection.server.name
              if (late.has(name)) return
              late.add(name)
              ctx.log.warn(
                `MCP server "${name}" (${NEED_TEXT[need]}) is still starting after ${Math.round(ms / 1000)} s: ` +
                  "the turn goes on, and its tools are offered (and announced to the model) once it connects."
              )
            })
          )
        },
        "system.transform": (input, output) => {
          offered["system.transform"]?.(input)
          const search = offered["system.transform"] !== undefined
          output.system.push(
            ...notes({ sessionID: input.sessionID, permission: input.permission, tools: available, search })
          )
        },
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

/** What a turn needing a server is called in the warning when it is late. */
const NEED_TEXT = { config: "wait: true", prompt: "named in the prompt", agent: "named by the agent" } as const

/** A memory that remembers nothing (a host that gives no data dir). */
const forgetful: StartMemory = { startedBefore: () => false, tools: () => [], remember: async () => undefined }

/** The server with `timeout` as its first start's when that is longer than its own (see `firstStartTimeout`). */
const withFirstTimeout = (server: McpServer, timeout: number): McpServer =>
  timeout > server.timeout ? { ...server, firstTimeout: timeout } : server

/** Whether `promise` settles within `ms`. */
const settlesWithin = (promise: Promise<unknown>, ms: number): Promise<boolean> =>
  new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms)
    promise.then(
      () => {
        clearTimeout(timer)
        resolve(true)
      },
      () => {
        clearTimeout(timer)
        resolve(true)
      }
    )
  })
