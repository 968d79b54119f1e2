import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { type ScriptedServer, startWireServer } from "@lathe/core/testing"
import { afterEach, assert, describe, it } from "vitest"
import { Controller } from "../src/tui/controller.js"
import { sandbox } from "./helpers.js"

// `/variant` in the interactive session, with the local backend (the agent in this process) against a server
// speaking the Anthropic Messages API: the level holds for the following prompts until `/variant default`.
let server: ScriptedServer | undefined
let controller: Controller | undefined
afterEach(async () => {
  await controller?.dispose()
  await server?.close()
  controller = undefined
  server = undefined
})

const notes = (c: Controller) =>
  c.transcript.timeline.flatMap((item) => (item.kind === "local" ? [`${item.title}: ${item.lines.join(" ")}`] : []))

describe("/variant", () => {
  it("switches the thinking budget for the session's next prompts, and back", { timeout: 30_000 }, async () => {
    server = await startWireServer("anthropic", [{ text: "ok" }])
    const box = sandbox()
    mkdirSync(join(box.dir, "config", "lathe"), { recursive: true })
    writeFileSync(
      join(box.dir, "config", "lathe", "lathe.json"),
      JSON.stringify({ model: "anthropic/claude-sonnet-4-5", provider: { anthropic: { baseURL: server.url } } })
    )
    const env = { ...box.env, ANTHROPIC_API_KEY: "sk-ant-test" }
    const c = await Controller.start(
      { stdout: () => undefined, stderr: () => undefined, env, cwd: box.project, isTTY: false },
      {}
    )
    controller = c
    await c.submit("/variant medium")
    await c.submit("first")
    await c.idle()
    await c.submit("/variant nonsense")
    await c.submit("second")
    await c.idle()
    await c.submit("/variant default")
    await c.submit("third")
    await c.idle()
    // The agent's steps offer tools; the session's title request (no tools) never asks for thinking.
    const bodies = server.requests.map((r) => r.body as { thinking?: unknown; tools?: unknown })
    const budget = { type: "enabled", budget_tokens: 16_000 }
    assert.deepStrictEqual(
      bodies.filter((b) => b.tools !== undefined).map((b) => b.thinking),
      [budget, budget, undefined]
    )
    const titles = bodies.filter((b) => b.tools === undefined)
    assert.strictEqual(titles.length, 1)
    assert.notProperty(titles[0], "thinking")
    assert.include(notes(c).join("\n"), '"nonsense" is not a variant: use low, medium, high or default.')
  })
})
