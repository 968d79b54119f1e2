import { spawn } from "node:child_process"
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { type RecordedRequest, type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { afterEach, assert, describe, it } from "vitest"
import { runLathe, sandbox } from "./helpers.js"

// End to end: MCP servers start like peers start them. The real CLI, a real stdio MCP server (the probe fixture of
// @lathe/mcp: it can hold back its answer to `initialize` and records its start, signals and stdin), and the scripted
// model server on 127.0.0.1.
const probe = fileURLToPath(new URL("../../mcp/test/fixtures/probe-server.mjs", import.meta.url))
const bin = fileURLToPath(new URL("../src/bin.ts", import.meta.url))
const tsx = import.meta.resolve("tsx")

let model: ScriptedServer | undefined
afterEach(async () => {
  await model?.close()
  model = undefined
})

/** A sandbox whose user config (trusted) has the probe server `slow` started with `args`, and `settings`. */
const setup = (
  url: string,
  server: Record<string, unknown>,
  args: ReadonlyArray<string>,
  settings: Record<string, unknown> = {}
) => {
  const box = sandbox()
  const configDir = join(box.env.XDG_CONFIG_HOME ?? "", "lathe")
  mkdirSync(configDir, { recursive: true })
  const record = join(box.dir, "record")
  const command = [process.execPath, probe, "--record", record, ...args]
  writeFileSync(
    join(configDir, "lathe.json"),
    JSON.stringify({ ...settings, mcp: { slow: { type: "local", command, timeout: 20_000, ...server } } })
  )
  writeFileSync(join(box.project, "notes.txt"), "notes\n")
  return { ...box, record, env: { ...box.env, LATHE_BASE_URL: url, LATHE_MODEL: "test-model" } }
}

const lines = (file: string): Array<string> => {
  try {
    return readFileSync(file, "utf8").trim().split("\n")
  } catch {
    return []
  }
}
/** When the probe process started (epoch ms), from its record. */
const startedAt = (record: string): number => Number(lines(record)[0]?.split(" ")[1])
/** When the model server received a request (epoch ms). */
const epoch = (request: RecordedRequest | undefined): number => performance.timeOrigin + (request?.receivedAt ?? 0)
/** Whether a tool result in the request's history says "pong" (the server's tool ran). */
const ponged = (request: RecordedRequest): boolean =>
  ((request.body as { messages?: Array<{ role?: string; content?: unknown }> }).messages ?? []).some(
    (message) => message.role === "tool" && JSON.stringify(message.content).includes("pong")
  )
const offers = (request: RecordedRequest | undefined, tool: string): boolean =>
  JSON.stringify((request?.body as { tools?: unknown } | undefined)?.tools ?? []).includes(`"name":"${tool}"`)

describe("MCP servers at start-up (end to end)", () => {
  it("a server that takes 3 s to start: the first request waits for it and offers its tool", {
    timeout: 90_000
  }, async () => {
    model = await startScriptedServer((request) =>
      ponged(request) ? { steps: [{ text: "pong it is" }] } : { steps: [{ tool: "slow_ping", input: {} }] }
    )
    // Not named by the prompt, not marked wait: true: the default start-up wait of `lathe run` (10 s) covers it.
    const { project, env, record } = setup(model.url, {}, ["--delay", "3000"])
    const run = await runLathe(["run", "--format", "json", "check the notes"], { cwd: project, env, timeoutMs: 60_000 })
    assert.strictEqual(run.code, 0, run.stderr)
    const first = model.requests[0]
    assert.isTrue(offers(first, "slow_ping"), run.stderr)
    assert.isAtLeast(epoch(first) - startedAt(record), 3_000)
    const used = run.events.find(
      (e) => e.type === "tool.completed" && e.state.status === "completed" && e.tool === "slow_ping"
    )
    assert.isDefined(used, run.stdout)
  })

  it("a server slower than mcp_startup_wait: the run goes on without it; it is announced and used in a later step", {
    timeout: 90_000
  }, async () => {
    model = await startScriptedServer((request, index) => {
      if (ponged(request)) return { steps: [{ text: "The server answered pong." }] }
      // Until the server's tool is offered, the model reads a file (slowly, never twice alike), step after step.
      if (!offers(request, "slow_ping"))
        return { steps: [{ tool: "read", input: { filePath: "notes.txt", limit: index + 1 } }], delayMs: 250 }
      return { steps: [{ tool: "slow_ping", input: {} }] }
    })
    const { project, env, record } = setup(model.url, {}, ["--delay", "5000"], { mcp_startup_wait: 1_000 })
    const run = await runLathe(["run", "--format", "json", "check the notes"], { cwd: project, env, timeoutMs: 60_000 })
    assert.strictEqual(run.code, 0, run.stderr)
    const first = model.requests[0]
    assert.isFalse(offers(first, "slow_ping"))
    assert.notInclude(JSON.stringify(first?.body), "Tools now available")
    // The server sleeps 5 s before it answers initialize; the first request came well before that (the run waits 1 s
    // for it; the rest of the margin is for a loaded CI machine).
    assert.isBelow(epoch(first) - startedAt(record), 4_000, run.stderr)
    const offering = model.requests.find((request) => offers(request, "slow_ping"))
    assert.isDefined(offering)
    // The step that first offers it tells the model the server's tools arrived.
    assert.include(JSON.stringify(offering?.body), 'Tools now available from MCP server \\"slow\\"')
    assert.include(JSON.stringify(offering?.body), "slow_ping")
    const used = run.events.find(
      (e) => e.type === "tool.completed" && e.state.status === "completed" && e.tool === "slow_ping"
    )
    assert.isDefined(used, run.stdout)
  })

  it("a prompt that names a server slower than mcp_startup_wait: the first request waits for it", {
    timeout: 90_000
  }, async () => {
    model = await startScriptedServer((request) =>
      ponged(request) ? { steps: [{ text: "pong it is" }] } : { steps: [{ tool: "slow_ping", input: {} }] }
    )
    const { project, env } = setup(model.url, {}, ["--delay", "3000"], { mcp_startup_wait: 500 })
    const run = await runLathe(["run", "--format", "json", "ping the slow server"], {
      cwd: project,
      env,
      timeoutMs: 60_000
    })
    assert.strictEqual(run.code, 0, run.stderr)
    assert.isTrue(offers(model.requests[0], "slow_ping"), run.stderr)
  })

  it("a server that fails at once holds nothing up", { timeout: 90_000 }, async () => {
    model = await startScriptedServer(() => ({ steps: [{ text: "done" }] }))
    const box = setup(model.url, {}, [])
    const configDir = join(box.dir, "config", "lathe")
    writeFileSync(
      join(configDir, "lathe.json"),
      JSON.stringify({
        mcp: { broken: { type: "local", command: [process.execPath, "-e", "process.exit(3)"], timeout: 20_000 } }
      })
    )
    const run = await runLathe(["run", "--format", "json", "use the broken server"], {
      cwd: box.project,
      env: box.env,
      timeoutMs: 60_000
    })
    assert.strictEqual(run.code, 0, run.stderr)
    assert.include(run.stderr, 'MCP server "broken" did not start')
    assert.strictEqual(model.requests.length, 1)
  })

  it("wait: true keeps the old behaviour: the first request waits for the server and offers its tool", {
    timeout: 90_000
  }, async () => {
    model = await startScriptedServer((request) =>
      ponged(request) ? { steps: [{ text: "pong it is" }] } : { steps: [{ tool: "slow_ping", input: {} }] }
    )
    const { project, env, record } = setup(model.url, { wait: true }, ["--delay", "5000"])
    const run = await runLathe(["run", "--format", "json", "ping the server"], { cwd: project, env, timeoutMs: 60_000 })
    assert.strictEqual(run.code, 0, run.stderr)
    const first = model.requests[0]
    assert.isTrue(offers(first, "slow_ping"))
    assert.isAtLeast(epoch(first) - startedAt(record), 5_000)
  })

  it("Ctrl-C (SIGINT to Lathe's process group) reaches only Lathe, which then stops the server cleanly", {
    timeout: 90_000
  }, async () => {
    // The model streams slowly, so the run is still going when the interrupt comes.
    model = await startScriptedServer(() => ({
      steps: Array.from({ length: 40 }, (_, i) => ({ text: `word ${i} ` })),
      delayMs: 500
    }))
    const banner = "Starting probe MCP server (stdio)..."
    const { project, env, record } = setup(model.url, { wait: true }, ["--stderr", banner])
    const child = spawn(process.execPath, ["--conditions=@lathe/source", "--import", tsx, bin, "run", "say words"], {
      cwd: project,
      env,
      stdio: ["ignore", "pipe", "pipe"],
      // Its own process group, as a shell gives a foreground job: the terminal's Ctrl-C is a SIGINT to that group.
      detached: true
    })
    let stderr = ""
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8")
    })
    child.stdout.resume()
    const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)))
    const deadline = Date.now() + 30_000
    while (model.requests.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
    assert.strictEqual(model.requests.length, 1, stderr)
    process.kill(-(child.pid ?? 0), "SIGINT")
    const code = await Promise.race([exited, new Promise<"hung">((r) => setTimeout(() => r("hung"), 20_000))])
    if (code === "hung") process.kill(-(child.pid ?? 0), "SIGKILL")
    assert.strictEqual(code, 130, stderr)
    const happened = lines(record).slice(1)
    // Not killed by the SIGINT: it saw its stdin close (Lathe closing the connection) and exited.
    assert.notInclude(happened, "SIGINT")
    assert.deepStrictEqual(happened, ["stdin-closed", "exit"], stderr)
    // Its start-up banner is not printed as if it explained the stop, and it was not restarted.
    assert.notInclude(stderr, banner)
    assert.notInclude(stderr, "restarting")
  })
})
