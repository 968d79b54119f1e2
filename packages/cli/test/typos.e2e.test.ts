import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { runLathe, sandbox } from "./helpers.js"

// A CLI that forgives typos: through the real CLI (from source), a mistyped option, subcommand or slash command gets
// one line naming the nearest right one, exit 2 and no stack trace; every command has --help.
let server: ScriptedServer
beforeAll(async () => {
  server = await startScriptedServer(() => ({ steps: [{ text: "ok" }] }))
})
afterAll(async () => {
  await server.close()
})

/** A sandbox whose person's config points at the scripted model server. */
const box = () => {
  const b = sandbox()
  mkdirSync(join(b.env.XDG_CONFIG_HOME ?? "", "lathe"), { recursive: true })
  writeFileSync(
    join(b.env.XDG_CONFIG_HOME ?? "", "lathe", "lathe.json"),
    JSON.stringify({
      model: "local/test-model",
      provider: { local: { type: "openai-compatible", baseURL: server.url } }
    })
  )
  return b
}

/** No stack trace and none of Node's parser error codes. */
const clean = (stderr: string) => {
  assert.notMatch(stderr, /\n\s+at /)
  assert.notInclude(stderr, "ERR_PARSE_ARGS")
}

/** Every top-level command `lathe --help` lists. */
const COMMANDS = [
  "run",
  "undo",
  "redo",
  "session",
  "export",
  "import",
  "serve",
  "runner",
  "cluster",
  "models",
  "auth",
  "agents",
  "plugin",
  "mcp",
  "config",
  "permissions",
  "doctor",
  "trust",
  "untrust"
]

describe("a CLI that forgives typos", () => {
  it("lathe run --formt json suggests --format, exits 2 and sends no model request", { timeout: 60_000 }, async () => {
    const b = box()
    const before = server.requests.length
    const run = await runLathe(["run", "--formt", "json", "say hi"], { cwd: b.project, env: b.env })
    assert.strictEqual(run.code, 2)
    assert.strictEqual(
      run.stderr,
      "lathe run: unknown option --formt. Did you mean --format? Run lathe run --help for the options.\n"
    )
    assert.strictEqual(run.stdout, "")
    clean(run.stderr)
    assert.strictEqual(server.requests.length, before)
  })

  it("lathe session lst suggests list", { timeout: 60_000 }, async () => {
    const b = box()
    const run = await runLathe(["session", "lst"], { cwd: b.project, env: b.env })
    assert.strictEqual(run.code, 2)
    assert.include(run.stderr, 'lathe session: unknown subcommand "lst". Did you mean list?')
    clean(run.stderr)
  })

  it("lathe config x is a clear usage error, not Node's parser message", { timeout: 60_000 }, async () => {
    const b = box()
    const run = await runLathe(["config", "x"], { cwd: b.project, env: b.env })
    assert.strictEqual(run.code, 2)
    assert.strictEqual(
      run.stderr,
      'lathe config: unexpected argument "x" (it takes no arguments). Run lathe config --help for the options.\n'
    )
    clean(run.stderr)
  })

  it("lathe mcp add --help prints its help and exits 0", { timeout: 60_000 }, async () => {
    const b = box()
    const run = await runLathe(["mcp", "add", "--help"], { cwd: b.project, env: b.env })
    assert.strictEqual(run.code, 0, run.stderr)
    assert.include(run.stdout, "Usage: lathe mcp add <name>")
    assert.include(run.stdout, "--url <url>")
    assert.strictEqual(run.stderr, "")
  })

  it("every top-level command's --help exits 0 and prints its usage", { timeout: 240_000 }, async () => {
    const b = box()
    for (const command of COMMANDS) {
      const run = await runLathe([command, "--help"], { cwd: b.project, env: b.env })
      assert.strictEqual(run.code, 0, `${command}: ${run.stderr}`)
      assert.include(run.stdout, `Usage: lathe ${command}`, command)
      clean(run.stderr)
    }
  })

  it("/modles in the interactive line mode suggests /models", { timeout: 60_000 }, async () => {
    const b = box()
    const run = await runLathe([], { cwd: b.project, env: b.env, input: "/modles\n" })
    assert.include(`${run.stdout}${run.stderr}`, "No command /modles. Did you mean /models?")
  })
})
