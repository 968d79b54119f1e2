/**
 * Shell hooks (`@lathe/hooks`) through the real CLI: an untrusted project's Claude Code hooks do not run (one notice
 * says how to trust it), and the person's own PreToolUse hook that exits 2 blocks a bash call, its stderr reaching
 * the model.
 */
import { chmodSync, existsSync, mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { type RecordedRequest, type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { afterEach, assert, describe, it } from "vitest"
import { runLathe, sandbox } from "./helpers.js"

const servers: Array<ScriptedServer> = []
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close()
})

/** Asks for `touch made-by-bash` until a tool result is in the history, then ends. */
const agentScript = (request: RecordedRequest) =>
  JSON.stringify(request.body).includes('"role":"tool"')
    ? { steps: [{ text: "Done." }] }
    : { steps: [{ tool: "bash", input: { command: "touch made-by-bash", description: "make a file" } }] }

const writeJson = (path: string, value: unknown) => {
  mkdirSync(join(path, ".."), { recursive: true })
  writeFileSync(path, JSON.stringify(value))
}

const setup = async () => {
  const server = await startScriptedServer(agentScript)
  servers.push(server)
  const box = sandbox()
  writeJson(join(box.dir, "config", "lathe", "lathe.json"), {
    model: "local/m",
    provider: { local: { type: "openai-compatible", baseURL: server.url, models: { m: {} } } },
    permission: { bash: "allow" }
  })
  const run = () => runLathe(["run", "--format", "json", "make a file"], { cwd: box.project, env: box.env })
  return { ...box, server, run }
}

const preToolUse = (command: string) => ({
  hooks: { PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command }] }] }
})

describe("hooks (end to end)", () => {
  it("an untrusted project's hooks do not run, and one notice says how to trust it", async () => {
    const t = await setup()
    writeJson(join(t.project, ".claude", "settings.json"), preToolUse('touch "$CLAUDE_PROJECT_DIR/hook-ran"'))
    const result = await t.run()
    assert.strictEqual(result.code, 0, result.stderr)
    assert.isFalse(existsSync(join(t.project, "hook-ran")))
    assert.isTrue(existsSync(join(t.project, "made-by-bash")))
    const notices = result.stderr.split("\n").filter((line) => line.includes("Ignored the hooks in"))
    assert.strictEqual(notices.length, 1, result.stderr)
    assert.include(notices[0], join(".claude", "settings.json"))
    assert.include(notices[0], "Run `lathe trust` in")
  }, 30_000)

  it("the person's PreToolUse hook exiting 2 blocks the bash call, and the model reads its stderr", async () => {
    const t = await setup()
    const guard = join(t.dir, "guard.sh")
    writeFileSync(guard, '#!/bin/bash\ncat > /dev/null\necho "No new files today: explain instead." >&2\nexit 2\n')
    chmodSync(guard, 0o755)
    writeJson(join(t.env.HOME ?? "", ".claude", "settings.json"), preToolUse(guard))
    const result = await t.run()
    assert.strictEqual(result.code, 0, result.stderr)
    assert.isFalse(existsSync(join(t.project, "made-by-bash")))
    assert.lengthOf(t.server.requests, 2)
    assert.include(JSON.stringify(t.server.requests[1]?.body), "No new files today: explain instead.")
  }, 30_000)
})
