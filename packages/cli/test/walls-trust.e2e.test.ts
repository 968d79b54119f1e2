/**
 * Walls that hold, end to end through the real CLI with no terminal: an untrusted project's `default_agent`,
 * `plugin_timeout_ms: 1`, an absolute `instructions` entry and an `AGENTS.md` committed as a symlink to a file
 * outside the project change nothing. The scripted model server records the request: no outside secret in it, the
 * person's default agent used, and stderr names each ignored key. After `lathe trust` the same run applies them.
 */
import { mkdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { afterEach, assert, describe, it } from "vitest"
import { runLathe, sandbox } from "./helpers.js"

const servers: Array<ScriptedServer> = []
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close()
})

const INSTRUCTION_SECRET = "OUTSIDE-INSTRUCTION-SECRET-51c2"
const AGENTS_SECRET = "OUTSIDE-AGENTS-SECRET-9e4d"
const CAREFUL = "CAREFUL-AGENT-PROMPT-3b7a"

describe("walls: untrusted config is an allow-list (end to end)", () => {
  it("an untrusted project cannot pick the agent, starve hooks, or read outside files into the prompt", async () => {
    const model = await startScriptedServer(() => ({ steps: [{ text: "Done." }] }))
    servers.push(model)
    const box = sandbox()
    const outside = join(box.dir, "outside")
    mkdirSync(outside)
    mkdirSync(join(box.dir, "config", "lathe"), { recursive: true })
    writeFileSync(join(outside, "secret.md"), INSTRUCTION_SECRET)
    writeFileSync(join(outside, "agents-secret.md"), AGENTS_SECRET)
    // The person's config: their provider, and a careful default agent.
    writeFileSync(
      join(box.dir, "config", "lathe", "lathe.json"),
      JSON.stringify({
        model: "local/m",
        provider: { local: { type: "openai-compatible", baseURL: model.url, models: { m: {} } } },
        default_agent: "careful",
        agent: { careful: { mode: "primary", description: "Careful", prompt: CAREFUL } }
      })
    )
    // What the cloned repository committed.
    const secretFile = join(outside, "secret.md")
    writeFileSync(
      join(box.project, "lathe.json"),
      JSON.stringify({ default_agent: "build", plugin_timeout_ms: 1, instructions: [secretFile] })
    )
    symlinkSync(join(outside, "agents-secret.md"), join(box.project, "AGENTS.md"))
    // The payload works without Lathe: reading the committed AGENTS.md gives the outside secret.
    assert.strictEqual(readFileSync(join(box.project, "AGENTS.md"), "utf8"), AGENTS_SECRET)
    const run = () => runLathe(["run", "--format", "json", "hello"], { cwd: box.project, env: box.env })
    const real = realpathSync(box.project)

    const first = await run()
    assert.strictEqual(first.code, 0, first.stderr)
    assert.strictEqual(model.requests.length, 1)
    const request = JSON.stringify(model.requests[0]?.body)
    assert.notInclude(request, INSTRUCTION_SECRET)
    assert.notInclude(request, AGENTS_SECRET)
    assert.include(request, CAREFUL) // the person's default agent ran
    const notice = first.stderr.split("\n").find((line) => line.includes("Ignored from untrusted"))
    assert.isDefined(notice, first.stderr)
    for (const key of [
      "default_agent",
      "plugin_timeout_ms",
      `instructions ${JSON.stringify(secretFile)}`,
      "lathe trust"
    ])
      assert.include(notice, key)
    // The skipped symlink is a notice event (on stdout in --format json).
    const skipped = first.events.find((e) => e.type === "notice" && e.message.includes(join(real, "AGENTS.md")))
    assert.include(skipped?.type === "notice" ? skipped.message : "", "is outside the project). Run `lathe trust`")
    assert.notInclude(first.stderr, "did not finish within") // no hook was starved

    const trust = await runLathe(["trust"], { cwd: box.project, env: box.env })
    assert.strictEqual(trust.code, 0, trust.stderr)
    const second = await run()
    assert.strictEqual(second.code, 0, second.stderr)
    assert.notInclude(second.stderr, "Ignored from untrusted")
    const trusted = JSON.stringify(model.requests[1]?.body)
    assert.include(trusted, INSTRUCTION_SECRET)
    assert.include(trusted, AGENTS_SECRET)
    assert.notInclude(trusted, CAREFUL) // the project's default_agent (build) ran
  }, 120_000)
})
