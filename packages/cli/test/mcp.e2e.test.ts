import { mkdirSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { afterEach, assert, describe, it } from "vitest"
import { runLathe, sandbox } from "./helpers.js"

// End to end: the real CLI process with a real MCP server (server-everything over stdio) from node_modules, a
// server that exits at once, and the scripted model server on 127.0.0.1.
const require = createRequire(import.meta.url)
const everything = join(
  dirname(require.resolve("@modelcontextprotocol/server-everything/package.json")),
  "dist",
  "index.js"
)

let model: ScriptedServer | undefined
afterEach(async () => {
  await model?.close()
  model = undefined
})

/** A sandbox whose user config (trusted) has the everything server and a broken one. */
const setup = (modelURL?: string) => {
  const box = sandbox()
  const configDir = join(box.env.XDG_CONFIG_HOME ?? "", "lathe")
  mkdirSync(configDir, { recursive: true })
  const mcp = {
    // The first request must offer its tools: the run waits for it (other servers' tools may arrive later).
    everything: { type: "local", command: [process.execPath, everything, "stdio"], wait: true },
    broken: { type: "local", command: [process.execPath, "-e", "console.error('no API key'); process.exit(2)"] }
  }
  writeFileSync(join(configDir, "lathe.json"), JSON.stringify({ mcp }))
  const env = modelURL ? { ...box.env, LATHE_BASE_URL: modelURL, LATHE_MODEL: "test-model" } : box.env
  return { ...box, env }
}

describe("MCP in the CLI (end to end)", () => {
  it("lathe run calls an MCP tool and goes on without the server that failed, saying why", async () => {
    model = await startScriptedServer([
      { steps: [{ tool: "everything_echo", input: { message: "from mcp" } }] },
      { steps: [{ text: "The server echoed it." }] }
    ])
    const { project, env } = setup(model.url)
    const run = await runLathe(["run", "--format", "json", "echo something"], { cwd: project, env, timeoutMs: 60_000 })
    assert.strictEqual(run.code, 0, run.stderr)
    assert.match(run.stderr, /MCP server "broken" did not start: failed: .*no API key/s)
    const offered = JSON.stringify((model.requests[0]?.body as { tools?: unknown } | undefined)?.tools)
    assert.include(offered, '"name":"everything_echo"')
    assert.notInclude(offered, "broken_")
    const completed = run.events.flatMap((e) => (e.type === "tool.completed" ? [e] : []))
    assert.deepStrictEqual(
      completed.map((e) => e.state.input),
      [{ message: "from mcp" }]
    )
    assert.include(JSON.stringify(model.requests[1]?.body), "Echo: from mcp")
  })

  it("a tool without readOnlyHint is asked by default (rejected without a terminal)", async () => {
    model = await startScriptedServer([
      { steps: [{ tool: "everything_toggle-subscriber-updates", input: {} }] },
      { steps: [{ text: "ok" }] }
    ])
    const { project, env } = setup(model.url)
    const run = await runLathe(["run", "--format", "json", "toggle"], { cwd: project, env, timeoutMs: 60_000 })
    const asked = run.events.find((e) => e.type === "permission.asked")
    assert.strictEqual(
      asked?.type === "permission.asked" ? asked.permission : "",
      "everything_toggle-subscriber-updates",
      run.stderr
    )
    assert.deepStrictEqual(asked?.type === "permission.asked" ? asked.patterns : [], ["mcp:may-write"])
  })

  it("lathe mcp list names each server's state and the failure's reason; lathe mcp tools lists one's tools", async () => {
    const { project, env } = setup()
    const list = await runLathe(["mcp", "list"], { cwd: project, env, timeoutMs: 60_000 })
    assert.strictEqual(list.code, 1, list.stderr)
    assert.match(list.stdout, /everything\s+connected \(\d+ tools\)/)
    assert.match(list.stdout, /broken\s+failed: .*no API key/s)
    const tools = await runLathe(["mcp", "tools", "everything"], { cwd: project, env, timeoutMs: 60_000 })
    assert.strictEqual(tools.code, 0, tools.stderr)
    assert.match(tools.stdout, /everything_echo {2}\(read-only: allowed\)/)
    assert.match(tools.stdout, /everything_toggle-subscriber-updates {2}\(asks\)/)
  })

  it("lathe mcp auth and logout: clear errors for a missing or unknown server, logout of nothing says so", async () => {
    const box = sandbox()
    const missing = await runLathe(["mcp", "auth"], { cwd: box.project, env: box.env })
    assert.strictEqual(missing.code, 2)
    assert.include(missing.stderr, "name the server")
    const unknown = await runLathe(["mcp", "auth", "nosuch"], { cwd: box.project, env: box.env })
    assert.strictEqual(unknown.code, 1)
    assert.include(unknown.stderr, 'no remote MCP server named "nosuch"')
    const out = await runLathe(["mcp", "logout", "nosuch"], { cwd: box.project, env: box.env })
    assert.strictEqual(out.code, 0, out.stderr)
    assert.include(out.stdout, "nosuch had no stored sign-in")
  })

  it("commands that call no tools (undo, agents, plugin list) do not start MCP servers", async () => {
    const box = sandbox()
    const configDir = join(box.env.XDG_CONFIG_HOME ?? "", "lathe")
    mkdirSync(configDir, { recursive: true })
    // A server that never answers: starting it would hold a command for its whole timeout.
    const hang = { type: "local", command: [process.execPath, "-e", "setInterval(() => {}, 1000)"], timeout: 20_000 }
    writeFileSync(join(configDir, "lathe.json"), JSON.stringify({ mcp: { hang } }))
    const started = Date.now()
    const undo = await runLathe(["undo"], { cwd: box.project, env: box.env })
    const agents = await runLathe(["agents"], { cwd: box.project, env: box.env })
    const plugins = await runLathe(["plugin", "list"], { cwd: box.project, env: box.env })
    // A started server would hold at least one command for its whole 20 s timeout.
    assert.isBelow(Date.now() - started, 19_000)
    assert.strictEqual(plugins.code, 0, plugins.stderr)
    assert.include(plugins.stdout, "MCP servers: hang; not started here")
    assert.include(undo.stderr, "no session yet")
    assert.strictEqual(agents.code, 0, agents.stderr)
  })
})
