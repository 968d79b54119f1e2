import { createHash } from "node:crypto"
import { readFileSync, statSync, writeFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import { type ScriptedServer, startResponsesWire } from "@lathe/core/testing"
import { afterEach, assert, describe, it } from "vitest"
import { runLathe, sandbox } from "./helpers.js"
import { closeAll, spawnTerminal } from "./pty.js"

// ChatGPT signed in with a ChatGPT account, end to end: the real CLI starts the browser sign-in (authorization code
// with PKCE) against a server on 127.0.0.1 answering as auth.openai.com does; the test plays the browser, following
// the authorize page's redirect back to the CLI's callback server. The tokens are stored 0600; `lathe run` renews the
// expired access token with the refresh token (storing the rotated one) and calls a Responses server the way the
// ChatGPT backend expects (account header, instructions, nothing stored); logout removes the sign-in.

const slow = { timeout: 90_000 }
const ACCOUNT = "acct-7f3e2b1c"

const jwt = (claims: Record<string, unknown>) => {
  const [header, payload] = [{ alg: "none", typ: "JWT" }, claims].map((part) =>
    Buffer.from(JSON.stringify(part)).toString("base64url")
  )
  return `${header}.${payload}.signature`
}

interface TokenRequest {
  readonly contentType: string
  readonly body: Record<string, string>
}

/** auth.openai.com: the authorize page (redirects straight back with a code) and the token endpoint. */
const startAuth = async (accessLife: number) => {
  const tokenRequests: Array<TokenRequest> = []
  let challenge = ""
  let refreshes = 0
  const server: Server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://127.0.0.1")
      const json = (status: number, value: unknown) =>
        res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(value))
      if (url.pathname === "/oauth/authorize") {
        // The person signs in; the page sends the browser back with a code for the PKCE challenge it was given.
        challenge = url.searchParams.get("code_challenge") ?? ""
        const back = new URL(url.searchParams.get("redirect_uri") ?? "")
        back.searchParams.set("code", "authorization-code-1")
        back.searchParams.set("state", url.searchParams.get("state") ?? "")
        res.writeHead(302, { location: back.toString() }).end()
        return
      }
      if (url.pathname === "/oauth/token") {
        const text = Buffer.concat(chunks).toString("utf8")
        const contentType = req.headers["content-type"] ?? ""
        const body: Record<string, string> = contentType.includes("json")
          ? JSON.parse(text)
          : Object.fromEntries(new URLSearchParams(text))
        tokenRequests.push({ contentType, body })
        const idToken = jwt({ email: "a@example.com", "https://api.openai.com/auth": { chatgpt_account_id: ACCOUNT } })
        if (body.grant_type === "authorization_code") {
          const verified =
            createHash("sha256")
              .update(body.code_verifier ?? "")
              .digest("base64url") === challenge
          if (!verified || body.code !== "authorization-code-1") return json(400, { error: "invalid_grant" })
          return json(200, {
            id_token: idToken,
            access_token: "access-token-1",
            refresh_token: "refresh-token-1",
            expires_in: accessLife
          })
        }
        if (body.grant_type === "refresh_token") {
          if (body.refresh_token !== `refresh-token-${refreshes + 1}`) return json(401, { error: "invalid_grant" })
          refreshes += 1
          return json(200, {
            id_token: idToken,
            access_token: `access-token-${refreshes + 1}`,
            refresh_token: `refresh-token-${refreshes + 1}`,
            expires_in: 3600
          })
        }
        return json(400, { error: "unsupported_grant_type" })
      }
      json(404, {})
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    url,
    tokenRequests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

let closers: Array<() => Promise<void>> = []
afterEach(async () => {
  await closeAll()
  await Promise.all(closers.map((close) => close()))
  closers = []
})

/** `lathe auth login chatgpt`, with the test as the browser: it opens the URL the CLI prints, as a person would. */
const signIn = async (project: string, env: Record<string, string>) => {
  let browsed: Promise<Response> | undefined
  const login = await runLathe(["auth", "login", "chatgpt"], {
    cwd: project,
    env,
    onSpawn: (child) => {
      let out = ""
      child.stdout?.on("data", (chunk: Buffer) => {
        out += chunk.toString("utf8")
        const url = out.match(/^(http\S+\/oauth\/authorize\?\S+)$/m)?.[1]
        if (url !== undefined && browsed === undefined) browsed = fetch(url)
      })
    }
  })
  const page = await browsed
  return { login, page: page === undefined ? "" : await page.text() }
}

describe("ChatGPT sign-in (end to end)", () => {
  it(
    "PKCE sign-in, stored 0600; a run renews the expired token and calls the Responses backend; logout",
    slow,
    async () => {
      const { project, env } = sandbox()
      const auth = await startAuth(30)
      closers.push(auth.close)
      const backend: ScriptedServer = await startResponsesWire([
        {
          reasoning: { summary: ["Reading the file first."], encrypted: "encrypted-reasoning-1" },
          tool: { name: "read", input: { path: "a.txt" } }
        },
        { text: "hello from ChatGPT" }
      ])
      closers.push(backend.close)
      const all = {
        ...env,
        LATHE_CHATGPT_AUTH_URL: auth.url,
        LATHE_CHATGPT_BASE_URL: backend.url,
        LATHE_CHATGPT_CALLBACK_PORT: "0",
        BROWSER: "none"
      }

      const { login, page } = await signIn(project, all)
      assert.strictEqual(login.code, 0, login.stderr)
      assert.include(page, "Signed in to Lathe")
      assert.include(login.stdout, `Signed in to ChatGPT (subscription) (account ${ACCOUNT})`)
      const authorize = new URL(login.stdout.match(/^(http\S+\/oauth\/authorize\?\S+)$/m)?.[1] ?? "")
      assert.strictEqual(authorize.searchParams.get("response_type"), "code")
      assert.strictEqual(authorize.searchParams.get("code_challenge_method"), "S256")
      assert.include(authorize.searchParams.get("scope") ?? "", "offline_access")
      assert.match(authorize.searchParams.get("redirect_uri") ?? "", /^http:\/\/localhost:\d+\/auth\/callback$/)
      const exchange = auth.tokenRequests[0]
      assert.strictEqual(exchange?.contentType, "application/x-www-form-urlencoded")
      assert.strictEqual(exchange?.body.grant_type, "authorization_code")
      assert.strictEqual(exchange?.body.redirect_uri, authorize.searchParams.get("redirect_uri"))

      const file = join(env.LATHE_DATA_DIR as string, "auth.json")
      assert.strictEqual(statSync(file).mode & 0o777, 0o600)
      const stored = JSON.parse(readFileSync(file, "utf8")).chatgpt
      assert.deepInclude(stored, {
        type: "oauth",
        refresh: "refresh-token-1",
        access: "access-token-1",
        accountId: ACCOUNT
      })

      const list = await runLathe(["auth", "list"], { cwd: project, env: all })
      assert.strictEqual(list.code, 0, list.stderr)
      assert.include(list.stdout, `signed in (account ${ACCOUNT})`)
      assert.notInclude(list.stdout, "refresh-token")
      assert.notInclude(list.stdout, "access-token")

      // The access token lives 30 s, inside the renewal margin: the run renews it before its first request.
      writeFileSync(join(project, "a.txt"), "alpha\n")
      const run = await runLathe(["run", "-m", "chatgpt/gpt-5.1-codex", "read a.txt"], { cwd: project, env: all })
      assert.strictEqual(run.code, 0, run.stderr)
      assert.include(run.stdout, "hello from ChatGPT")
      const refresh = auth.tokenRequests[1]
      assert.strictEqual(refresh?.contentType, "application/json")
      assert.deepInclude(refresh?.body, { grant_type: "refresh_token", refresh_token: "refresh-token-1" })
      const request = backend.requests[0]
      assert.strictEqual(request?.path, "/v1/responses")
      assert.strictEqual(request?.headers.authorization, "Bearer access-token-2")
      assert.strictEqual(request?.headers["chatgpt-account-id"], ACCOUNT)
      const body = request?.body as {
        store?: boolean
        instructions?: string
        include?: Array<string>
        input: Array<{ role?: string }>
        max_output_tokens?: number
      }
      assert.strictEqual(body.store, false)
      assert.isAbove(body.instructions?.length ?? 0, 100)
      assert.include(body.include ?? [], "reasoning.encrypted_content")
      assert.notProperty(body, "max_output_tokens")
      assert.isFalse(body.input.some((item) => item.role === "system" || item.role === "developer"))
      // Nothing is stored on the backend: the second step sends the reasoning back encrypted, never as a reference.
      assert.strictEqual(backend.requests.length, 2)
      const second = (backend.requests[1]?.body as { input?: Array<Record<string, unknown>> } | undefined)?.input ?? []
      assert.isTrue(
        second.some((item) => item.type === "reasoning" && item.encrypted_content === "encrypted-reasoning-1")
      )
      assert.isFalse(second.some((item) => item.type === "item_reference"))
      assert.strictEqual(backend.requests[1]?.headers.authorization, "Bearer access-token-2")
      // The rotated refresh token replaced the old one (which no longer works).
      assert.deepInclude(JSON.parse(readFileSync(file, "utf8")).chatgpt, {
        refresh: "refresh-token-2",
        access: "access-token-2"
      })

      // Still valid: the next run renews nothing.
      const again = await runLathe(["run", "-m", "chatgpt/gpt-5.1-codex", "say hello"], { cwd: project, env: all })
      assert.strictEqual(again.code, 0, again.stderr)
      assert.strictEqual(auth.tokenRequests.length, 2)
      assert.strictEqual(backend.requests[2]?.headers.authorization, "Bearer access-token-2")

      const logout = await runLathe(["auth", "logout", "chatgpt"], { cwd: project, env: all })
      assert.strictEqual(logout.code, 0, logout.stderr)
      assert.include(logout.stdout, "Signed out of chatgpt")
      assert.deepStrictEqual(JSON.parse(readFileSync(file, "utf8")), {})
    }
  )

  it("a callback whose state does not match is refused: exit 1, nothing stored", slow, async () => {
    const { project, env } = sandbox()
    const all = {
      ...env,
      LATHE_CHATGPT_AUTH_URL: "http://127.0.0.1:9",
      LATHE_CHATGPT_CALLBACK_PORT: "0",
      BROWSER: "none"
    }
    let answered: Promise<Response> | undefined
    const login = await runLathe(["auth", "login", "chatgpt"], {
      cwd: project,
      env: all,
      onSpawn: (child) => {
        let out = ""
        child.stdout?.on("data", (chunk: Buffer) => {
          out += chunk.toString("utf8")
          const redirect = out.match(/redirect_uri=([^&\s]+)/)?.[1]
          if (redirect !== undefined && answered === undefined)
            answered = fetch(`${decodeURIComponent(redirect)}?code=stolen&state=not-this-sign-in`)
        })
      }
    })
    assert.strictEqual((await answered)?.status, 400)
    assert.strictEqual(login.code, 1)
    assert.include(login.stderr, "did not match")
    assert.throws(() => statSync(join(env.LATHE_DATA_DIR as string, "auth.json")))
  })

  it("at a terminal, the address a browser elsewhere ended on can be pasted instead", slow, async () => {
    const { project, env } = sandbox()
    const auth = await startAuth(3600)
    closers.push(auth.close)
    const term = spawnTerminal({
      command: process.execPath,
      args: [
        "--conditions=@lathe/source",
        "--import",
        import.meta.resolve("tsx"),
        new URL("../src/bin.ts", import.meta.url).pathname,
        "auth",
        "login",
        "chatgpt"
      ],
      cwd: project,
      env: { ...env, LATHE_CHATGPT_AUTH_URL: auth.url, LATHE_CHATGPT_CALLBACK_PORT: "0", BROWSER: "none" },
      // Wide enough for the sign-in address on one line.
      cols: 800
    })
    await term.waitFor("Paste the address it ended on", 20_000)
    const url = term.screen().match(/http\S+\/oauth\/authorize\?\S+/)?.[0] ?? ""
    // The browser on the other machine signs in and is sent to a localhost it cannot reach: the person copies the
    // address from its address bar.
    const answer = await fetch(url, { redirect: "manual" })
    const endedOn = answer.headers.get("location") ?? ""
    assert.match(endedOn, /\/auth\/callback\?code=authorization-code-1&state=/)
    term.paste(endedOn)
    term.press("enter")
    assert.strictEqual(await term.exited, 0, term.transcript())
    await term.waitFor(`account ${ACCOUNT}`)
    const stored = JSON.parse(readFileSync(join(env.LATHE_DATA_DIR as string, "auth.json"), "utf8")).chatgpt
    assert.deepInclude(stored, { refresh: "refresh-token-1", accountId: ACCOUNT })
  })
})
