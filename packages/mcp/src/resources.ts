import type { PromptPart } from "@lathe/plugin"
import type { ReadResourceResult } from "@modelcontextprotocol/sdk/types.js"
import type { McpConnection } from "./connection.js"
import { clientOf, McpRequestError } from "./prompts.js"

/** A resource a server lists (templates are not listed; any URI a server reads can still be attached). */
export interface McpResource {
  readonly server: string
  readonly uri: string
  readonly name: string
  readonly mimeType?: string
  readonly description?: string
}

/** A resource's text is cut at this many characters when attached. */
export const RESOURCE_ATTACH_LIMIT = 100_000

/**
 * The listed resources of every connected server that has the resources capability (following `nextCursor`). A
 * server that fails to list them is named in `problems`.
 */
export const listResources = async (
  connections: ReadonlyArray<McpConnection>
): Promise<{ readonly resources: ReadonlyArray<McpResource>; readonly problems: ReadonlyArray<string> }> => {
  const problems: Array<string> = []
  const lists = await Promise.all(
    connections.map(async (connection): Promise<Array<McpResource>> => {
      const client = connection.sdkClient
      if (!client?.getServerCapabilities()?.resources) return []
      const server = connection.server.name
      const found: Array<McpResource> = []
      try {
        let cursor: string | undefined
        do {
          const page = await client.listResources(cursor === undefined ? undefined : { cursor })
          for (const r of page.resources)
            found.push({
              server,
              uri: r.uri,
              name: r.name,
              ...(r.mimeType ? { mimeType: r.mimeType } : {}),
              ...(r.description ? { description: r.description } : {})
            })
          cursor = page.nextCursor
        } while (cursor !== undefined)
      } catch (error) {
        problems.push(`Could not list the resources of "${server}": ${String(error)}`)
      }
      return found
    })
  )
  return { resources: lists.flat(), problems }
}

/** A resource's contents as text; binary contents become a note with their type and size. */
export const resourceText = (result: ReadResourceResult): string =>
  result.contents
    .map((content) =>
      "text" in content
        ? content.text
        : `[binary resource ${content.uri} (${content.mimeType ?? "unknown type"}), ${Math.floor((content.blob.length * 3) / 4)} bytes: not attached]`
    )
    .join("\n\n")

/** Reads `uri` from `server`; throws {@link McpRequestError} with the server's reason when it cannot. */
export const readResource = async (
  connections: ReadonlyArray<McpConnection>,
  server: string,
  uri: string
): Promise<string> => {
  const client = await clientOf(connections, server)
  try {
    return resourceText(await client.readResource({ uri }))
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error)
    throw new McpRequestError(`The MCP server "${server}" could not read ${uri}: ${why}`)
  }
}

/** One `@<server>:<uri>` in a prompt. */
export interface ResourceMention {
  readonly server: string
  readonly uri: string
}

/**
 * The `@<server>:<uri>` mentions of `text` whose server is one of `servers` (others, like `@user:pass`, are left
 * alone), each once, in order. The mention starts the text or follows whitespace, `(` or a quote, and ends at
 * whitespace or a quote; trailing sentence punctuation (`.,;:!?)`) is not part of the URI.
 */
export const resourceMentions = (text: string, servers: ReadonlyArray<string>): Array<ResourceMention> => {
  const seen = new Set<string>()
  const mentions: Array<ResourceMention> = []
  for (const match of text.matchAll(/(?:^|[\s("'])@([A-Za-z0-9_.-]+):([^\s"']+)/g)) {
    const server = match[1] ?? ""
    const uri = (match[2] ?? "").replace(/[.,;:!?)]+$/, "")
    if (!servers.includes(server) || uri === "" || seen.has(`${server}:${uri}`)) continue
    seen.add(`${server}:${uri}`)
    mentions.push({ server, uri })
  }
  return mentions
}

/**
 * The synthetic text part that attaches the resource `uri` of `server` (its text `content`, cut at
 * {@link RESOURCE_ATTACH_LIMIT} characters) to a prompt.
 */
export const resourcePart = (server: string, uri: string, content: string): PromptPart => {
  const cut = content.length > RESOURCE_ATTACH_LIMIT
  return {
    type: "text",
    synthetic: true,
    text:
      `The user attached the MCP resource ${server}:${uri}` +
      `${cut ? ` (first ${RESOURCE_ATTACH_LIMIT} characters of ${content.length})` : ""}:\n` +
      `<resource server="${server}" uri="${uri}">\n${cut ? content.slice(0, RESOURCE_ATTACH_LIMIT) : content}\n</resource>`
  }
}

/**
 * Synthetic text parts for the `@<server>:<uri>` mentions of a prompt: each resource's text (binary contents as a
 * note), cut at {@link RESOURCE_ATTACH_LIMIT} characters. A resource that cannot be read is left out and named in
 * `problems` with the reason; the prompt goes on without it.
 */
export const resourceParts = async (
  text: string,
  connections: ReadonlyArray<McpConnection>
): Promise<{ readonly parts: ReadonlyArray<PromptPart>; readonly problems: ReadonlyArray<string> }> => {
  const mentions = resourceMentions(
    text,
    connections.map((c) => c.server.name)
  )
  const problems: Array<string> = []
  const parts: Array<PromptPart> = []
  for (const { server, uri } of mentions) {
    try {
      parts.push(resourcePart(server, uri, await readResource(connections, server, uri)))
    } catch (error) {
      problems.push(error instanceof McpRequestError ? error.message : String(error))
    }
  }
  return { parts, problems }
}
