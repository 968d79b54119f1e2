import { readFileSync, statSync, writeFileSync } from "node:fs"
import { createServer, type IncomingMessage, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import { type ScriptedServer, startChatWire } from "@lathe/core/testing"
import { afterEach, assert, describe, it } from "vitest"
import { runLathe, sandbox } from "./helpers.js"

// GitHub Copilot signed in with a GitHub account, end to end: the real CLI runs GitHub's device flow against a server
// on 127.0.0.1 answering as github.com and api.github.com do (device code, `authorization_pending`, `slow_down`,
// then the token; the Copilot token exchange with `endpoints.api`), stores the sign-in 0600, and `lathe run` talks to
// a Chat Completions server at the API the exchange named, renewing the short-lived Copilot token as it expires.

const slow = { timeout: 90_000 }
const GITHUB_TOKEN = "gho_signedInGitHubToken0123456789"

interface Seen {
  readonly path: string
  readonly method: string
  readonly headers: IncomingMessage["headers"]
  readonly body: Record<string, unknown>
  readonly at: number
}

/** github.com and api.github.com as the device flow and the token exchange see them. */
const startGitHub = async (options: {
  readonly polls: ReadonlyArray<Record<string, unknown>>
  readonly api: () => string
  /** Seconds each Copilot token lives (Copilot's own live 30 minutes; a short life makes the CLI renew it). */
  readonly tokenLife: number
}) => {
  const seen: Array<Seen> = []
  let polls = 0
  let tokens = 0
  const server: Server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8")
      const body = text === "" ? {} : (JSON.parse(text) as Record<string, unknown>)
      const path = req.url ?? "/"
      seen.push({ path, method: req.method ?? "GET", headers: req.headers, body, at: Date.now() })
      const json = (status: number, value: unknown) =>
        res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(value))
      if (path === "/login/device/code")
        return json(200, {
          device_code: "device-code-1",
          user_code: "WDJB-MJHT",
          verification_uri: `${url}/login/device`,
          expires_in: 900,
          interval: 0
        })
      if (path === "/login/oauth/access_token") {
        const answer = options.polls[polls] ?? options.polls.at(-1) ?? {}
        polls += 1
        return json(200, answer)
      }
      if (path === "/copilot_internal/v2/token") {
        if (req.headers.authorization !== `token ${GITHUB_TOKEN}`) return json(401, { message: "Bad credentials" })
        tokens += 1
        return json(200, {
          token: `tid=copilot-${tokens};exp=short`,
          expires_at: Math.floor(Date.now() / 1000) + options.tokenLife,
          refresh_in: Math.max(0, options.tokenLife - 60),
          endpoints: { api: options.api() }
        })
      }
      json(404, { message: "Not Found" })
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    url,
    seen,
    env: { LATHE_GITHUB_URL: url, LATHE_COPILOT_TOKEN_URL: `${url}/copilot_internal/v2/token` },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

let closers: Array<() => Promise<void>> = []
afterEach(async () => {
  await Promise.all(closers.map((close) => close()))
  closers = []
})

const mode = (path: string) => statSync(path).mode & 0o777

describe("GitHub Copilot sign-in (end to end)", () => {
  it(
    "device flow: pending, slow_down (waits longer), token; stored 0600; a run renews the Copilot token",
    slow,
    async () => {
      const { project, env } = sandbox()
      let chat: ScriptedServer | undefined
      const github = await startGitHub({
        polls: [
          { error: "authorization_pending", error_description: "The authorization request is still pending." },
          { error: "slow_down", error_description: "Too many requests.", interval: 1 },
          { access_token: GITHUB_TOKEN, token_type: "bearer", scope: "read:user" }
        ],
        api: () => chat?.url ?? "http://127.0.0.1:9",
        // Inside the renewal margin: every request needs a new Copilot token.
        tokenLife: 30
      })
      closers.push(github.close)
      chat = await startChatWire("openai", [
        { tool: { name: "read", input: { path: "a.txt" } } },
        { text: "It says alpha." }
      ])
      closers.push(chat.close)
      const all = { ...env, ...github.env }

      const login = await runLathe(["auth", "login", "github-copilot"], { cwd: project, env: all })
      assert.strictEqual(login.code, 0, login.stderr)
      assert.include(login.stdout, `open ${github.url}/login/device and enter the code WDJB-MJHT`)
      assert.include(login.stdout, "Signed in to GitHub Copilot")
      assert.notInclude(login.stdout + login.stderr, GITHUB_TOKEN)

      const device = github.seen.filter((request) => request.path === "/login/device/code")
      assert.strictEqual(device.length, 1)
      assert.strictEqual(device[0]?.body.scope, "read:user")
      assert.isString(device[0]?.body.client_id)
      const polls = github.seen.filter((request) => request.path === "/login/oauth/access_token")
      assert.strictEqual(polls.length, 3)
      for (const poll of polls) {
        assert.strictEqual(poll.body.device_code, "device-code-1")
        assert.strictEqual(poll.body.grant_type, "urn:ietf:params:oauth:grant-type:device_code")
        assert.strictEqual(poll.headers.accept, "application/json")
      }
      // After slow_down the poll waits the interval GitHub gave (1 s) instead of the device code's (0 s).
      assert.isAtLeast((polls[2]?.at ?? 0) - (polls[1]?.at ?? 0), 900)

      const file = join(env.LATHE_DATA_DIR as string, "auth.json")
      assert.strictEqual(mode(file), 0o600)
      const stored = JSON.parse(readFileSync(file, "utf8"))["github-copilot"]
      assert.strictEqual(stored.type, "oauth")
      assert.strictEqual(stored.refresh, GITHUB_TOKEN)
      assert.strictEqual(stored.access, "tid=copilot-1;exp=short")
      assert.strictEqual(stored.endpoint, chat.url)

      const list = await runLathe(["auth", "list", "--json"], { cwd: project, env: all })
      assert.strictEqual(list.code, 0, list.stderr)
      assert.notInclude(list.stdout, GITHUB_TOKEN)
      assert.notInclude(list.stdout, "copilot-1")
      const rows = JSON.parse(list.stdout) as Array<Record<string, unknown>>
      const row = rows.find((r) => r.provider === "github-copilot") ?? {}
      assert.deepInclude(row, { name: "GitHub Copilot", source: "auth", ready: true })
      assert.property(row, "signIn")
      assert.notProperty(row, "stored")

      // A turn of two steps (a tool call, then the answer): each request finds the Copilot token about to expire and
      // renews it first, then carries the new one to the API `endpoints.api` named.
      writeFileSync(join(project, "a.txt"), "alpha\n")
      const run = await runLathe(["run", "-m", "github-copilot/gpt-4.1", "what does a.txt say?"], {
        cwd: project,
        env: all
      })
      assert.strictEqual(run.code, 0, run.stderr)
      assert.include(run.stdout, "It says alpha.")
      assert.strictEqual(chat.requests.length, 2)
      assert.strictEqual(chat.requests[0]?.path, "/v1/chat/completions")
      assert.strictEqual(chat.requests[0]?.headers.authorization, "Bearer tid=copilot-2;exp=short")
      assert.strictEqual(chat.requests[1]?.headers.authorization, "Bearer tid=copilot-3;exp=short")
      assert.strictEqual(chat.requests[0]?.headers["copilot-integration-id"], "vscode-chat")
      assert.strictEqual(chat.requests[0]?.headers["openai-intent"], "conversation-edits")
      // The person asked the first step; the second continues the agent's work (Copilot bills them differently).
      assert.strictEqual(chat.requests[0]?.headers["x-initiator"], "user")
      assert.strictEqual(chat.requests[1]?.headers["x-initiator"], "agent")
      const exchanges = github.seen.filter((request) => request.path === "/copilot_internal/v2/token")
      assert.strictEqual(exchanges.length, 3)
      // The renewed token is kept for the next run.
      assert.strictEqual(JSON.parse(readFileSync(file, "utf8"))["github-copilot"].access, "tid=copilot-3;exp=short")
      assert.strictEqual(mode(file), 0o600)

      const logout = await runLathe(["auth", "logout", "github-copilot"], { cwd: project, env: all })
      assert.strictEqual(logout.code, 0, logout.stderr)
      assert.include(logout.stdout, "Signed out of github-copilot")
      assert.deepStrictEqual(JSON.parse(readFileSync(file, "utf8")), {})
      const after = await runLathe(["run", "-m", "github-copilot/gpt-4.1", "hello"], { cwd: project, env: all })
      assert.notStrictEqual(after.code, 0)
      assert.include(after.stderr, "lathe auth login github-copilot")
    }
  )

  it("a token still valid is used as it is: no exchange before the request", slow, async () => {
    const { project, env } = sandbox()
    let chat: ScriptedServer | undefined
    const github = await startGitHub({
      polls: [{ access_token: GITHUB_TOKEN, token_type: "bearer", scope: "read:user" }],
      api: () => chat?.url ?? "http://127.0.0.1:9",
      tokenLife: 1800
    })
    closers.push(github.close)
    chat = await startChatWire("openai", [{ text: "hi" }])
    closers.push(chat.close)
    const all = { ...env, ...github.env }
    const login = await runLathe(["auth", "login", "copilot"], { cwd: project, env: all })
    assert.strictEqual(login.code, 0, login.stderr)
    const run = await runLathe(["run", "-m", "github-copilot/gpt-4.1", "hello"], { cwd: project, env: all })
    assert.strictEqual(run.code, 0, run.stderr)
    assert.strictEqual(chat.requests[0]?.headers.authorization, "Bearer tid=copilot-1;exp=short")
    assert.strictEqual(github.seen.filter((request) => request.path === "/copilot_internal/v2/token").length, 1)
  })

  it("an expired device code ends the sign-in: exit 1, nothing stored", slow, async () => {
    const { project, env } = sandbox()
    const github = await startGitHub({
      polls: [{ error: "authorization_pending" }, { error: "expired_token", error_description: "The code expired." }],
      api: () => "http://127.0.0.1:9",
      tokenLife: 1800
    })
    closers.push(github.close)
    const login = await runLathe(["auth", "login", "github-copilot"], { cwd: project, env: { ...env, ...github.env } })
    assert.strictEqual(login.code, 1)
    assert.include(login.stderr, "The code expired before it was entered.")
    assert.include(login.stderr, "Nothing stored.")
    assert.throws(() => statSync(join(env.LATHE_DATA_DIR as string, "auth.json")))
  })
})
