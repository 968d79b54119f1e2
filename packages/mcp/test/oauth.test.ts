/**
 * OAuth 2.1 end to end: a local authorization server built with the SDK's server-side helpers (`mcpAuthRouter`
 * for metadata, registration, authorization and token endpoints; `requireBearerAuth` in front of a real MCP
 * endpoint), on 127.0.0.1. The "browser" follows the authorization URL with fetch, redirects included.
 */
import { createHash, randomBytes } from "node:crypto"
import { mkdtemp, readFile, rm, stat } from "node:fs/promises"
import { createServer, type IncomingMessage, type RequestListener, type ServerResponse } from "node:http"
import { createRequire } from "node:module"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { InvalidGrantError, InvalidTokenError } from "@modelcontextprotocol/sdk/server/auth/errors.js"
import { requireBearerAuth } from "@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js"
import type { AuthorizationParams, OAuthServerProvider } from "@modelcontextprotocol/sdk/server/auth/provider.js"
import { getOAuthProtectedResourceMetadataUrl, mcpAuthRouter } from "@modelcontextprotocol/sdk/server/auth/router.js"
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js"
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import type { OAuthClientInformationFull, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { authFile, authorize, authStatus, createOAuthProvider, logout, McpAuthError } from "../src/oauth.js"

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
class TestAuthServer implements OAuthServerProvider {
  readonly clients = new Map<string, OAuthClientInformationFull>()
  readonly codes = new Map<string, { clientId: string; params: AuthorizationParams }>()
  readonly access = new Map<string, AuthInfo>()
  readonly refresh = new Map<string, string>()
  readonly counts = { pkceVerified: 0, refreshes: 0 }
  /** The verifier check is ours, so the test sees that the client's S256 challenge matches its verifier. */
  readonly skipLocalPkceValidation = true
  deny = false

  readonly clientsStore = {
    getClient: async (id: string) => this.clients.get(id),
    registerClient: async (client: OAuthClientInformationFull) => {
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
    return this.issue(client.client_id)
  }

  async exchangeRefreshToken(client: OAuthClientInformationFull, refreshToken: string) {
    if (this.refresh.get(refreshToken) !== client.client_id) throw new InvalidGrantError("Unknown refresh token")
    this.refresh.delete(refreshToken)
    this.counts.refreshes++
    return this.issue(client.client_id)
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

  private issue(clientId: string): OAuthTokens {
    const [accessToken, refreshToken] = [random(), random()]
    this.access.set(accessToken, { token: accessToken, clientId, scopes: [], expiresAt: Date.now() / 1000 + 3600 })
    this.refresh.set(refreshToken, clientId)
    return { access_token: accessToken, token_type: "Bearer", expires_in: 3600, refresh_token: refreshToken }
  }
}

/** The authorization server and, behind bearer auth, an MCP endpoint with a `whoami` tool, on one port. */
const startServers = async () => {
  const provider = new TestAuthServer()
  let app: ExpressApp | undefined
  const server = createServer((req, res) => app?.(req, res))
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const mcpUrl = new URL(`${base}/mcp`)
  app = express()
  app.use(
    mcpAuthRouter({
      provider,
      issuerUrl: new URL(base),
      resourceServerUrl: mcpUrl,
      authorizationOptions: { rateLimit: false },
      clientRegistrationOptions: { rateLimit: false },
      tokenOptions: { rateLimit: false }
    })
  )
  const bearer = requireBearerAuth({
    verifier: provider,
    resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(mcpUrl)
  })
  app.post("/mcp", express.json(), bearer, async (req: IncomingMessage & { body?: unknown }, res: ServerResponse) => {
    const mcp = new McpServer({ name: "oauth-test", version: "1.0.0" })
    mcp.registerTool("whoami", { description: "The caller's OAuth client id" }, (extra) => ({
      content: [{ type: "text", text: extra.authInfo?.clientId ?? "nobody" }]
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
const browser = (tamper?: (url: URL) => void) => {
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
const noBrowser = async (url: URL) => {
  throw new Error(`the browser was opened for ${url.href}`)
}

const whoami = async (mcpUrl: string, provider: ReturnType<typeof createOAuthProvider>) => {
  const client = new Client({ name: "lathe-test", version: "0.0.0" })
  await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: provider }))
  try {
    const result = await client.callTool({ name: "whoami" })
    return (result.content as Array<{ text?: string }>)[0]?.text
  } finally {
    await client.close()
  }
}

let dataDir: string
let servers: Awaited<ReturnType<typeof startServers>>
beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "lathe-oauth-"))
  servers = await startServers()
})
afterEach(async () => {
  await servers.close()
  await rm(dataDir, { recursive: true, force: true })
})

const providerFor = (openBrowser: (url: URL) => Promise<void>, now?: () => number) =>
  createOAuthProvider({
    serverName: "remote",
    serverUrl: servers.mcpUrl,
    dataDir,
    openBrowser,
    ...(now === undefined ? {} : { now })
  })

describe("authorize", () => {
  it("registers, signs in with PKCE through the loopback redirect and stores the tokens 0600", async () => {
    const page = browser()
    expect(await authorize(servers.mcpUrl, providerFor(page.open))).toBe("AUTHORIZED")

    expect(servers.provider.clients.size).toBe(1)
    const [client] = servers.provider.clients.values()
    expect(client?.redirect_uris[0]).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/)
    expect(client?.token_endpoint_auth_method).toBe("none")
    expect(servers.provider.counts.pkceVerified).toBe(1)
    expect(page.visits).toEqual([{ status: 200, body: expect.stringContaining("Signed in") }])

    const file = authFile("remote", dataDir)
    expect((await stat(file)).mode & 0o777).toBe(0o600)
    expect((await stat(join(dataDir, "mcp-auth"))).mode & 0o777).toBe(0o700)
    const stored = JSON.parse(await readFile(file, "utf8"))
    expect([...servers.provider.access.keys()]).toEqual([stored.tokens.access_token])
    expect(stored.client.client_id).toBe(client?.client_id)
    expect(stored.codeVerifier).toBeUndefined()
    expect(await authStatus("remote", dataDir)).toBe("authorized")
  })

  it("reuses the stored tokens from a new provider instance without a browser", async () => {
    expect(await authorize(servers.mcpUrl, providerFor(browser().open))).toBe("AUTHORIZED")
    const [clientId] = servers.provider.clients.keys()
    expect(await whoami(servers.mcpUrl, providerFor(noBrowser))).toBe(clientId)
    expect(servers.provider.counts.refreshes).toBe(0)
  })

  it("refreshes an expired access token when the server refuses it", async () => {
    expect(await authorize(servers.mcpUrl, providerFor(browser().open))).toBe("AUTHORIZED")
    const before = JSON.parse(await readFile(authFile("remote", dataDir), "utf8")).tokens.access_token
    servers.provider.expireAccessTokens()
    const later = Date.now() + 2 * 3600_000
    expect(await authStatus("remote", dataDir, { now: later })).toBe("expired (refresh available)")

    const [clientId] = servers.provider.clients.keys()
    expect(
      await whoami(
        servers.mcpUrl,
        providerFor(noBrowser, () => later)
      )
    ).toBe(clientId)
    expect(servers.provider.counts.refreshes).toBe(1)
    const after = JSON.parse(await readFile(authFile("remote", dataDir), "utf8")).tokens.access_token
    expect(after).not.toBe(before)
    expect(await authStatus("remote", dataDir, { now: later })).toBe("authorized")
  })

  it("refuses a redirect whose state was tampered with and stores no tokens", async () => {
    const page = browser((url) => url.searchParams.set("state", "forged"))
    const result = await authorize(servers.mcpUrl, providerFor(page.open))
    expect(result).toBeInstanceOf(McpAuthError)
    expect((result as McpAuthError).reason).toBe("state-mismatch")
    expect(page.visits[0]?.status).toBe(400)
    expect(servers.provider.counts.pkceVerified).toBe(0)
    expect(await authStatus("remote", dataDir)).toBe("needs auth")
  })

  it("says so when the person does not finish in time", async () => {
    const result = await authorize(
      servers.mcpUrl,
      providerFor(async () => {}),
      { timeoutMs: 150 }
    )
    expect(result).toMatchObject({ reason: "timeout", server: "remote" })
    expect((result as McpAuthError).message).toContain("lathe mcp auth remote")
  })

  it("reports the authorization server's refusal", async () => {
    servers.provider.deny = true
    const result = await authorize(servers.mcpUrl, providerFor(browser().open))
    expect(result).toMatchObject({ reason: "denied" })
    expect((result as McpAuthError).message).toContain("The user said no")
  })

  it("names the server it could not reach", async () => {
    await servers.close()
    const result = await authorize(servers.mcpUrl, providerFor(noBrowser))
    expect(result).toMatchObject({ reason: "oauth" })
    expect((result as McpAuthError).message).toContain(servers.mcpUrl)
  })
})

describe("logout", () => {
  it("removes the stored sign-in, after which the transport needs auth again", async () => {
    expect(await authorize(servers.mcpUrl, providerFor(browser().open))).toBe("AUTHORIZED")
    expect(await logout("remote", dataDir)).toBe(true)
    await expect(stat(authFile("remote", dataDir))).rejects.toThrow(/ENOENT/)
    expect(await authStatus("remote", dataDir)).toBe("needs auth")
    expect(await logout("remote", dataDir)).toBe(false)
    await expect(whoami(servers.mcpUrl, providerFor(noBrowser))).rejects.toBeInstanceOf(UnauthorizedError)
  })
})
