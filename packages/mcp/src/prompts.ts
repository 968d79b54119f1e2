import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import type { ContentBlock, GetPromptResult, Prompt } from "@modelcontextprotocol/sdk/types.js"
import type { McpConnection } from "./connection.js"
import { describeStatus } from "./status.js"

/** A prompt a server offers, as Lathe shows it: the command `/<server>:<prompt>` (`lathe run --command`). */
export interface McpPrompt {
  readonly server: string
  readonly name: string
  /** `<server>:<name>`. */
  readonly command: string
  /** The server's description (or title), one line; empty when it gave none. */
  readonly description: string
  /** Its arguments, in the server's order. Values are strings (the protocol has no other type). */
  readonly arguments: ReadonlyArray<{
    readonly name: string
    readonly description?: string
    readonly required: boolean
  }>
}

/** A prompt or resource request that cannot be made as asked; `message` says what to do instead. */
export class McpRequestError extends Error {
  override readonly name = "McpRequestError"
}

const oneLine = (text: string | undefined): string => (text ?? "").replace(/\s+/g, " ").trim()

const toPrompt = (server: string, prompt: Prompt): McpPrompt => ({
  server,
  name: prompt.name,
  command: `${server}:${prompt.name}`,
  description: oneLine(prompt.description ?? prompt.title),
  arguments: (prompt.arguments ?? []).map((a) => ({
    name: a.name,
    ...(a.description ? { description: oneLine(a.description) } : {}),
    required: a.required === true
  }))
})

/**
 * The SDK client of the connected server `server`, waiting for it when it is still starting (a run does not wait
 * for every server before it goes on); a clear error when it is unknown or not connected.
 */
export const clientOf = async (connections: ReadonlyArray<McpConnection>, server: string): Promise<Client> => {
  const connection = connections.find((c) => c.server.name === server)
  if (connection?.status.state === "connecting") await connection.ready()
  if (!connection) {
    const names = connections.map((c) => c.server.name)
    throw new McpRequestError(
      `There is no MCP server named "${server}"; ` +
        (names.length > 0 ? `the configured ones are ${names.join(", ")}.` : "no MCP server is configured.")
    )
  }
  const client = connection.sdkClient
  if (!client)
    throw new McpRequestError(
      `The MCP server "${server}" is not available (${describeStatus(connection.status)}); \`lathe mcp list\` shows why.`
    )
  return client
}

/** Every prompt of one server, following `nextCursor`; none when the server has no prompts capability. */
const serverPrompts = async (client: Client, server: string): Promise<Array<McpPrompt>> => {
  if (!client.getServerCapabilities()?.prompts) return []
  const prompts: Array<McpPrompt> = []
  let cursor: string | undefined
  do {
    const page = await client.listPrompts(cursor === undefined ? undefined : { cursor })
    prompts.push(...page.prompts.map((p) => toPrompt(server, p)))
    cursor = page.nextCursor
  } while (cursor !== undefined)
  return prompts
}

/**
 * The prompts of every connected server, in server order. A server that fails to list them is named in `problems`
 * and the others are still listed; servers that are not connected are skipped.
 */
export const listPrompts = async (
  connections: ReadonlyArray<McpConnection>
): Promise<{ readonly prompts: ReadonlyArray<McpPrompt>; readonly problems: ReadonlyArray<string> }> => {
  const problems: Array<string> = []
  const lists = await Promise.all(
    connections.map(async (connection) => {
      const client = connection.sdkClient
      if (!client) return []
      return serverPrompts(client, connection.server.name).catch((error: unknown) => {
        problems.push(`Could not list the prompts of "${connection.server.name}": ${String(error)}`)
        return []
      })
    })
  )
  return { prompts: lists.flat(), problems }
}

