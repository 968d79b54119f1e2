import { mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { createServer, type IncomingHttpHeaders, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import { afterEach, assert, describe, it } from "vitest"
import { runLathe, sandbox } from "./helpers.js"
import { closeAll, spawnTerminal } from "./pty.js"

// `lathe auth login` with no provider named, at a real pseudo-terminal: the searchable list (typing filters, arrows
// move, Enter chooses), then the key asked without echo, checked with a free request (GET /models) against a server
// on 127.0.0.1 standing in for the provider, and stored 0600. Without a terminal there is no list: a message says how
// to name a provider.

const slow = { timeout: 60_000 }
const KEY = "sk-picked-0123456789abcdef"

/** An OpenAI-style API that lists its models to a good key and answers 401 to any other. */
const startModels = async () => {
  const seen: Array<{ path: string; headers: IncomingHttpHeaders }> = []
  const server: Server = createServer((req, res) => {
    seen.push({ path: req.url ?? "/", headers: req.headers })
    if (req.headers.authorization !== `Bearer ${KEY}`)
      return res.writeHead(401, { "content-type": "application/json" }).end('{"error":{"message":"Incorrect API key"}}')
    res
      .writeHead(200, { "content-type": "application/json" })
      .end(JSON.stringify({ object: "list", data: [{ id: "gpt-5" }, { id: "gpt-5-mini" }] }))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    seen,
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

/** `lathe auth login` (no provider) at a 120×30 terminal, its OpenAI base URL at `baseURL` in the person's config. */
const atTerminal = (baseURL: string) => {
  const { project, env } = sandbox()
  const configDir = join(env.XDG_CONFIG_HOME as string, "lathe")
  mkdirSync(configDir, { recursive: true })
  writeFileSync(join(configDir, "lathe.json"), JSON.stringify({ provider: { openai: { baseURL } } }))
  const term = spawnTerminal({
    command: process.execPath,
    args: [
      "--conditions=@lathe/source",
      "--import",
      import.meta.resolve("tsx"),
      new URL("../src/bin.ts", import.meta.url).pathname,
      "auth",
      "login"
    ],
    cwd: project,
    env,
    cols: 120,
    rows: 30
  })
  return { term, env, file: join(env.LATHE_DATA_DIR as string, "auth.json") }
}

describe("lathe auth login without a provider (end to end)", () => {
  it(
    "the list: popular first, typing filters, arrows move, Enter chooses; the key is verified and stored",
    slow,
    async () => {
      const models = await startModels()
      closers.push(models.close)
      const { term, file } = atTerminal(models.url)
      await term.waitFor("Sign in to which provider?", 20_000)
      // The list drawn to its last line ("… more") before it is read: on a loaded machine the title comes first.
      await term.waitFor("more", 20_000)
      // Popular first: Anthropic, OpenAI, then the account sign-ins.
      const rows = term.screen().split("\n")
      const at = (text: string) => rows.findIndex((row) => row.includes(text))
      assert.isBelow(at("Anthropic (anthropic)"), at("OpenAI (openai)"), term.screen())
      assert.isBelow(at("OpenAI (openai)"), at("GitHub Copilot (github-copilot)"), term.screen())
      assert.include(term.screen(), "sign in: GitHub account (device code)")
      assert.include(term.screen(), "more")

      await term.type("open")
      await term.waitFor("Search: open")
      await term.waitForGone("Anthropic (anthropic)")
      // OpenAI and OpenRouter start with the words typed; move down to OpenRouter and back up.
      term.press("down")
      await term.waitFor(/❯ OpenRouter \(openrouter\)/)
      term.press("up")
      await term.waitFor(/❯ OpenAI \(openai\)/)
      term.press("enter")
      await term.waitFor("API key for OpenAI (openai), input hidden", 10_000)
      await term.type(KEY)
      term.press("enter")
      assert.strictEqual(await term.exited, 0, term.transcript())
      await term.waitFor("Stored the key for openai")
      assert.include(term.transcript(), "Verified: OpenAI accepted the key (2 models listed).")
      assert.notInclude(term.transcript(), KEY)
      assert.strictEqual(models.seen[0]?.path, "/v1/models")
      assert.strictEqual(statSync(file).mode & 0o777, 0o600)
      assert.deepStrictEqual(JSON.parse(readFileSync(file, "utf8")), { openai: { type: "api", key: KEY } })
    }
  )

  it("a key the provider refuses is not stored; Esc in the list cancels", slow, async () => {
    const models = await startModels()
    closers.push(models.close)
    const refused = atTerminal(models.url)
    await refused.term.waitFor("Sign in to which provider?", 20_000)
    await refused.term.type("openai")
    await refused.term.waitFor(/❯ OpenAI \(openai\)/)
    refused.term.press("enter")
    await refused.term.waitFor("input hidden", 10_000)
    await refused.term.type("sk-wrong-key-000000")
    refused.term.press("enter")
    assert.strictEqual(await refused.term.exited, 1, refused.term.transcript())
    assert.include(refused.term.transcript(), "OpenAI refused this key (HTTP 401); nothing stored.")
    assert.throws(() => statSync(refused.file))

    const cancelled = atTerminal(models.url)
    await cancelled.term.waitFor("Sign in to which provider?", 20_000)
    await cancelled.term.type("copilot")
    await cancelled.term.waitFor(/❯ GitHub Copilot \(github-copilot\)/)
    cancelled.term.press("escape")
    assert.strictEqual(await cancelled.term.exited, 1, cancelled.term.transcript())
    await cancelled.term.waitFor("cancelled; nothing stored")
  })

  it(
    "your own OpenAI-compatible server: the base URL is asked and written to your config, then the key",
    slow,
    async () => {
      const models = await startModels()
      closers.push(models.close)
      // No base URL configured for it yet (the config names only OpenAI's).
      const { term, env, file } = atTerminal("http://127.0.0.1:9/v1")
      await term.waitFor("Sign in to which provider?", 20_000)
      await term.type("compatible")
      await term.waitFor(/❯ OpenAI-compatible server \(openai-compatible\)/)
      term.press("enter")
      await term.waitFor("Base URL of OpenAI-compatible server", 10_000)
      await term.type(models.url)
      term.press("enter")
      await term.waitFor("Enter for none, input hidden", 10_000)
      await term.type(KEY)
      term.press("enter")
      assert.strictEqual(await term.exited, 0, term.transcript())
      await term.waitFor("Stored the key for openai-compatible")
      assert.include(term.transcript(), "Verified")
      const config = JSON.parse(readFileSync(join(env.XDG_CONFIG_HOME as string, "lathe", "lathe.json"), "utf8"))
      assert.strictEqual(config.provider["openai-compatible"].baseURL, models.url)
      assert.strictEqual(config.provider.openai.baseURL, "http://127.0.0.1:9/v1")
      assert.deepStrictEqual(JSON.parse(readFileSync(file, "utf8")), { "openai-compatible": { type: "api", key: KEY } })
    }
  )

  it("without a terminal there is no list: exit 2 and how to name a provider", slow, async () => {
    const { project, env } = sandbox()
    const run = await runLathe(["auth", "login"], { cwd: project, env })
    assert.strictEqual(run.code, 2)
    assert.include(
      run.stderr,
      "name the provider (the list to choose from needs a terminal): lathe auth login <provider>"
    )
    assert.include(run.stderr, "github-copilot")
  })
})
