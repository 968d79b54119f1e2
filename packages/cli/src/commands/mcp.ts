import { dataDir } from "@lathe/core"
import {
  authorize,
  connectAll,
  createOAuthProvider,
  describeStatus,
  firstStartTimeout,
  isReadOnly,
  logout,
  type McpConnection,
  type McpServer,
  mcpTools,
  openStartMemory,
  openSystemBrowser,
  resolveServers
} from "@lathe/mcp"
import { loadConfig } from "../app.js"
import { defineCommand, parseCommand, pickSubcommand } from "../command-kit.js"
import type { CliIO, Command } from "../io.js"
import { mcpCredentials } from "../plugins.js"
import { addServer, addSpec, removeServer, removeSpec } from "./mcp-config.js"

const listSpec = defineCommand({
  name: "mcp list",
  summary: "Every MCP server of this project: connected (tool count), failed (why), disabled, or needs auth",
  description: `Every MCP server of this project (lathe.json "mcp", and .mcp.json when the project is trusted): connected
with its tool count, failed with the reason, disabled, or needs auth.`,
  options: { json: { type: "boolean", description: "Print them as JSON" } }
})

const toolsSpec = defineCommand({
  name: "mcp tools",
  summary: "The tools of one server as the model sees them, and whether each is allowed by default or asked",
  usage: ["<name> [--json]"],
  description: `The tools of one server as the model sees them (<server>_<tool>), and whether each is allowed by default
(readOnlyHint) or asked.`,
  options: { json: { type: "boolean", description: "Print them as JSON" } },
  positionals: { name: "<name>", max: 1 }
})

const authSpec = defineCommand({
  name: "mcp auth",
  summary: "Sign in to a remote server behind OAuth (opens the browser; tokens stored mode 0600)",
  usage: ["<name>"],
  description: `Signs in to a remote server behind OAuth (PKCE, dynamic client registration): opens the browser, waits for
the redirect on 127.0.0.1, stores the tokens (mode 0600) in the data dir.`,
  positionals: { name: "<name>", max: 1 }
})

const logoutSpec = defineCommand({
  name: "mcp logout",
  summary: "Forget the stored tokens of a remote server",
  usage: ["<name>"],
  positionals: { name: "<name>", max: 1 }
})

/** `lathe mcp`: its subcommands. */
export const mcpSpec = defineCommand({
  name: "mcp",
  usage: ["<list | tools <name> | auth <name> | logout <name> | add <name> … | remove <name>>"],
  subcommands: [listSpec, toolsSpec, authSpec, logoutSpec, addSpec, removeSpec],
  footer: 'Servers connect at once, each within its "timeout" (default 10000 ms). See docs/mcp.md.'
})

/** Loads config and paths only (no plugins, no model), resolves the servers and connects them. */
const connect = async (io: CliIO, only?: string) => {
  const loaded = await loadConfig(io)
  if (!loaded.ok) return loaded
  const { config, paths } = loaded.value
  const resolved = await resolveServers({ config: config.info, root: paths.root, trusted: config.trusted, env: io.env })
  // A package runner's (npx -y, uvx, …) first start on this machine gets the longer first timeout, as in a run.
  const memory = await openStartMemory(dataDir(io.env))
  const servers: Array<McpServer> = resolved.servers
    .filter((server) => only === undefined || server.name === only)
    .map((server) => {
      const first = firstStartTimeout(server, memory)
      return first > server.timeout ? { ...server, firstTimeout: first } : server
    })
  const notices = [...config.notices.filter((n) => n.includes("mcp servers")), ...resolved.notices]
  // Started as a run starts them: the person's environment less Lathe's provider credentials.
  const options = { restartDelays: [], env: io.env, ...mcpCredentials(config.info, io.env) }
  const connections = await connectAll(servers, options)
  for (const connection of connections)
    if (connection.status.state === "connected")
      await memory.remember(
        connection.server,
        connection.tools.map((tool) => tool.name)
      )
  return { ok: true as const, servers, notices, connections }
}

const where = (server: McpServer): string =>
  server.type === "local" ? [server.command, ...server.args].join(" ") : server.url

const closeAll = (connections: ReadonlyArray<McpConnection>) => Promise.all(connections.map((c) => c.close()))

const list = async (json: boolean, io: CliIO): Promise<number> => {
  const result = await connect(io)
  if (!result.ok) {
    io.stderr(`lathe mcp list: ${result.message}\n`)
    return 1
  }
  const { connections, notices } = result
  try {
    const bad = connections.some((c) => c.status.state === "failed" || c.status.state === "needs-auth")
    if (json) {
      const rows = connections.map((c) => ({ name: c.server.name, source: c.server.source, ...c.status }))
      io.stdout(`${JSON.stringify({ servers: rows, notices }, null, 2)}\n`)
      return bad ? 1 : 0
    }
    const width = Math.max(4, ...connections.map((c) => c.server.name.length))
    const lines = connections.map((c) => {
      const pad = " ".repeat(width + 2)
      // A failure's stderr lines (already indented) stay under the status, the command comes last.
      const status = describeStatus(c.status).replaceAll("\n", `\n${pad}`)
      return `${c.server.name.padEnd(width)}  ${status}\n${pad}${where(c.server)}`
    })
    if (connections.length === 0) lines.push('No MCP servers configured (add them under "mcp" in lathe.json).')
    for (const notice of notices) lines.push(`! ${notice}`)
    io.stdout(`${lines.join("\n")}\n`)
    return bad ? 1 : 0
  } finally {
    await closeAll(connections)
  }
}

