/**
 * A rejected key names where it came from, so the person fixes that one: the variable, the key `lathe auth login`
 * stored (and its file), or the config file's `apiKey` (or the variable a `{env:NAME}` value reads). The real CLI;
 * the provider is a scripted server on 127.0.0.1 that answers 401; the key itself never appears in the output.
 */
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { afterEach, assert, describe, it } from "vitest"
import { runLathe, sandbox } from "./helpers.js"

let server: ScriptedServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

const slow = { timeout: 60_000 }
const KEY = "sk-rejected-0123456789abcdef"

/** A sandbox whose person's config points OpenAI at a server that rejects every key (plus `extra` provider settings). */
const box = async (extra: Record<string, unknown> = {}) => {
  server = await startScriptedServer(() => ({
    type: "error",
    status: 401,
    body: { error: { message: "Incorrect API key provided.", type: "invalid_request_error", code: "invalid_api_key" } }
  }))
  const made = sandbox()
  const dir = join(made.env.XDG_CONFIG_HOME ?? "", "lathe")
  mkdirSync(dir, { recursive: true })
  const file = join(dir, "lathe.json")
  writeFileSync(
    file,
    JSON.stringify({ model: "openai/gpt-4.1", provider: { openai: { baseURL: server.url, ...extra } } }, null, 2)
  )
  return { ...made, file }
}

const run = (project: string, env: Record<string, string>) =>
  runLathe(["run", "hello"], { cwd: project, env, timeoutMs: 60_000 })

describe("a rejected key names its source", () => {
  it("(a) the environment variable", slow, async () => {
    const { project, env } = await box()
    const result = await run(project, { ...env, OPENAI_API_KEY: KEY })
    assert.strictEqual(result.code, 1, result.stdout)
    assert.include(result.stderr, 'Provider "openai" rejected the key from OPENAI_API_KEY (HTTP 401)')
    assert.include(result.stderr, "To fix it, set OPENAI_API_KEY")
    assert.notInclude(result.stderr + result.stdout, KEY)
  })

  it("(b) the key stored by lathe auth login, with its file", slow, async () => {
    const { project, env, dir } = await box()
    const login = await runLathe(["auth", "login", "openai"], { cwd: project, env, input: `${KEY}\n` })
    assert.strictEqual(login.code, 0, login.stderr)
    const result = await run(project, env)
    assert.strictEqual(result.code, 1, result.stdout)
    const auth = join(dir, "data", "auth.json")
    assert.include(
      result.stderr,
      `Provider "openai" rejected the key stored by \`lathe auth login openai\` (${auth}) (HTTP 401)`
    )
    assert.notInclude(result.stderr + result.stdout, KEY)
  })

  it("(c) the apiKey in the config file, or the variable its {env:} value reads", slow, async () => {
    const literal = await box({ apiKey: KEY })
    const result = await run(literal.project, literal.env)
    assert.strictEqual(result.code, 1, result.stdout)
    assert.include(
      result.stderr,
      `Provider "openai" rejected the apiKey in ${literal.file} (provider.openai.apiKey) (HTTP 401)`
    )
    assert.notInclude(result.stderr + result.stdout, KEY)
    await server?.close()

    const placeholder = await box({ apiKey: "{env:WORK_OPENAI_KEY}" })
    const viaEnv = await run(placeholder.project, { ...placeholder.env, WORK_OPENAI_KEY: KEY })
    assert.strictEqual(viaEnv.code, 1, viaEnv.stdout)
    assert.include(
      viaEnv.stderr,
      `rejected the key from WORK_OPENAI_KEY, which provider.openai.apiKey in ${placeholder.file} reads (HTTP 401)`
    )
    assert.notInclude(viaEnv.stderr + viaEnv.stdout, KEY)
  })
})
