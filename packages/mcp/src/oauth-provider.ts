/**
 * Lathe's `OAuthClientProvider` for one remote MCP server: the SDK runs discovery, dynamic client registration,
 * PKCE and the token exchange; this class stores what they produce and owns the loopback redirect.
 *
 * Contract: the provider opens a browser only while `authorize()` runs it (its loopback listener is then up).
 * Anywhere else (an SDK transport meeting a 401 it cannot fix by refreshing) a needed sign-in opens nothing:
 * the SDK then fails with `UnauthorizedError`, which callers report as "needs auth". Only a provider made with
 * `interactive: true` lets the transport start `authorize()` by itself (a 401 at connect, a 403 scope step-up).
 *
 * Client identity, in order: the configured `clientId` (pre-registered; its secret, if any, is never written to
 * disk), else a stored registration, else (decided by the SDK) the configured `clientMetadataUrl` as the
 * client_id when the authorization server advertises `client_id_metadata_document_supported`, else dynamic
 * registration.
 */
import { isAbsolute } from "node:path"
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js"
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens
} from "@modelcontextprotocol/sdk/shared/auth.js"
import { type LoopbackCallback, openSystemBrowser, startLoopbackCallback } from "./oauth-callback.js"
import { McpAuthError } from "./oauth-error.js"
import { checkServerName, readAuth, type StoredAuth, writeAuth } from "./oauth-store.js"

/** A server's `oauth` settings from config: a pre-registered client, a scope, a client ID metadata document. */
export interface OAuthSettings {
  /** A client_id registered with the authorization server beforehand; no dynamic registration then. */
  readonly clientId?: string | undefined
  /** The pre-registered client's secret (sent as `client_secret_basic`, or `client_secret_post` where only that is offered). */
  readonly clientSecret?: string | undefined
  /** The scope to request, space-separated; wins over the one a server's 401 names and its `scopes_supported`. */
  readonly scope?: string | undefined
  /** An https URL serving this client's metadata document, used as the client_id where the server accepts one. */
  readonly clientMetadataUrl?: string | undefined
}

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
  /** The server's `oauth` config; a transport fills it in from the server's config when it is absent. */
  readonly oauth?: OAuthSettings
  /**
   * Whether a request may start a sign-in by itself (a 401 at connect, a 403 asking for a wider scope): the browser
   * opens mid-session and the request is retried once. Default false (`lathe run`): such a request fails with an
   * `McpAuthError` that names the missing scope and `lathe mcp auth <name>`.
   */
  readonly interactive?: boolean
}

/** The port written into `redirectUrl` while no listener runs (registration outside `authorize`). */
const IDLE_REDIRECT_PORT = 19_876

/** The `OAuthClientProvider` that {@link createOAuthProvider} returns, plus what `authorize()` needs to drive it. */
export class McpOAuthProvider implements OAuthClientProvider {
  /** The options it was made with. */
  readonly options: OAuthProviderOptions
  /** The client ID metadata document URL from config, offered by the SDK where the server supports it. */
  declare readonly clientMetadataUrl?: string
  private callback: LoopbackCallback | undefined

  constructor(options: OAuthProviderOptions) {
    this.options = options
    const metadataUrl = options.oauth?.clientMetadataUrl
    if (metadataUrl !== undefined) this.clientMetadataUrl = metadataUrl
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
    const state = process.getBuiltinModule("node:crypto").randomBytes(32).toString("base64url")
    this.callback?.expectState(state)
    return state
  }

  /**
   * The configured pre-registered client (no `token_endpoint_auth_method`: the SDK picks `client_secret_basic` with a
   * secret unless the server offers only `client_secret_post`, and `none` without one), else the stored
   * registration if it was made for this server URL.
   */
  async clientInformation(): Promise<OAuthClientInformationMixed | undefined> {
    const { clientId, clientSecret } = this.options.oauth ?? {}
    if (clientId !== undefined) return { client_id: clientId, ...(clientSecret ? { client_secret: clientSecret } : {}) }
    return (await this.load()).client
  }

