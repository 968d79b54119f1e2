/**
 * "Walls that hold", end to end through the real CLI with no terminal: a cloned repository's `.git/config` names an
 * fsmonitor program that plain `git status` runs, and `lathe run` there (start-up prefetch, paths, system prompt,
 * snapshots) never runs it; a plugin the person's global config names, planted in the project's `node_modules`, never
 * loads. A scripted model server stands for the provider.
 */
import { execFileSync } from "node:child_process"
import { chmodSync, existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { afterEach, assert, describe, it } from "vitest"
import { runLathe, sandbox } from "./helpers.js"

const servers: Array<ScriptedServer> = []
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close()
})

const git = (cwd: string, ...args: Array<string>) =>
  execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd, stdio: "ignore" })

/** A sandbox with the person's global config pointing at a scripted server that answers "Done." */
const setup = async (globalConfig: Record<string, unknown> = {}) => {
  const server = await startScriptedServer(() => ({ steps: [{ text: "Done." }] }))
  servers.push(server)
  const box = sandbox()
  const configDir = join(box.dir, "config", "lathe")
  mkdirSync(configDir, { recursive: true })
  writeFileSync(
    join(configDir, "lathe.json"),
    JSON.stringify({
      model: "local/m",
      provider: { local: { type: "openai-compatible", baseURL: server.url, models: { m: {} } } },
      ...globalConfig
    })
  )
  const marks = join(box.dir, "marks")
  mkdirSync(marks)
  const run = () => runLathe(["run", "--format", "json", "hello"], { cwd: box.project, env: box.env })
  return { ...box, server, configDir, marks, run }
}

describe("walls: git and plugins (end to end)", () => {
  it("lathe run in a repository whose .git/config names an fsmonitor program never runs it", async () => {
    const t = await setup()
    git(t.project, "init", "-q", "-b", "main")
    writeFileSync(join(t.project, "a.txt"), "a\n")
    git(t.project, "add", "-A")
    git(t.project, "commit", "-qm", "first")
    const hook = join(t.marks, "fsmonitor.sh")
    writeFileSync(hook, `#!/bin/sh\ntouch '${join(t.marks, "fsmonitor-ran")}'\nexit 1\n`)
    chmodSync(hook, 0o755)
    git(t.project, "config", "core.fsmonitor", hook)

    // Without Lathe: the person's plain `git status` in that repository runs the planted program.
    execFileSync("git", ["status", "--porcelain"], { cwd: t.project, stdio: "ignore" })
    assert.isTrue(existsSync(join(t.marks, "fsmonitor-ran")))
    rmSync(join(t.marks, "fsmonitor-ran"))

    const run = await t.run()
    assert.strictEqual(run.code, 0, run.stderr)
    assert.isTrue(run.events.some((e) => e.type === "session.idle"))
    // The system prompt still knows the repository (the hardened git answered).
    assert.include(JSON.stringify(t.server.requests[0]?.body), "Is the directory a git repository: yes")
    assert.isFalse(existsSync(join(t.marks, "fsmonitor-ran")), "lathe run never ran the repository's fsmonitor")
  })

  it("a plugin the global config names, planted in the project's node_modules, never loads", async () => {
    const t = await setup({ plugin: ["lathe-plugin-x"] })
    const pkg = join(t.project, "node_modules", "lathe-plugin-x")
    mkdirSync(pkg, { recursive: true })
    writeFileSync(
      join(pkg, "package.json"),
      JSON.stringify({ name: "lathe-plugin-x", type: "module", main: "index.js" })
    )
    writeFileSync(
      join(pkg, "index.js"),
      `import { writeFileSync } from "node:fs"\nwriteFileSync(${JSON.stringify(join(t.marks, "planted-ran"))}, "x")\n` +
        "export default { setup: async () => ({}) }\n"
    )

    const run = await t.run()
    assert.strictEqual(run.code, 0, run.stderr)
    assert.isFalse(existsSync(join(t.marks, "planted-ran")), "the planted copy never ran")
    // The person is told where Lathe looked for their plugin and how to install it there.
    assert.include(`${run.stdout}\n${run.stderr}`, `cd ${t.configDir} && npm i lathe-plugin-x`)
  })
})
