/**
 * Where a remote MCP server's OAuth state lives: one JSON file per server, `<dataDir>/mcp-auth/<server>.json`,
 * holding the dynamic client registration, the tokens and the pending PKCE code verifier.
 *
 * Contract: the folder is 0700 and the file is 0600 from the moment it exists (written to a 0600 temporary file,
 * then renamed over the old one, so a reader never sees half a file and a crash never leaves a wider mode).
 * A file that is not ours to read (bad JSON, wrong shape) is an `McpAuthError` with reason `"store"` that says
 * how to start again; a missing file is simply "nothing stored".
 */
import { chmod, mkdir, readFile, rename, rm, writeFile } from "node:fs/promises"
import { join } from "node:path"
import type { OAuthClientInformationMixed, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js"
import { z } from "zod"
import { McpAuthError } from "./oauth-error.js"

/** What is stored for one server. Every field but `serverUrl` is absent until the flow produced it. */
export interface StoredAuth {
  /** The MCP server URL the state belongs to; state stored for another URL is never presented to this one. */
  readonly serverUrl: string
  /** The client registration, exactly as the SDK handed it over (with its `issuer` stamp). */
  readonly client?: OAuthClientInformationMixed
  /** The tokens, exactly as the SDK handed them over (with their `issuer` stamp). */
  readonly tokens?: OAuthTokens
  /** When the access token expires, in epoch milliseconds; absent when the server gave no `expires_in`. */
  readonly expiresAt?: number
  /** The PKCE code verifier of the sign-in in progress. */
  readonly codeVerifier?: string
  /**
   * Scopes the server refused a request for lacking (a 403 `insufficient_scope` met where no browser may open):
   * the next sign-in requests them as well, and never settles for a refresh. Cleared once a sign-in succeeds.
   */
  readonly stepUpScope?: string
}

const FileSchema = z.object({
  version: z.literal(1),
  serverUrl: z.string(),
  client: z.unknown().optional(),
  tokens: z.unknown().optional(),
  expiresAt: z.number().optional(),
  codeVerifier: z.string().optional(),
  stepUpScope: z.string().optional()
})

/** Server names become file names: characters outside `[A-Za-z0-9._-]` are percent-encoded, so names never collide. */
const fileStem = (serverName: string): string =>
  Array.from(serverName, (char) =>
    /[A-Za-z0-9._-]/.test(char)
      ? char
      : Array.from(
          new TextEncoder().encode(char),
          (byte) => `%${byte.toString(16).toUpperCase().padStart(2, "0")}`
        ).join("")
  ).join("")

/** Checks a server name before it becomes part of a path. */
export const checkServerName = (serverName: string): void => {
  if (serverName.length === 0 || serverName === "." || serverName === "..") {
    throw new McpAuthError({
      server: serverName,
      reason: "config",
      message: `"${serverName}" is not a usable MCP server name: give the server a name in the "mcp" config.`
    })
  }
}

/** The folder holding every server's OAuth file. */
export const authDir = (dataDir: string): string => join(dataDir, "mcp-auth")

/** The OAuth file of one server. */
export const authFile = (serverName: string, dataDir: string): string => {
  checkServerName(serverName)
  return join(authDir(dataDir), `${fileStem(serverName)}.json`)
}

const unreadable = (serverName: string, file: string, why: string): McpAuthError =>
  new McpAuthError({
    server: serverName,
    reason: "store",
    message:
      `The stored sign-in for MCP server "${serverName}" (${file}) is unreadable: ${why}. ` +
      `Run \`lathe mcp logout ${serverName}\`, then \`lathe mcp auth ${serverName}\`.`
  })

/** The SDK's OAuth schemas, loaded when a stored sign-in is read (not by every run that loads this module). */
type AuthSchemas = typeof import("@modelcontextprotocol/sdk/shared/auth.js")

const parseClient = (schemas: AuthSchemas, value: unknown): OAuthClientInformationMixed | undefined => {
  const full = schemas.OAuthClientInformationFullSchema.safeParse(value)
  if (full.success) return full.data
  const minimal = schemas.OAuthClientInformationSchema.safeParse(value)
  return minimal.success ? minimal.data : undefined
}

/** Reads a server's stored state; `undefined` when nothing is stored. */
export const readAuth = async (serverName: string, dataDir: string): Promise<StoredAuth | undefined> => {
  const file = authFile(serverName, dataDir)
  let text: string
  try {
    text = await readFile(file, "utf8")
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined
    throw unreadable(serverName, file, (error as Error).message)
  }
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (error) {
    throw unreadable(serverName, file, `not JSON (${(error as Error).message})`)
  }
  const parsed = FileSchema.safeParse(json)
  if (!parsed.success) throw unreadable(serverName, file, "unexpected content")
  const { serverUrl, client, tokens, expiresAt, codeVerifier, stepUpScope } = parsed.data
  const schemas: AuthSchemas = await import("@modelcontextprotocol/sdk/shared/auth.js")
  const parsedClient = client === undefined ? undefined : parseClient(schemas, client)
  if (client !== undefined && parsedClient === undefined) throw unreadable(serverName, file, "bad client registration")
  const parsedTokens = tokens === undefined ? undefined : schemas.OAuthTokensSchema.safeParse(tokens)
  if (parsedTokens !== undefined && !parsedTokens.success) throw unreadable(serverName, file, "bad tokens")
  return {
    serverUrl,
    ...(parsedClient === undefined ? {} : { client: parsedClient }),
    ...(parsedTokens === undefined ? {} : { tokens: parsedTokens.data }),
    ...(expiresAt === undefined ? {} : { expiresAt }),
    ...(codeVerifier === undefined ? {} : { codeVerifier }),
    ...(stepUpScope === undefined ? {} : { stepUpScope })
  }
}

/** Replaces a server's stored state atomically; the file is 0600 and its folder 0700. */
export const writeAuth = async (serverName: string, dataDir: string, auth: StoredAuth): Promise<void> => {
  const file = authFile(serverName, dataDir)
  const dir = authDir(dataDir)
  const temporary = join(dir, `.${process.getBuiltinModule("node:crypto").randomBytes(8).toString("hex")}.tmp`)
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 })
    await chmod(dir, 0o700)
    await writeFile(temporary, `${JSON.stringify({ version: 1, ...auth }, null, 2)}\n`, { mode: 0o600, flag: "wx" })
    await rename(temporary, file)
  } catch (error) {
    await rm(temporary, { force: true })
    throw new McpAuthError({
      server: serverName,
      reason: "store",
      message: `Could not save the sign-in for MCP server "${serverName}" to ${file}: ${(error as Error).message}.`
    })
  }
}

/** Deletes a server's stored state; `true` when there was something to delete. */
export const removeAuth = async (serverName: string, dataDir: string): Promise<boolean> => {
  const file = authFile(serverName, dataDir)
  try {
    await rm(file)
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return false
    throw new McpAuthError({
      server: serverName,
      reason: "store",
      message: `Could not delete the sign-in for MCP server "${serverName}" at ${file}: ${(error as Error).message}.`
    })
  }
}
