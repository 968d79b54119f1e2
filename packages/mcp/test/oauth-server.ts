/**
 * The OAuth test rig: a local authorization server built with the SDK's server-side helpers (`mcpAuthRouter` for
 * metadata, registration, authorization and token endpoints; `requireBearerAuth` in front of a real MCP endpoint),
 * on 127.0.0.1, and "browsers" that follow the authorization URL with fetch, redirects included.
 */
import { createHash, randomBytes } from "node:crypto"
import { createServer, type IncomingMessage, type RequestListener, type ServerResponse } from "node:http"
import { createRequire } from "node:module"
import type { AddressInfo } from "node:net"
import { InvalidGrantError, InvalidTokenError } from "@modelcontextprotocol/sdk/server/auth/errors.js"
import { requireBearerAuth } from "@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js"
import type { AuthorizationParams, OAuthServerProvider } from "@modelcontextprotocol/sdk/server/auth/provider.js"
import { getOAuthProtectedResourceMetadataUrl, mcpAuthRouter } from "@modelcontextprotocol/sdk/server/auth/router.js"
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js"
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import type { OAuthClientInformationFull, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js"

// express is the SDK's own dependency (its auth router is an express router); load it the way the SDK does.
interface ExpressApp extends RequestListener {
  use(...handlers: Array<unknown>): void
  all(path: string, ...handlers: Array<unknown>): void
  post(path: string, ...handlers: Array<unknown>): void
}
const sdkRequire = createRequire(
  createRequire(import.meta.url).resolve("@modelcontextprotocol/sdk/server/auth/router.js")
)
const express = sdkRequire("express") as { (): ExpressApp; json(): unknown }

const random = () => randomBytes(16).toString("hex")

/** An authorization server that approves at once (or declines), checks PKCE S256 itself and counts what it did. */
export class TestAuthServer implements OAuthServerProvider {
  readonly clients = new Map<string, OAuthClientInformationFull>()
  readonly codes = new Map<string, { clientId: string; params: AuthorizationParams }>()
  readonly access = new Map<string, AuthInfo>()
  readonly refresh = new Map<string, { clientId: string; scopes: Array<string> }>()
  readonly counts = { pkceVerified: 0, refreshes: 0, registrations: 0 }
  /** Every authorization request: which client asked, for which scopes. */
  readonly authorizations: Array<{ clientId: string; scopes: Array<string> }> = []
  /** The verifier check is ours, so the test sees that the client's S256 challenge matches its verifier. */
  readonly skipLocalPkceValidation = true
  deny = false

  readonly clientsStore = {
    getClient: async (id: string) => this.clients.get(id),
    registerClient: async (client: OAuthClientInformationFull) => {
      this.counts.registrations++
      this.clients.set(client.client_id, client)
      return client
    }
  }

  async authorize(
    client: OAuthClientInformationFull,
    params: AuthorizationParams,
    res: ServerResponse & {
      redirect(status: number, url: string): void
    }
  ): Promise<void> {
    this.authorizations.push({ clientId: client.client_id, scopes: params.scopes ?? [] })
    const target = new URL(params.redirectUri)
    if (this.deny) {
      target.searchParams.set("error", "access_denied")
      target.searchParams.set("error_description", "The user said no")
    } else {
      const code = random()
      this.codes.set(code, { clientId: client.client_id, params })
      target.searchParams.set("code", code)
    }
    if (params.state !== undefined) target.searchParams.set("state", params.state)
    res.redirect(302, target.href)
  }

  async challengeForAuthorizationCode(_client: OAuthClientInformationFull, code: string): Promise<string> {
    const grant = this.codes.get(code)
    if (grant === undefined) throw new InvalidGrantError("Unknown authorization code")
    return grant.params.codeChallenge
  }

  async exchangeAuthorizationCode(client: OAuthClientInformationFull, code: string, verifier?: string) {
    const grant = this.codes.get(code)
    this.codes.delete(code)
    if (grant === undefined || grant.clientId !== client.client_id) throw new InvalidGrantError("Unknown code")
    const challenge = createHash("sha256")
      .update(verifier ?? "")
      .digest("base64url")
    if (verifier === undefined || challenge !== grant.params.codeChallenge) throw new InvalidGrantError("PKCE failed")
    this.counts.pkceVerified++
    return this.issue(client.client_id, grant.params.scopes ?? [])
  }

  async exchangeRefreshToken(client: OAuthClientInformationFull, refreshToken: string) {
    const grant = this.refresh.get(refreshToken)
    if (grant?.clientId !== client.client_id) throw new InvalidGrantError("Unknown refresh token")
    this.refresh.delete(refreshToken)
    this.counts.refreshes++
    return this.issue(client.client_id, grant.scopes)
  }

  async verifyAccessToken(token: string): Promise<AuthInfo> {
    const info = this.access.get(token)
    if (info === undefined) throw new InvalidTokenError("Unknown access token")
    return info
  }

  /** Every access token issued so far is now past its expiry. */
  expireAccessTokens(): void {
    for (const info of this.access.values()) info.expiresAt = 0
  }

  private issue(clientId: string, scopes: Array<string>): OAuthTokens {
    const [accessToken, refreshToken] = [random(), random()]
    this.access.set(accessToken, { token: accessToken, clientId, scopes, expiresAt: Date.now() / 1000 + 3600 })
    this.refresh.set(refreshToken, { clientId, scopes })
    return {
      access_token: accessToken,
      token_type: "Bearer",
      expires_in: 3600,
      refresh_token: refreshToken,
      ...(scopes.length > 0 ? { scope: scopes.join(" ") } : {})
    }
  }
}

/** How {@link startServers} protects its MCP endpoint. */
export interface ServerOptions {
  /** The scope every MCP request needs; named in the 401's `WWW-Authenticate`. */
  readonly requiredScope?: string
  /** Advertised as `scopes_supported` in the protected resource and authorization server metadata. */
  readonly scopesSupported?: Array<string>
}

/** The scope the `publish` tool needs on top of `requiredScope`: calling it without answers 403 insufficient_scope. */
export const PUBLISH_SCOPE = "mcp:write"

/**
 * The authorization server and, behind bearer auth, an MCP endpoint with a `whoami` tool (the caller's client id)
 * and a `publish` tool that needs {@link PUBLISH_SCOPE}, on one port.
 */
export const startServers = async (options: ServerOptions = {}) => {
  const provider = new TestAuthServer()
  let app: ExpressApp | undefined
  const server = createServer((req, res) => app?.(req, res))
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const mcpUrl = new URL(`${base}/mcp`)
  const resourceMetadataUrl = getOAuthProtectedResourceMetadataUrl(mcpUrl)
  app = express()
  app.use(
    mcpAuthRouter({
      provider,
      issuerUrl: new URL(base),
      resourceServerUrl: mcpUrl,
      ...(options.scopesSupported ? { scopesSupported: options.scopesSupported } : {}),
      authorizationOptions: { rateLimit: false },
      clientRegistrationOptions: { rateLimit: false },
      tokenOptions: { rateLimit: false }
    })
  )
  const required = options.requiredScope?.split(" ") ?? []
  const bearer = requireBearerAuth({ verifier: provider, requiredScopes: required, resourceMetadataUrl })
  type McpRequest = IncomingMessage & { body?: { method?: string; params?: { name?: string } }; auth?: AuthInfo }
  const stepUp = (req: McpRequest, res: ServerResponse, next: () => void) => {
    const publishing = req.body?.method === "tools/call" && req.body.params?.name === "publish"
    if (!publishing || req.auth?.scopes.includes(PUBLISH_SCOPE)) return next()
    const scope = [...required, PUBLISH_SCOPE].join(" ")
    res.setHeader(
      "www-authenticate",
      `Bearer error="insufficient_scope", scope="${scope}", resource_metadata="${resourceMetadataUrl}"`
    )
    res.writeHead(403, { "content-type": "application/json" }).end('{"error":"insufficient_scope"}')
  }
  app.post("/mcp", express.json(), bearer, stepUp, async (req: McpRequest, res: ServerResponse) => {
    const mcp = new McpServer({ name: "oauth-test", version: "1.0.0" })
    mcp.registerTool("whoami", { description: "The caller's OAuth client id" }, (extra) => ({
      content: [{ type: "text", text: extra.authInfo?.clientId ?? "nobody" }]
    }))
    mcp.registerTool("publish", { description: "Needs the write scope" }, () => ({
      content: [{ type: "text", text: "published" }]
    }))
    const transport = new StreamableHTTPServerTransport({ enableJsonResponse: true })
    res.on("close", () => void mcp.close())
    await mcp.connect(transport)
    await transport.handleRequest(req, res, req.body)
  })
  app.all("/mcp", (_req: IncomingMessage, res: ServerResponse) => res.writeHead(405).end())
  const close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve())
      server.closeAllConnections()
    })
  return { provider, base, mcpUrl: mcpUrl.href, close }
}

/** A browser that loads the authorization page and follows its redirects; `tamper` edits the URL first. */
export const browser = (tamper?: (url: URL) => void) => {
  const visits: Array<{ status: number; body: string }> = []
  const open = async (url: URL) => {
    const target = new URL(url)
    tamper?.(target)
    const response = await fetch(target)
    visits.push({ status: response.status, body: await response.text() })
  }
  return { visits, open }
}

/** A browser that must never be needed. */
export const noBrowser = async (url: URL) => {
  throw new Error(`the browser was opened for ${url.href}`)
}
