/**
 * OAuth 2.1 end to end against the local authorization server and MCP endpoint of `oauth-server.ts`.
 */
import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { McpConnection } from "../src/connection.js"
import {
  authFile,
  authorize,
  authStatus,
  createOAuthProvider,
  logout,
  McpAuthError,
  type OAuthSettings
} from "../src/oauth.js"
import { type RemoteServer, resolveServers } from "../src/servers.js"
import { mcpTools } from "../src/tools.js"
import { runTool } from "./helpers.js"
import { browser, noBrowser, PUBLISH_SCOPE, type ServerOptions, startServers } from "./oauth-server.js"

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

const providerFor = (
  openBrowser: (url: URL) => Promise<void>,
  now?: () => number,
  more: { readonly oauth?: OAuthSettings; readonly interactive?: boolean } = {}
) =>
  createOAuthProvider({
    serverName: "remote",
    serverUrl: servers.mcpUrl,
    dataDir,
    openBrowser,
    ...(now === undefined ? {} : { now }),
    ...more
  })

/** Restarts the servers with other protection. */
const restart = async (options: ServerOptions) => {
  await servers.close()
  servers = await startServers(options)
}

const remote = (): RemoteServer => ({
  name: "remote",
  source: "test",
  enabled: true,
  timeout: 10_000,
  wait: false,
  type: "remote",
  url: servers.mcpUrl,
  headers: {}
})

/** Connects as `lathe run` does (the provider comes from the plugin's factory) and runs `tool`; closes after. */
const callTool = async (provider: ReturnType<typeof createOAuthProvider>, tool: string, expect: "ok" | "error") => {
  const connection = new McpConnection(remote(), { restartDelays: [], authProvider: () => provider })
  try {
    const status = await connection.start()
    if (status.state !== "connected") throw new Error(`not connected: ${JSON.stringify(status)}`)
    const found = mcpTools([connection]).find((t) => t.id === `remote_${tool}`)
    if (found === undefined) throw new Error(`no tool remote_${tool}`)
    const call = runTool(found, {})
    return expect === "ok" ? (await call.result).output : (await call.error()).message
  } finally {
    await connection.close()
  }
}

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

describe("client identity", () => {
  it("uses a pre-registered client (its secret at the token endpoint) and never registers", async () => {
    servers.provider.clients.set("lathe-pre", {
      client_id: "lathe-pre",
      client_secret: "pre-secret",
      redirect_uris: ["http://127.0.0.1/callback"]
    })
    const oauth = { clientId: "lathe-pre", clientSecret: "pre-secret" }
    expect(await authorize(servers.mcpUrl, providerFor(browser().open, undefined, { oauth }))).toBe("AUTHORIZED")

    expect(servers.provider.counts.registrations).toBe(0)
    expect(servers.provider.authorizations).toEqual([{ clientId: "lathe-pre", scopes: [] }])
    const stored = await readFile(authFile("remote", dataDir), "utf8")
    expect(stored).not.toContain("pre-secret")
    expect(await whoami(servers.mcpUrl, providerFor(noBrowser, undefined, { oauth }))).toBe("lathe-pre")
  })

  it("points at the config when the authorization server rejects the pre-registered client", async () => {
    servers.provider.clients.set("lathe-pre", {
      client_id: "lathe-pre",
      client_secret: "pre-secret",
      redirect_uris: ["http://127.0.0.1/callback"]
    })
    const oauth = { clientId: "lathe-pre", clientSecret: "not-it" }
    const result = await authorize(servers.mcpUrl, providerFor(browser().open, undefined, { oauth }))
    expect(result).toMatchObject({ reason: "oauth" })
    expect((result as McpAuthError).message).toContain('rejected the pre-registered client "lathe-pre"')
    expect(servers.provider.counts.registrations).toBe(0)
  })

  // Config's schema refuses it too (core's config-schema tests).
  it("refuses a client metadata URL that is not https with a path in the provider", () => {
    expect(() =>
      providerFor(noBrowser, undefined, { oauth: { clientMetadataUrl: "http://example.com/client.json" } })
    ).toThrow(/must be an https URL with a path/)
  })

  it("takes no OAuth settings from a project's .mcp.json, trusted or not", async () => {
    const root = await mkdtemp(join(tmpdir(), "lathe-oauth-project-"))
    const entry = { type: "http", url: servers.mcpUrl, oauth: { clientId: "x", clientMetadataUrl: "https://e.com/c" } }
    await writeFile(join(root, ".mcp.json"), JSON.stringify({ mcpServers: { repo: entry } }))
    const { servers: resolved } = await resolveServers({ config: {}, root, trusted: true, env: {} })
    expect(resolved).toEqual([expect.objectContaining({ name: "repo", type: "remote" })])
    expect(resolved[0]).not.toHaveProperty("oauth")
    await rm(root, { recursive: true, force: true })
  })
})

describe("scope", () => {
  const scopesSupported = ["mcp:read", PUBLISH_SCOPE, "mcp:admin"]

  it("asks for the scope the server's 401 names rather than all of scopes_supported", async () => {
    await restart({ requiredScope: "mcp:read", scopesSupported })
    expect(await authorize(servers.mcpUrl, providerFor(browser().open))).toBe("AUTHORIZED")
    expect(servers.provider.authorizations.map((a) => a.scopes)).toEqual([["mcp:read"]])
    expect(await whoami(servers.mcpUrl, providerFor(noBrowser))).toBe(servers.provider.authorizations[0]?.clientId)
  })

  it("asks for the configured scope over the 401's", async () => {
    await restart({ requiredScope: "mcp:read", scopesSupported })
    const oauth = { scope: "mcp:admin mcp:read" }
    expect(await authorize(servers.mcpUrl, providerFor(browser().open, undefined, { oauth }))).toBe("AUTHORIZED")
    expect(servers.provider.authorizations.map((a) => a.scopes)).toEqual([["mcp:admin", "mcp:read"]])
  })

  it("interactive: connecting signs in from the 401, and a 403 insufficient_scope signs in again once", async () => {
    await restart({ requiredScope: "mcp:read", scopesSupported })
    const page = browser()
    const provider = providerFor(page.open, undefined, { interactive: true })
    expect(await callTool(provider, "publish", "ok")).toBe("published")
    expect(servers.provider.authorizations.map((a) => a.scopes)).toEqual([["mcp:read"], ["mcp:read", PUBLISH_SCOPE]])
    expect(page.visits).toHaveLength(2)
  })

  it("lathe run: a 403 insufficient_scope is the tool's error naming the scope and the command", async () => {
    await restart({ requiredScope: "mcp:read", scopesSupported })
    expect(await authorize(servers.mcpUrl, providerFor(browser().open))).toBe("AUTHORIZED")

    const refused = await callTool(providerFor(noBrowser), "publish", "error")
    expect(refused).toContain(`needs the OAuth scope "${PUBLISH_SCOPE}"`)
    expect(refused).toContain("`lathe mcp auth remote`")
    expect(servers.provider.authorizations).toHaveLength(1)

    // The command it names asks for the missing scope with a new sign-in (a refresh would keep the old scope).
    expect(await authorize(servers.mcpUrl, providerFor(browser().open))).toBe("AUTHORIZED")
    expect(servers.provider.authorizations.at(-1)?.scopes).toEqual(["mcp:read", PUBLISH_SCOPE])
    expect(servers.provider.counts.refreshes).toBe(0)
    expect(await callTool(providerFor(noBrowser), "publish", "ok")).toBe("published")
  })
})
