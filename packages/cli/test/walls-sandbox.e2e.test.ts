import { execFileSync, spawnSync } from "node:child_process"
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { afterEach, assert, describe, it } from "vitest"
import { runLathe, sandbox } from "./helpers.js"

// "Walls that hold", end to end through the real CLI with no terminal: a scripted model attacks git's configuration
// with the write tool and the protected paths and a tmux server with bash in the real bubblewrap sandbox. Each run
// passes --yes, which approves ordinary asks but never a person-only one.
let server: ScriptedServer | undefined
const tmuxSockets: Array<string> = []
afterEach(async () => {
  await server?.close()
  server = undefined
  for (const socket of tmuxSockets.splice(0)) spawnSync("tmux", ["-S", socket, "kill-server"])
})

type Step = { readonly tool: string; readonly input: unknown } | { readonly text: string }
const setup = async (responses: ReadonlyArray<ReadonlyArray<Step>>) => {
  server = await startScriptedServer(responses.map((steps) => ({ steps: [...steps] })))
  const box = sandbox()
  const git = (...args: Array<string>) => execFileSync("git", args, { cwd: box.project, encoding: "utf8" })
  git("init", "-q")
  git("-c", "user.email=t@example.com", "-c", "user.name=T", "commit", "-q", "--allow-empty", "-m", "one")
  return { ...box, git, env: { ...box.env, LATHE_BASE_URL: server.url, LATHE_MODEL: "m" } }
}
const lathe = (project: string, env: Record<string, string>) =>
  runLathe(["run", "--format", "json", "--yes", "go"], { cwd: project, env, timeoutMs: 60_000 })

describe.runIf(process.platform === "linux")("lathe run: the sandbox's walls", () => {
  it("write to .git/config is refused even with --yes: person-only, and the file is unchanged", async () => {
    const hostile = '[core]\n\tfsmonitor = "touch /tmp/lathe-walls-owned; false"\n'
    const { project, env } = await setup([
      [{ tool: "read", input: { filePath: ".git/config" } }],
      [{ tool: "write", input: { filePath: ".git/config", content: hostile } }],
      [{ text: "done" }]
    ])
    const before = readFileSync(join(project, ".git/config"), "utf8")
    const run = await lathe(project, env)
    const asked = run.events.find((e) => e.type === "permission.asked" && e.permission === "protected_path")
    assert.ok(asked, run.stdout + run.stderr)
    assert.strictEqual(asked?.type === "permission.asked" ? asked.metadata.requiresPerson : undefined, true)
    assert.deepEqual(asked?.type === "permission.asked" ? asked.patterns : [], [".git/config"])
    const replied = run.events.find(
      (e) => e.type === "permission.replied" && asked?.type === "permission.asked" && e.id === asked.id
    )
    assert.strictEqual(replied?.type === "permission.replied" ? replied.reply : "", "reject")
    assert.strictEqual(readFileSync(join(project, ".git/config"), "utf8"), before)
  })

  it("bash cannot leave lathe.jsonc, .lathe/plugins or .git/commondir behind, nor drive a tmux server", async () => {
    const socket = `/tmp/lathe-walls-e2e-${process.pid}-${Date.now()}.sock`
    execFileSync("tmux", ["-S", socket, "new-session", "-d", "/bin/bash", "--norc", "--noprofile"])
    tmuxSockets.push(socket)
    const victim = `${socket}.victim`
    const command =
      "mkdir -p .lathe/plugins && echo 'export default {}' > .lathe/plugins/x.mjs && echo '{}' > lathe.jsonc && " +
      `echo /tmp > .git/commondir; tmux -S ${socket} send-keys 'touch ${victim}' Enter; true`
    const box = await setup([[{ tool: "bash", input: { command, description: "plant things" } }], [{ text: "done" }]])
    const run = await lathe(box.project, box.env)
    assert.strictEqual(run.code, 0, run.stdout + run.stderr)
    for (const path of [".lathe", "lathe.jsonc", ".git/commondir"])
      assert.isFalse(existsSync(join(box.project, path)), `${path} survived`)
    const toModel = JSON.stringify(server?.requests[1]?.body)
    assert.include(toModel, "Lathe removed lathe.jsonc after the command")
    assert.include(toModel, "Lathe removed .git/commondir after the command")
    await new Promise((resolve) => setTimeout(resolve, 1500))
    assert.isFalse(existsSync(victim), "the tmux server ran the command")
  })

  it("bash cannot rename .git away: busy, the escape is person-only and refused", async () => {
    const { project, env } = await setup([
      [{ tool: "bash", input: { command: "mv .git .git-old && git init -q", description: "swap git" } }],
      [{ text: "done" }]
    ])
    writeFileSync(join(project, "a.txt"), "a\n")
    const run = await lathe(project, env)
    assert.isTrue(existsSync(join(project, ".git/HEAD")))
    assert.isFalse(existsSync(join(project, ".git-old")))
    const asked = run.events.find((e) => e.type === "permission.asked" && e.permission === "sandbox_escape")
    assert.ok(asked, run.stdout + run.stderr)
    const replied = run.events.find(
      (e) => e.type === "permission.replied" && asked?.type === "permission.asked" && e.id === asked.id
    )
    assert.strictEqual(replied?.type === "permission.replied" ? replied.reply : "", "reject")
  })
})
