/**
 * OAuth 2.1 for remote MCP servers: the public surface behind `lathe mcp auth <name>` and
 * `lathe mcp logout <name>`, and the `authProvider` the remote transports use.
 *
 * The SDK's client auth (`auth()` from `@modelcontextprotocol/sdk/client/auth.js`) does discovery (RFC 9728 /
 * RFC 8414), client identity (pre-registered, client ID metadata document or dynamic registration, RFC 7591), PKCE
 * (S256) and the token exchange and refresh. This module first reads the server's own challenge (its 401's
 * `WWW-Authenticate`: where its metadata is, which scope it wants), stores the results in
 * `<dataDir>/mcp-auth/<server>.json` (0600) and brings the browser back through a loopback listener on 127.0.0.1.
 *
 * Scope requested, first that applies: for a step-up (a 403 `insufficient_scope`), what the current tokens were
 * granted plus the configured scope plus what the 403 names; otherwise the configured `oauth.scope`, else the 401's
 * `scope`, else (the SDK's choice) the protected resource metadata's `scopes_supported`. Scopes a server refused a
 * request for since the last sign-in are always added.
 */
import { auth } from "@modelcontextprotocol/sdk/client/auth.js"
import { type Challenge, isStepUp, joinScopes, probeChallenge } from "./oauth-challenge.js"
import { McpAuthError } from "./oauth-error.js"
import type { McpOAuthProvider } from "./oauth-provider.js"
import { readAuth, removeAuth } from "./oauth-store.js"

export { type LoopbackCallback, openSystemBrowser, startLoopbackCallback } from "./oauth-callback.js"
export { type Challenge, readChallenge } from "./oauth-challenge.js"
export { McpAuthError, type McpAuthFailureReason } from "./oauth-error.js"
export {
  createOAuthProvider,
  McpOAuthProvider,
  type OAuthProviderOptions,
  type OAuthSettings
} from "./oauth-provider.js"
export { authFile } from "./oauth-store.js"

/** The MCP server to sign in to: its URL, or a config entry that has one (its `headers` go with the first request). */
export type OAuthServer =
  | string
  | URL
  | { readonly url: string | URL; readonly headers?: Readonly<Record<string, string>> }

/** What `authorize` returns: `"AUTHORIZED"`, or the error that says what failed (never thrown). */
export type AuthorizeResult = "AUTHORIZED" | McpAuthError

/** Options of {@link authorize}. */
export interface AuthorizeOptions {
  /** How long the person has to finish in the browser, in milliseconds; default 5 minutes. */
  readonly timeoutMs?: number
  /** The refusal that made a sign-in necessary; without one, `authorize` asks the server with a tokenless request. */
  readonly challenge?: Challenge
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
 * `provider` as the SDK's flow sees it when a refresh cannot help (a wider scope is needed): without stored tokens.
 * Everything else (the listener, the stored client and verifier, saving) goes to the provider itself.
 */
const withoutStoredTokens = (provider: McpOAuthProvider): McpOAuthProvider =>
  Object.create(provider, { tokens: { value: async () => undefined } }) as McpOAuthProvider

/**
 * Signs in to a remote MCP server: reads its challenge (see the module comment for the scope), refreshes the stored
 * tokens when that is enough, otherwise finds the client's identity, opens the authorization page through
 * `provider`'s `openBrowser`, waits for the loopback redirect (checking `state`) and exchanges the code. Never
 * throws: a failure comes back as an `McpAuthError` whose `message` can be printed as it is.
 */
export const authorize = async (
  server: OAuthServer,
  provider: McpOAuthProvider,
  options: AuthorizeOptions = {}
): Promise<AuthorizeResult> => {
  const [serverUrl, headers] =
    typeof server === "string" || server instanceof URL ? [server, undefined] : [server.url, server.headers]
  const name = provider.options.serverName
  try {
    const callback = await provider.listen()
    const challenge = options.challenge ?? (await probeChallenge(serverUrl, headers))
    const configured = provider.options.oauth?.scope
    const pending = await provider.stepUpScope()
    const stepUp = isStepUp(challenge)
    const scope = stepUp
      ? joinScopes((await provider.tokens())?.scope, configured, challenge?.scope, pending)
      : joinScopes(configured ?? challenge?.scope, pending)
    const flow = stepUp || pending !== undefined ? withoutStoredTokens(provider) : provider
    const params = {
      serverUrl,
      ...(scope === undefined ? {} : { scope }),
      ...(challenge?.resourceMetadataUrl ? { resourceMetadataUrl: challenge.resourceMetadataUrl } : {})
    }
    let result = await auth(flow, params)
    if (result !== "AUTHORIZED") {
      const code = await callback.waitForCode(options.timeoutMs ?? DEFAULT_TIMEOUT_MS)
      result = await auth(flow, { ...params, authorizationCode: code })
    }
    if (result === "AUTHORIZED") {
      if (pending !== undefined) await provider.saveStepUpScope(undefined)
      return "AUTHORIZED"
    }
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
