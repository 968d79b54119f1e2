import { mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { storeKey } from "@lathe/core/providers"
import { type ScriptedServer, startResponsesWire } from "@lathe/core/testing"
import { afterEach, assert, describe, it } from "vitest"
import { runLathe, sandbox } from "./helpers.js"
import { closeAll, spawnTerminal } from "./pty.js"

// `lathe auth` end to end: the real CLI storing, listing and removing keys in a throwaway data directory, a real
// `lathe run` sending the stored key to a scripted OpenAI Responses server on 127.0.0.1, and the hidden prompt at a
// real pseudo-terminal.

const slow = { timeout: 60_000 }
const KEY = "sk-test-stored-0123456789abcdef"
const ENV_KEY = "sk-test-from-env-99887766"

let server: ScriptedServer | undefined
afterEach(async () => {
  closeAll()
  await server?.close()
  server = undefined
})

const mode = (path: string) => statSync(path).mode & 0o777

describe("lathe auth (end to end)", () => {
  it("stores a piped key 0600 in a 0700 folder, lists it masked, and logout removes it", slow, async () => {
    const { project, env } = sandbox()
    const login = await runLathe(["auth", "login", "openai"], { cwd: project, env, input: `  ${KEY}  \nignored\n` })
    assert.strictEqual(login.code, 0, login.stderr)
    const file = join(env.LATHE_DATA_DIR as string, "auth.json")
    assert.include(login.stdout, `Stored the key for openai in ${file}`)
    assert.strictEqual(mode(file), 0o600)
    assert.strictEqual(mode(env.LATHE_DATA_DIR as string), 0o700)
    assert.deepStrictEqual(JSON.parse(readFileSync(file, "utf8")), { openai: { type: "api", key: KEY } })

    const list = await runLathe(["auth", "list", "--json"], { cwd: project, env })
    assert.strictEqual(list.code, 0, list.stderr)
    assert.notInclude(list.stdout, KEY)
    assert.deepInclude(JSON.parse(list.stdout), {
      provider: "openai",
      name: "OpenAI",
      type: "openai",
      source: "auth",
      stored: "sk-t…ef",
      ready: true
    })

    const logout = await runLathe(["auth", "logout", "openai"], { cwd: project, env })
    assert.strictEqual(logout.code, 0, logout.stderr)
    assert.include(logout.stdout, "Removed the stored key for openai.")
    assert.deepStrictEqual(JSON.parse(readFileSync(file, "utf8")), {})
  })

  it("lathe run sends the stored key as the bearer token; a key in the environment wins over it", slow, async () => {
    const { project, env } = sandbox()
    server = await startResponsesWire([{ text: "hello from the stored key" }])
    const configDir = join(env.XDG_CONFIG_HOME as string, "lathe")
    mkdirSync(configDir, { recursive: true })
    // The base URL lives in the person's own config, and no key anywhere but the store.
    writeFileSync(
      join(configDir, "lathe.json"),
      JSON.stringify({ model: "openai/gpt-5", provider: { openai: { baseURL: server.url } } })
    )
    // Stored as `lathe auth login openai` stores it (the test above runs that command).
    storeKey("openai", KEY, env)
    const run = await runLathe(["run", "say hello"], { cwd: project, env })
    assert.strictEqual(run.code, 0, run.stderr)
    assert.include(run.stdout, "hello from the stored key")
    assert.strictEqual(server.requests[0]?.headers.authorization, `Bearer ${KEY}`)

    const withEnv = { ...env, OPENAI_API_KEY: ENV_KEY }
    const envRun = await runLathe(["run", "say hello"], { cwd: project, env: withEnv })
    assert.strictEqual(envRun.code, 0, envRun.stderr)
    assert.strictEqual(server.requests.at(-1)?.headers.authorization, `Bearer ${ENV_KEY}`)
  })

  it("refuses an unknown provider: exit 1, the close matches first, nothing stored", slow, async () => {
    const { project, env } = sandbox()
    const unknown = await runLathe(["auth", "login", "opnai"], { cwd: project, env, input: `${KEY}\n` })
    assert.strictEqual(unknown.code, 1)
    assert.match(unknown.stderr, /unknown provider "opnai"\. Did you mean openai\b.*Known providers: openai, /)
    assert.throws(() => statSync(join(env.LATHE_DATA_DIR as string, "auth.json")))
  })

  it("at a terminal the key is asked without echo: only stars show, and it is stored", slow, async () => {
    const { project, env } = sandbox()
    const term = spawnTerminal({
      command: process.execPath,
      args: [
        "--conditions=@lathe/source",
        "--import",
        import.meta.resolve("tsx"),
        new URL("../src/bin.ts", import.meta.url).pathname,
        "auth",
        "login",
        "anthropic",
        // The key is fake: checking it with Anthropic is not this test's business (auth-picker.e2e.test.ts checks one).
        "--no-verify"
      ],
      cwd: project,
      env,
      // Wide enough that the prompt and its stars stay on one line.
      cols: 160
    })
    await term.waitFor("input hidden", 20_000)
    await term.type(`${KEY}x`)
    term.press("backspace")
    term.press("enter")
    assert.strictEqual(await term.exited, 0, term.transcript())
    await term.waitFor("Stored the key for anthropic")
    assert.notInclude(term.transcript(), KEY)
    assert.notInclude(term.transcript(), KEY.slice(0, 12))
    assert.include(term.transcript(), "*".repeat(KEY.length), term.transcript())
    const file = join(env.LATHE_DATA_DIR as string, "auth.json")
    assert.deepStrictEqual(JSON.parse(readFileSync(file, "utf8")), { anthropic: { type: "api", key: KEY } })
  })
})
