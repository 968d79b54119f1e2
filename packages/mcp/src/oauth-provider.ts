/**
 * Lathe's `OAuthClientProvider` for one remote MCP server: the SDK runs discovery, dynamic client registration,
 * PKCE and the token exchange; this class stores what they produce and owns the loopback redirect.
 *
 * Contract: the provider opens a browser only while `authorize()` runs it (its loopback listener is then up).
 * Anywhere else (an SDK transport meeting a 401 it cannot fix by refreshing) a needed sign-in opens nothing:
 * the SDK then fails with `UnauthorizedError`, which callers report as "needs auth".
 */
import { spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { isAbsolute } from "node:path"
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js"
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens
} from "@modelcontextprotocol/sdk/shared/auth.js"
import { type LoopbackCallback, startLoopbackCallback } from "./oauth-callback.js"
import { McpAuthError } from "./oauth-error.js"
import { checkServerName, readAuth, type StoredAuth, writeAuth } from "./oauth-store.js"

/** Options of {@link createOAuthProvider}. */
export interface OAuthProviderOptions {
  /** The server's name in the `mcp` config; names the stored file `<dataDir>/mcp-auth/<serverName>.json`. */
  readonly serverName: string
  /** The MCP endpoint URL (`https://…/mcp`); stored state made for another URL is ignored. */
  readonly serverUrl: string
  /** Lathe's data directory (absolute). */
  readonly dataDir: string
  /** Shows the authorization page; the default opens the system browser (`xdg-open`, `open`, `start`). */
  readonly openBrowser?: (url: URL) => Promise<void>
  /** A fixed loopback port for the redirect, for servers that do not accept any loopback port; default: a free one. */
  readonly redirectPort?: number
  /** The client name shown on the consent page; default "Lathe". */
  readonly clientName?: string
  /** The clock, in epoch milliseconds (tests move it); default `Date.now`. */
  readonly now?: () => number
}

/** The port written into `redirectUrl` while no listener runs (registration outside `authorize`). */
const IDLE_REDIRECT_PORT = 19_876

/** Opens a URL in the system browser; resolves once the opener started. */
export const openSystemBrowser = (url: URL): Promise<void> => {
  const [command, args] =
    process.platform === "darwin"
      ? ["open", [url.href]]
      : process.platform === "win32"
        ? ["cmd", ["/c", "start", '""', url.href.replaceAll("&", "^&")]]
        : ["xdg-open", [url.href]]
  return new Promise((resolve, reject) => {
    const child = spawn(command, args as Array<string>, { detached: true, stdio: "ignore" })
    child.once("error", reject)
    child.once("spawn", () => {
      child.unref()
      resolve()
    })
  })
}

/** The `OAuthClientProvider` that {@link createOAuthProvider} returns, plus what `authorize()` needs to drive it. */
export class McpOAuthProvider implements OAuthClientProvider {
  /** The options it was made with. */
  readonly options: OAuthProviderOptions
  private callback: LoopbackCallback | undefined

  constructor(options: OAuthProviderOptions) {
    this.options = options
  }

  /** `http://127.0.0.1:<port>/callback`, with the running listener's port when there is one. */
  get redirectUrl(): string {
    return this.callback?.redirectUrl ?? `http://127.0.0.1:${this.options.redirectPort ?? IDLE_REDIRECT_PORT}/callback`
  }