/** Splits `text` into words like a shell: spaces separate, "double" or 'single' quotes group. */
export const splitWords = (text: string): Array<string> => {
  const words: Array<string> = []
  for (const match of text.matchAll(/(?:[^\s"']+|"[^"]*"|'[^']*')+/g))
    words.push(match[0].replace(/"([^"]*)"|'([^']*)'/g, (_, a?: string, b?: string) => a ?? b ?? ""))
  return words
}

const usage = (prompt: McpPrompt): string =>
  prompt.arguments.length === 0
    ? `${prompt.command} takes no arguments.`
    : `${prompt.command} takes ${prompt.arguments.map((a) => (a.required ? a.name : `[${a.name}]`)).join(" ")} ` +
      `(as key=value, or in that order).`

/**
 * The arguments of `prompt` from the words after its command: `key=value` names an argument; other words fill the
 * arguments not yet named, in order, and the last of those takes all remaining words (so `/srv:ask why is it slow`
 * gives a one-argument prompt the whole sentence). Throws {@link McpRequestError} for an unknown name, words a prompt
 * without arguments cannot take, or a required argument left out.
 */
export const promptArguments = (prompt: McpPrompt, words: ReadonlyArray<string>): Record<string, string> => {
  const values: Record<string, string> = {}
  const loose: Array<string> = []
  for (const word of words) {
    const named = /^([A-Za-z_][\w.-]*)=([\s\S]*)$/.exec(word)
    if (!named) {
      loose.push(word)
      continue
    }
    const [, key = "", value = ""] = named
    if (!prompt.arguments.some((a) => a.name === key))
      throw new McpRequestError(`${prompt.command} has no argument "${key}". ${usage(prompt)}`)
    values[key] = value
  }
  const open = prompt.arguments.filter((a) => values[a.name] === undefined)
  if (loose.length > 0 && open.length === 0)
    throw new McpRequestError(`Too many arguments: "${loose.join(" ")}". ${usage(prompt)}`)
  open.forEach((argument, i) => {
    const taken = i === open.length - 1 ? loose.slice(i) : loose.slice(i, i + 1)
    if (taken.length > 0) values[argument.name] = taken.join(" ")
  })
  const missing = prompt.arguments.filter((a) => a.required && values[a.name] === undefined).map((a) => a.name)
  if (missing.length > 0) throw new McpRequestError(`${prompt.command} needs ${missing.join(", ")}. ${usage(prompt)}`)
  return values
}

const bytes = (base64: string): number => Math.floor((base64.length * 3) / 4)

/** One content block of a prompt message as text: images and other binary content become a one-line note. */
const blockText = (block: ContentBlock): string => {
  switch (block.type) {
    case "text":
      return block.text
    case "image":
      return `[image ${block.mimeType}, ${bytes(block.data)} bytes: not attached]`
    case "audio":
      return `[audio ${block.mimeType}, ${bytes(block.data)} bytes: not attached]`
    case "resource": {
      const resource = block.resource
      if ("text" in resource) return `Resource ${resource.uri}:\n${resource.text}`
      return `[resource ${resource.uri} (${resource.mimeType ?? "binary"}), ${bytes(resource.blob)} bytes: not attached]`
    }
    case "resource_link":
      return `Resource link: ${block.uri}${block.name ? ` (${block.name})` : ""}`
    default:
      return JSON.stringify(block)
  }
}

/**
 * A prompt's messages as the text of one user prompt. When every message is the user's, their texts are joined
 * with blank lines; when the prompt also scripts the assistant, each message starts with its role.
 */
export const promptText = (result: GetPromptResult): string => {
  const labelled = result.messages.some((m) => m.role !== "user")
  return result.messages
    .map((m) =>
      labelled ? `${m.role === "user" ? "User" : "Assistant"}: ${blockText(m.content)}` : blockText(m.content)
    )
    .join("\n\n")
}

/**
 * Runs the prompt `<server>:<prompt>` with the words after it (see {@link promptArguments}) and returns the text
 * of the user prompt it expands to. Throws {@link McpRequestError} with the prompts it has when the name is unknown,
 * and with the server's message when it refuses the arguments.
 */
export const runPrompt = async (
  connections: ReadonlyArray<McpConnection>,
  command: string,
  words: ReadonlyArray<string> = []
): Promise<string> => {
  const colon = command.indexOf(":")
  if (colon <= 0 || colon === command.length - 1)
    throw new McpRequestError(`"${command}" is not a prompt name: write <server>:<prompt>, e.g. github:review-pr.`)
  const server = command.slice(0, colon)
  const name = command.slice(colon + 1)
  const client = await clientOf(connections, server)
  const prompts = await serverPrompts(client, server)
  const prompt = prompts.find((p) => p.name === name)
  if (!prompt)
    throw new McpRequestError(
      `The MCP server "${server}" has no prompt "${name}"; ` +
        (prompts.length > 0 ? `its prompts are ${prompts.map((p) => p.name).join(", ")}.` : "it offers no prompts.")
    )
  const args = promptArguments(prompt, words)
  try {
    return promptText(await client.getPrompt({ name, arguments: args }))
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error)
    throw new McpRequestError(`The MCP server "${server}" refused the prompt ${prompt.command}: ${why}`)
  }
}