const tools = async (name: string | undefined, json: boolean, io: CliIO): Promise<number> => {
  if (!name) {
    io.stderr("lathe mcp tools: name the server, e.g. lathe mcp tools github (see lathe mcp list).\n")
    return 2
  }
  const result = await connect(io, name)
  if (!result.ok) {
    io.stderr(`lathe mcp tools: ${result.message}\n`)
    return 1
  }
  const { connections } = result
  try {
    const connection = connections[0]
    if (!connection) {
      io.stderr(`lathe mcp tools: no MCP server named "${name}" in this project (see lathe mcp list).\n`)
      return 1
    }
    if (connection.status.state !== "connected") {
      io.stderr(`lathe mcp tools: ${name} is ${describeStatus(connection.status)}\n`)
      return 1
    }
    const rows = mcpTools(connections).map((tool, index) => {
      const source = connection.tools[index]
      return {
        name: tool.id,
        tool: source?.name ?? "",
        readOnly: source ? isReadOnly(source) : false,
        description: tool.description
      }
    })
    if (json) io.stdout(`${JSON.stringify(rows, null, 2)}\n`)
    else
      io.stdout(
        `${rows
          .map(
            (r) => `${r.name}  (${r.readOnly ? "read-only: allowed" : "asks"})\n  ${r.description.split("\n")[0] ?? ""}`
          )
          .join("\n")}\n`
      )
    return 0
  } finally {
    await closeAll(connections)
  }
}

/** `lathe mcp auth <name>` signs in to a remote server; `lathe mcp logout <name>` forgets its tokens. */
const auth = async (verb: "auth" | "logout", name: string | undefined, io: CliIO): Promise<number> => {
  if (!name) {
    io.stderr(`lathe mcp ${verb}: name the server, e.g. lathe mcp ${verb} github (see lathe mcp list).\n`)
    return 2
  }
  const data = dataDir(io.env)
  if (verb === "logout") {
    const removed = await logout(name, data)
    io.stdout(removed ? `Forgot the sign-in of ${name}.\n` : `${name} had no stored sign-in.\n`)
    return 0
  }
  const loaded = await loadConfig(io)
  if (!loaded.ok) {
    io.stderr(`lathe mcp auth: ${loaded.message}\n`)
    return 1
  }
  const { config, paths } = loaded.value
  const resolved = await resolveServers({ config: config.info, root: paths.root, trusted: config.trusted, env: io.env })
  const server = resolved.servers.find((s) => s.name === name)
  if (server?.type !== "remote") {
    io.stderr(`lathe mcp auth: no remote MCP server named "${name}" in this project (see lathe mcp list).\n`)
    return 1
  }
  const provider = createOAuthProvider({
    serverName: name,
    serverUrl: server.url,
    dataDir: data,
    ...(server.oauth ? { oauth: server.oauth } : {}),
    openBrowser: async (url) => {
      io.stderr(`Sign in at ${url.href}\n`)
      await openSystemBrowser(url).catch(() => undefined)
    }
  })
  const result = await authorize(server, provider)
  if (result !== "AUTHORIZED") {
    io.stderr(`lathe mcp auth: ${result.message}\n`)
    return 1
  }
  io.stdout(`Signed in to ${name}.\n`)
  return 0
}

/** `lathe mcp list|tools|auth|logout|add|remove`. */
export const mcpCommand: Command = async (args, io) => {
  const sub = pickSubcommand(mcpSpec, args, io)
  if (typeof sub === "number") return sub
  if (sub.name === "add") return addServer(sub.rest, io)
  if (sub.name === "remove") return removeServer(sub.rest, io)
  if (sub.name === "list") {
    const parsed = parseCommand(listSpec, sub.rest, io)
    return typeof parsed === "number" ? parsed : list(parsed.values.json === true, io)
  }
  if (sub.name === "tools") {
    const parsed = parseCommand(toolsSpec, sub.rest, io)
    return typeof parsed === "number" ? parsed : tools(parsed.positionals[0], parsed.values.json === true, io)
  }
  const verb = sub.name === "auth" ? "auth" : "logout"
  const parsed = parseCommand(verb === "auth" ? authSpec : logoutSpec, sub.rest, io)
  return typeof parsed === "number" ? parsed : auth(verb, parsed.positionals[0], io)
}