  /** A public client (no secret) using the authorization code grant with PKCE and refresh tokens. */
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.options.clientName ?? "Lathe",
      redirect_uris: [this.redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none"
    }
  }

  /** A fresh random `state` for each authorization request; the listener accepts only this one. */
  state(): string {
    const state = randomBytes(32).toString("base64url")
    this.callback?.expectState(state)
    return state
  }

  /** The stored client registration, if it was made for this server URL. */
  async clientInformation(): Promise<OAuthClientInformationMixed | undefined> {
    return (await this.load()).client
  }

  /** Stores the registration unchanged (the SDK binds it to its authorization server with `issuer`). */
  async saveClientInformation(client: OAuthClientInformationMixed): Promise<void> {
    await this.save({ client })
  }

  /** The stored tokens, if they were issued for this server URL (possibly expired: the SDK refreshes on a 401). */
  async tokens(): Promise<OAuthTokens | undefined> {
    return (await this.load()).tokens
  }

  /** Stores the tokens unchanged and remembers when the access token expires. */
  async saveTokens(tokens: OAuthTokens): Promise<void> {
    const expiresAt = tokens.expires_in === undefined ? undefined : this.now() + tokens.expires_in * 1000
    await this.save({ tokens, expiresAt, codeVerifier: undefined })
  }

  /** Stores the PKCE verifier of the sign-in in progress; the token exchange clears it. */
  async saveCodeVerifier(codeVerifier: string): Promise<void> {
    await this.save({ codeVerifier })
  }

  /** The PKCE verifier of the sign-in in progress; fails when none is in progress. */
  async codeVerifier(): Promise<string> {
    const { codeVerifier } = await this.load()
    if (codeVerifier !== undefined) return codeVerifier
    throw new McpAuthError({
      server: this.options.serverName,
      reason: "oauth",
      message: `No sign-in is in progress for MCP server "${this.options.serverName}": run \`lathe mcp auth ${this.options.serverName}\`.`
    })
  }

  /** Opens the authorization page, but only during `authorize()`; see the module contract. */
  async redirectToAuthorization(authorizationUrl: URL): Promise<void> {
    if (this.callback === undefined) return
    try {
      await (this.options.openBrowser ?? openSystemBrowser)(authorizationUrl)
    } catch (error) {
      throw new McpAuthError({
        server: this.options.serverName,
        reason: "browser",
        cause: error,
        message: `Could not open a browser for the sign-in to MCP server "${this.options.serverName}" (${(error as Error).message}). Open this address yourself: ${authorizationUrl.href}`
      })
    }
  }

  /** Forgets what the server said is no longer valid. */
  async invalidateCredentials(scope: "all" | "client" | "tokens" | "verifier" | "discovery"): Promise<void> {
    if (scope === "discovery") return
    const clearClient = scope === "all" || scope === "client"
    const clearTokens = scope === "all" || scope === "tokens"
    const clearVerifier = scope === "all" || scope === "verifier"
    await this.save({
      ...(clearClient ? { client: undefined } : {}),
      ...(clearTokens ? { tokens: undefined, expiresAt: undefined } : {}),
      ...(clearVerifier ? { codeVerifier: undefined } : {})
    })
  }

  /** Starts the loopback listener `authorize()` waits on; the redirect URL follows its port. */
  async listen(): Promise<LoopbackCallback> {
    await this.stopListening()
    this.callback = await startLoopbackCallback(this.options.serverName, this.options.redirectPort)
    return this.callback
  }

  /** Stops the loopback listener, if any. */
  async stopListening(): Promise<void> {
    const callback = this.callback
    this.callback = undefined
    await callback?.close()
  }

  private now(): number {
    return (this.options.now ?? Date.now)()
  }

  private async load(): Promise<Omit<StoredAuth, "serverUrl">> {
    const stored = await readAuth(this.options.serverName, this.options.dataDir)
    return stored === undefined || stored.serverUrl !== this.options.serverUrl ? {} : stored
  }

  private async save(change: { [K in keyof Omit<StoredAuth, "serverUrl">]?: StoredAuth[K] | undefined }) {
    const merged = { ...(await this.load()), ...change }
    const defined = Object.fromEntries(Object.entries(merged).filter(([, value]) => value !== undefined))
    await writeAuth(this.options.serverName, this.options.dataDir, { ...defined, serverUrl: this.options.serverUrl })
  }
}

/**
 * Makes the OAuth provider of one remote MCP server: pass it as `authProvider` to the SDK's
 * `StreamableHTTPClientTransport` / `SSEClientTransport`, and to `authorize()` for an interactive sign-in.
 * Throws `McpAuthError` (reason `"config"`) for a bad name, URL, data dir or port.
 */
export const createOAuthProvider = (options: OAuthProviderOptions): McpOAuthProvider => {
  const { serverName, serverUrl, dataDir, redirectPort } = options
  checkServerName(serverName)
  const bad = (message: string) => new McpAuthError({ server: serverName, reason: "config", message })
  if (!URL.canParse(serverUrl) || !/^https?:$/.test(new URL(serverUrl).protocol)) {
    throw bad(`MCP server "${serverName}" needs an http(s) URL to sign in to, not "${serverUrl}".`)
  }
  if (!isAbsolute(dataDir)) throw bad(`The data directory for MCP sign-ins must be absolute, not "${dataDir}".`)
  if (redirectPort !== undefined && !(Number.isInteger(redirectPort) && redirectPort > 0 && redirectPort < 65_536)) {
    throw bad(
      `The redirect port of MCP server "${serverName}" must be a whole number from 1 to 65535, not ${redirectPort}.`
    )
  }
  return new McpOAuthProvider(options)
}
