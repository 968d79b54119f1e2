/** The stored sign-in file, the status read from it and the provider's option checks, against a real temp dir. */
import { chmod, mkdir, mkdtemp, readdir, rm, stat, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { authFile, authStatus, createOAuthProvider, McpAuthError } from "../src/oauth.js"

let dataDir: string
beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "lathe-oauth-store-"))
})
afterEach(async () => {
  await rm(dataDir, { recursive: true, force: true })
})

const serverUrl = "https://mcp.example.com/mcp"
const provider = (overrides: { serverUrl?: string; now?: () => number } = {}) =>
  createOAuthProvider({ serverName: "remote", serverUrl, dataDir, ...overrides })
const tokens = (extra: { expires_in?: number; refresh_token?: string } = {}) => ({
  access_token: "access",
  token_type: "Bearer",
  issuer: "https://auth.example.com/",
  ...extra
})
const client = { client_id: "lathe-1", redirect_uris: ["http://127.0.0.1:4000/callback"], issuer: "https://a/" }

describe("stored sign-in", () => {
  it("round-trips client, tokens and verifier unchanged, in a 0600 file in a 0700 folder", async () => {
    await mkdir(join(dataDir, "mcp-auth"), { mode: 0o755 })
    await chmod(join(dataDir, "mcp-auth"), 0o755)
    const first = provider()
    await first.saveClientInformation(client)
    await first.saveCodeVerifier("verifier")
    await first.saveTokens(tokens({ refresh_token: "refresh" }))

    const second = provider()
    expect(await second.clientInformation()).toEqual(client)
    expect(await second.tokens()).toEqual(tokens({ refresh_token: "refresh" }))
    await expect(second.codeVerifier()).rejects.toThrow(/lathe mcp auth remote/)
    expect((await stat(authFile("remote", dataDir))).mode & 0o777).toBe(0o600)
    expect((await stat(join(dataDir, "mcp-auth"))).mode & 0o777).toBe(0o700)
    expect(await readdir(join(dataDir, "mcp-auth"))).toEqual(["remote.json"])
  })

  it("ignores what was stored for another server URL", async () => {
    await provider().saveTokens(tokens())
    expect(await provider({ serverUrl: "https://other.example.com/mcp" }).tokens()).toBeUndefined()
    expect(await authStatus("remote", dataDir, { serverUrl: "https://other.example.com/mcp" })).toBe("needs auth")
    expect(await authStatus("remote", dataDir, { serverUrl })).toBe("authorized")
  })

  it("forgets exactly what the SDK invalidates", async () => {
    const p = provider()
    await p.saveClientInformation(client)
    await p.saveTokens(tokens())
    await p.invalidateCredentials("tokens")
    expect(await p.tokens()).toBeUndefined()
    expect(await p.clientInformation()).toEqual(client)
    await p.invalidateCredentials("all")
    expect(await p.clientInformation()).toBeUndefined()
  })

  it("keeps server names inside the folder, without collisions", () => {
    const folder = join(dataDir, "mcp-auth")
    expect(dirname(authFile("../../etc/passwd", dataDir))).toBe(folder)
    expect(authFile("a/b", dataDir)).not.toBe(authFile("a_b", dataDir))
    expect(authFile("github", dataDir)).toBe(join(folder, "github.json"))
  })

  it("turns an unreadable file into an error that says how to start again", async () => {
    await provider().saveTokens(tokens())
    await writeFile(authFile("remote", dataDir), "{ not json")
    const error = await authStatus("remote", dataDir).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(McpAuthError)
    expect(error).toMatchObject({ reason: "store" })
    expect((error as Error).message).toContain("lathe mcp logout remote")
    await writeFile(authFile("remote", dataDir), JSON.stringify({ version: 1, serverUrl, tokens: { nope: 1 } }))
    await expect(provider().tokens()).rejects.toMatchObject({ reason: "store" })
  })
})

describe("authStatus", () => {
  it("follows the access token's expiry and whether a refresh token exists", async () => {
    const t0 = 1_000_000
    expect(await authStatus("remote", dataDir)).toBe("needs auth")
    await provider({ now: () => t0 }).saveTokens(tokens({ expires_in: 60, refresh_token: "r" }))
    expect(await authStatus("remote", dataDir, { now: t0 + 59_000 })).toBe("authorized")
    expect(await authStatus("remote", dataDir, { now: t0 + 60_000 })).toBe("expired (refresh available)")
    await provider({ now: () => t0 }).saveTokens(tokens({ expires_in: 60 }))
    expect(await authStatus("remote", dataDir, { now: t0 + 60_000 })).toBe("needs auth")
    await provider({ now: () => t0 }).saveTokens(tokens())
    expect(await authStatus("remote", dataDir, { now: Number.MAX_SAFE_INTEGER })).toBe("authorized")
  })
})

describe("createOAuthProvider", () => {
  it("refuses unusable options with a message that names the fix", () => {
    const bad = (options: Partial<Parameters<typeof createOAuthProvider>[0]>) => {
      try {
        createOAuthProvider({ serverName: "remote", serverUrl, dataDir, ...options })
      } catch (error) {
        expect(error).toMatchObject({ reason: "config" })
        return (error as Error).message
      }
      throw new Error("accepted")
    }
    expect(bad({ serverName: "" })).toMatch(/give the server a name/)
    expect(bad({ serverUrl: "file:///etc/passwd" })).toMatch(/needs an http\(s\) URL/)
    expect(bad({ dataDir: "relative/dir" })).toMatch(/must be absolute/)
    expect(bad({ redirectPort: 70_000 })).toMatch(/from 1 to 65535/)
  })

  it("never opens a browser outside authorize()", async () => {
    const opened: Array<string> = []
    const p = createOAuthProvider({
      serverName: "remote",
      serverUrl,
      dataDir,
      redirectPort: 4567,
      openBrowser: async (url) => {
        opened.push(url.href)
      }
    })
    await p.redirectToAuthorization(new URL("https://auth.example.com/authorize"))
    expect(opened).toEqual([])
    expect(p.redirectUrl).toBe("http://127.0.0.1:4567/callback")
    expect(p.clientMetadata.redirect_uris).toEqual(["http://127.0.0.1:4567/callback"])
  })
})
