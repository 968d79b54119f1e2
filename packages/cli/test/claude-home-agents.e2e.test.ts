import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { afterEach, assert, describe, it } from "vitest"
import { runLathe, sandbox } from "./helpers.js"

// A Claude Code user's personal subagents (`~/.claude/agents/*.md`) load as the person's own agents, in any project
// (trusted or not, like their config), and as subagents unless the file names another mode.
let server: ScriptedServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

// Several real CLI runs per test, on a machine shared with other test runs.
const timeoutMs = 90_000
const slow = { timeout: 4 * timeoutMs }

describe("~/.claude/agents", () => {
  it("loads as user-level subagents in an untrusted project; @name runs one", slow, async () => {
    server = await startScriptedServer([{ steps: [{ text: "Reviewed." }] }])
    const box = sandbox()
    const agents = join(box.env.HOME ?? "", ".claude", "agents")
    mkdirSync(agents, { recursive: true })
    writeFileSync(
      join(agents, "code-reviewer.md"),
      "---\nname: code-reviewer\ndescription: Reviews code\ntools: Read, Grep\n---\nREVIEWER-PROMPT: review carefully.\n"
    )
    writeFileSync(join(agents, "lead.md"), "---\ndescription: Leads\nmode: primary\n---\nLead.\n")
    const env = { ...box.env, LATHE_BASE_URL: server.url, LATHE_MODEL: "m" }

    const list = await runLathe(["agents"], { cwd: box.project, env, timeoutMs })
    assert.strictEqual(list.code, 0, list.stderr)
    assert.match(
      list.stdout,
      /^code-reviewer +subagent +inherits +\/.*\.claude\/agents\/code-reviewer\.md\n +Reviews code/m
    )
    assert.match(list.stdout, /^lead +primary +inherits +\/.*\.claude\/agents\/lead\.md/m)
    assert.notInclude(list.stderr, "not trusted", "the person's home is not the project's")

    const run = await runLathe(["run", "@code-reviewer look at a.ts"], { cwd: box.project, env, timeoutMs })
    assert.strictEqual(run.code, 0, run.stderr)
    const body = JSON.stringify(server.requests[0]?.body)
    assert.include(body, "REVIEWER-PROMPT: review carefully.")
  })
})
