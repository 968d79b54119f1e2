/**
 * OAuth 2.1 for remote MCP servers: the public surface behind `lathe mcp auth <name>` and
 * `lathe mcp logout <name>`, and the `authProvider` the remote transports use.
 *
 * The SDK's client auth (`auth()` from `@modelcontextprotocol/sdk/client/auth.js`) does discovery (RFC 9728 /
 * RFC 8414), dynamic client registration (RFC 7591), PKCE (S256) and the token exchange and refresh. This module
 * stores the results in `<dataDir>/mcp-auth/<server>.json` (0600) and brings the browser back through a loopback
 * listener on 127.0.0.1.
 */
import { auth } from "@modelcontextprotocol/sdk/client/auth.js"
import { McpAuthError } from "./oauth-error.js"
import type { McpOAuthProvider } from "./oauth-provider.js"
import { readAuth, removeAuth } from "./oauth-store.js"

export { type LoopbackCallback, startLoopbackCallback } from "./oauth-callback.js"
export { McpAuthError, type McpAuthFailureReason } from "./oauth-error.js"
export {
  createOAuthProvider,
  McpOAuthProvider,
  type OAuthProviderOptions,
  openSystemBrowser
} from "./oauth-provider.js"
export { authFile } from "./oauth-store.js"

/** The MCP server to sign in to: its URL, or a config entry that has one. */
export type OAuthServer = string | URL | { readonly url: string | URL }

/** What `authorize` returns: `"AUTHORIZED"`, or the error that says what failed (never thrown). */
export type AuthorizeResult = "AUTHORIZED" | McpAuthError

/** Options of {@link authorize}. */
export interface AuthorizeOptions {
  /** How long the person has to finish in the browser, in milliseconds; default 5 minutes. */
  readonly timeoutMs?: number
}

/** A server's sign-in state, as `lathe mcp list` shows it. */
export type AuthStatus = "authorized" | "needs auth" | "expired (refresh available)"

const DEFAULT_TIMEOUT_MS = 5 * 60_000

const describe = (error: unknown): string => {
  if (!(error instanceof Error)) return String(error)
  const cause = error.cause instanceof Error ? ` (${error.cause.message})` : ""
  return `${error.message}${cause}`
}

/**
 * Signs in to a remote MCP server: refreshes the stored tokens when that works, otherwise registers the client if
 * needed, opens the authorization page through `provider`'s `openBrowser`, waits for the loopback redirect (checking
 * `state`) and exchanges the code. Never throws: a failure comes back as an `McpAuthError` whose `message` can be
 * printed as it is.
 */
export const authorize = async (
  server: OAuthServer,
  provider: McpOAuthProvider,
  options: AuthorizeOptions = {}
): Promise<AuthorizeResult> => {
  const serverUrl = typeof server === "string" || server instanceof URL ? server : server.url
  const name = provider.options.serverName
  try {
    const callback = await provider.listen()
    const first = await auth(provider, { serverUrl })
    if (first === "AUTHORIZED") return "AUTHORIZED"
    const code = await callback.waitForCode(options.timeoutMs ?? DEFAULT_TIMEOUT_MS)
    const second = await auth(provider, { serverUrl, authorizationCode: code })
    if (second === "AUTHORIZED") return "AUTHORIZED"
    return new McpAuthError({
      server: name,
      reason: "oauth",
      message: `MCP server "${name}" asked for a second sign-in right after the first. Run \`lathe mcp auth ${name}\` again.`
    })
  } catch (error) {
    if (error instanceof McpAuthError) return error
    return new McpAuthError({
      server: name,
      reason: "oauth",
      cause: error,
      message: `Sign-in to MCP server "${name}" at ${String(serverUrl)} failed: ${describe(error)}.`
    })
  } finally {
    await provider.stopListening()
  }
}

/** Forgets a server's sign-in (tokens and client registration); `true` when there was one. */
export const logout = (serverName: string, dataDir: string): Promise<boolean> => removeAuth(serverName, dataDir)

/** Options of {@link authStatus}. */
export interface AuthStatusOptions {
  /** The server's configured URL: a sign-in stored for another URL counts as none (the provider ignores it too). */
  readonly serverUrl?: string
  /** The time to judge expiry at, in epoch milliseconds; default now. */
  readonly now?: number
}

/**
 * A server's sign-in state from what is stored: no access token → "needs auth"; an access token past its expiry →
 * "expired (refresh available)" with a refresh token, else "needs auth"; otherwise "authorized". Throws
 * `McpAuthError` (reason `"store"`) when the stored file is unreadable.
 */
export const authStatus = async (
  serverName: string,
  dataDir: string,
  options: AuthStatusOptions = {}
): Promise<AuthStatus> => {
  const stored = await readAuth(serverName, dataDir)
  const tokens = options.serverUrl === undefined || stored?.serverUrl === options.serverUrl ? stored?.tokens : undefined
  if (tokens === undefined) return "needs auth"
  const expired = stored?.expiresAt !== undefined && (options.now ?? Date.now()) >= stored.expiresAt
  if (!expired) return "authorized"
  return tokens.refresh_token ? "expired (refresh available)" : "needs auth"
}
