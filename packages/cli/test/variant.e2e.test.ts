import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { type ScriptedServer, startWireServer } from "@lathe/core/testing"
import { afterEach, assert, describe, it } from "vitest"
import { runLathe, sandbox } from "./helpers.js"

// `lathe run --variant` and prompt caching through the real CLI, against a server speaking the Anthropic Messages
// API: the request carries the thinking budget and the cache breakpoints, and the totals show the cache tokens.
let server: ScriptedServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

const setup = async () => {
  server = await startWireServer("anthropic", [
    { tool: { name: "read", input: { path: "a.txt" } }, usage: { input: 1_200, output: 40, cacheWrite: 3_000 } },
    { text: "It says alpha.", usage: { input: 60, output: 12, cacheRead: 4_200, cacheWrite: 90 } }
  ])
  const box = sandbox()
  writeFileSync(join(box.project, "a.txt"), "alpha\n")
  // The provider's URL is the person's own config: a project's would be ignored until the folder is trusted.
  mkdirSync(join(box.dir, "config", "lathe"), { recursive: true })
  writeFileSync(
    join(box.dir, "config", "lathe", "lathe.json"),
    JSON.stringify({ model: "anthropic/claude-sonnet-4-5", provider: { anthropic: { baseURL: server.url } } })
  )
  return { ...box, env: { ...box.env, ANTHROPIC_API_KEY: "sk-ant-test" }, server }
}

type Body = {
  thinking?: unknown
  system: Array<{ cache_control?: unknown }>
  tools: Array<{ cache_control?: unknown }>
}

describe("lathe run --variant", () => {
  it("--variant high sends a 32,000-token thinking budget on every step, with cache breakpoints", async () => {
    const { project, env, server } = await setup()
    const run = await runLathe(["run", "--variant", "high", "what does a.txt say?"], { cwd: project, env })
    assert.strictEqual(run.code, 0, run.stderr)
    assert.strictEqual(server.requests.length, 2)
    for (const request of server.requests) {
      const body = request.body as Body
      assert.deepStrictEqual(body.thinking, { type: "enabled", budget_tokens: 32_000 })
      assert.deepStrictEqual(body.system.at(-1)?.cache_control, { type: "ephemeral" })
      assert.deepStrictEqual(body.tools.at(-1)?.cache_control, { type: "ephemeral" })
    }
    // The closing line shows the cache tokens the two steps reported.
    assert.include(run.stderr, "cache read 4,200, cache write 3,090")
  })

  it("without --variant no thinking is asked for; a variant that is not a level is refused", async () => {
    const { project, env, server } = await setup()
    const plain = await runLathe(["run", "--format", "json", "what does a.txt say?"], { cwd: project, env })
    assert.strictEqual(plain.code, 0, plain.stderr)
    assert.notProperty(server.requests[0]?.body as Body, "thinking")
    // Step 2 by hand: 60 new × $3 + 12 out × $15 + 4,200 read × $0.30 + 90 written × $3.75 = $1,957.5 per million.
    const costs = plain.events.flatMap((e) => (e.type === "step.finished" ? [e.cost] : []))
    assert.closeTo(costs[1] ?? 0, (60 * 3 + 12 * 15 + 4_200 * 0.3 + 90 * 3.75) / 1e6, 1e-12)
    const bad = await runLathe(["run", "--variant", "max", "hi"], { cwd: project, env })
    assert.strictEqual(bad.code, 2)
    assert.include(bad.stderr, '--variant must be "low", "medium" or "high", not "max"')
  })
})