  /**
   * Stores the registration unchanged (the SDK binds it to its authorization server with `issuer`). For a
   * pre-registered client only its id is kept, so tokens stay tied to it and the secret stays in the config.
   */
  async saveClientInformation(client: OAuthClientInformationMixed): Promise<void> {
    const { clientId } = this.options.oauth ?? {}
    await this.save({ client: clientId === undefined ? client : { client_id: clientId } })
  }

  /**
   * The stored tokens, if they were issued for this server URL (possibly expired: the SDK refreshes on a 401) and,
   * with a pre-registered client, to that client.
   */
  async tokens(): Promise<OAuthTokens | undefined> {
    const stored = await this.load()
    const { clientId } = this.options.oauth ?? {}
    if (clientId !== undefined && stored.client?.client_id !== clientId) return undefined
    return stored.tokens
  }

  /** Stores the tokens unchanged and remembers when the access token expires. */
  async saveTokens(tokens: OAuthTokens): Promise<void> {
    const expiresAt = tokens.expires_in === undefined ? undefined : this.now() + tokens.expires_in * 1000
    await this.save({ tokens, expiresAt, codeVerifier: undefined })
  }

  /** The scopes a server refused a request for lacking since the last sign-in (see `StoredAuth.stepUpScope`). */
  async stepUpScope(): Promise<string | undefined> {
    return (await this.load()).stepUpScope
  }

  /** Remembers (or, with `undefined`, forgets) the scopes the next sign-in must request. */
  async saveStepUpScope(scope: string | undefined): Promise<void> {
    await this.save({ stepUpScope: scope })
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

  /**
   * Forgets what the server said is no longer valid. A rejected pre-registered client cannot be forgotten (it is
   * config): that fails the sign-in with an `McpAuthError` pointing at the config.
   */
  async invalidateCredentials(scope: "all" | "client" | "tokens" | "verifier" | "discovery"): Promise<void> {
    if (scope === "discovery") return
    const { clientId } = this.options.oauth ?? {}
    if (clientId !== undefined && (scope === "all" || scope === "client")) {
      const name = this.options.serverName
      throw new McpAuthError({
        server: name,
        reason: "oauth",
        message:
          `The authorization server of MCP server "${name}" rejected the pre-registered client "${clientId}": check ` +
          `"oauth.clientId" and "oauth.clientSecret" of "${name}" in your config, then run \`lathe mcp auth ${name}\`.`
      })
    }
    const clearClient = scope === "all" || scope === "client"
    const clearTokens = scope === "all" || scope === "tokens"
    const clearVerifier = scope === "all" || scope === "verifier"
    await this.save({
      ...(clearClient ? { client: undefined } : {}),
      ...(clearTokens ? { tokens: undefined, expiresAt: undefined } : {}),
      ...(clearVerifier ? { codeVerifier: undefined } : {})
    })
  }

  /**
   * This provider, or, when it was made without `oauth` settings, one that uses `settings` (a server's `oauth` config).
   * Throws like {@link createOAuthProvider} for an unusable `clientMetadataUrl`.
   */
  withSettings(settings: OAuthSettings | undefined): McpOAuthProvider {
    if (settings === undefined || this.options.oauth !== undefined) return this
    return createOAuthProvider({ ...this.options, oauth: settings })
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
  const { serverName, serverUrl, dataDir, redirectPort, oauth } = options
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
  const metadataUrl = oauth?.clientMetadataUrl
  if (metadataUrl !== undefined && !isClientMetadataUrl(metadataUrl)) {
    throw bad(
      `The clientMetadataUrl of MCP server "${serverName}" must be an https URL with a path (where the client ID ` +
        `metadata document is served), not "${metadataUrl}".`
    )
  }
  return new McpOAuthProvider(options)
}

const isClientMetadataUrl = (url: string): boolean =>
  URL.canParse(url) && new URL(url).protocol === "https:" && new URL(url).pathname !== "/"
