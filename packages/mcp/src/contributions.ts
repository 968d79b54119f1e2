import type { PluginCommand, PluginResources } from "@lathe/plugin"
import type { McpConnection } from "./connection.js"
import { type McpPrompt, runPrompt } from "./prompts.js"
import { listResources, readResource, resourcePart } from "./resources.js"

/** `<server>:<rest>`: how a prompt's command and a resource's URI name their server. */
const SERVER_PREFIX = /^([A-Za-z0-9_.-]+):([\s\S]+)$/

/** The server `name` belongs to, when it names a configured one (`everything:simple-prompt` → `everything`). */
const serverOf = (connections: ReadonlyArray<McpConnection>, name: string) => {
  const match = SERVER_PREFIX.exec(name)
  const server = match?.[1]
  return server !== undefined && connections.some((c) => c.server.name === server)
    ? { server, rest: match?.[2] ?? "" }
    : undefined
}

/**
 * A server's prompt as a command: `/<server>:<prompt>` (`lathe run --command <server>:<prompt>`). Its words are the
 * prompt's arguments (`key=value`, or in order; see `promptArguments`), and it expands to the prompt's text.
 */
export const promptCommand = (connections: ReadonlyArray<McpConnection>, prompt: McpPrompt): PluginCommand => ({
  name: prompt.command,
  description: prompt.description || "MCP prompt",
  arguments: prompt.arguments,
  run: (args) => runPrompt(connections, prompt.command, args)
})

/**
 * A command of a configured server that is not listed (yet): the server is asked when it runs, waiting for it while it
 * starts; it says which prompts it has when it has no such one. Other names are not the MCP plugin's.
 */
export const findPromptCommand =
  (connections: ReadonlyArray<McpConnection>) =>
  async (name: string): Promise<PluginCommand | undefined> =>
    serverOf(connections, name)
      ? { name, description: "MCP prompt", run: (args) => runPrompt(connections, name, args) }
      : undefined

/**
 * The servers' resources as `@<server>:<uri>`: listed from the connected servers (a server that cannot list them is
 * warned about once), read from any configured server, listed or not (its resource templates): a server that cannot
 * read one says why.
 */
export const mcpResources = (
  connections: ReadonlyArray<McpConnection>,
  warn: (message: string) => void
): PluginResources => {
  const warned = new Set<string>()
  return {
    list: async () => {
      const connected = connections.filter((c) => c.status.state === "connected")
      const { resources, problems } = await listResources(connected)
      for (const problem of problems) {
        if (warned.has(problem)) continue
        warned.add(problem)
        warn(problem)
      }
      return resources.map((resource) => ({
        uri: `${resource.server}:${resource.uri}`,
        name: resource.name,
        ...(resource.description ? { description: resource.description } : {}),
        ...(resource.mimeType ? { mimeType: resource.mimeType } : {})
      }))
    },
    accepts: (uri) => serverOf(connections, uri) !== undefined,
    read: async (uri) => {
      const named = serverOf(connections, uri)
      if (!named) throw new Error(`"${uri}" names no configured MCP server: write @<server>:<uri>.`)
      return [resourcePart(named.server, named.rest, await readResource(connections, named.server, named.rest))]
    }
  }
}
