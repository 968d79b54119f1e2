/**
 * Lathe's own git calls end to end: `GIT_DIR` / `GIT_WORK_TREE` in the environment `lathe` was started with (a
 * project's .envrc, a wrapper script) used to reach start-up git, so the project root, the branch and the
 * uncommitted changes the model was told of were another repository's. Through the real CLI, the system prompt now
 * describes the project itself.
 */
import { execFileSync, spawnSync } from "node:child_process"
import { mkdirSync, realpathSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { afterEach, assert, describe, it } from "vitest"
import { runLathe, sandbox } from "./helpers.js"

const servers: Array<ScriptedServer> = []
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close()
})

const git = (cwd: string, ...args: Array<string>) =>
  execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd, encoding: "utf8" }).trim()

describe("start-up git ignores GIT_* variables that redirect it (end to end)", () => {
  it("GIT_DIR and GIT_WORK_TREE of another repository do not move the project root or its branch", async () => {
    const server = await startScriptedServer(() => ({ steps: [{ text: "Done." }] }))
    servers.push(server)
    const box = sandbox()
    const project = realpathSync(box.project)
    git(project, "init", "-q", "-b", "main")
    writeFileSync(join(project, "a.txt"), "a\n")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "first")
    const other = join(box.dir, "other")
    mkdirSync(other)
    git(other, "init", "-q", "-b", "their-branch")
    writeFileSync(join(other, "theirs.txt"), "x\n")
    const redirect = { GIT_DIR: join(other, ".git"), GIT_WORK_TREE: other }

    // Without Lathe: git in the project, with these variables, answers for the other repository.
    const plain = (...args: Array<string>) =>
      spawnSync("git", args, { cwd: project, env: { ...process.env, ...redirect }, encoding: "utf8" }).stdout.trim()
    assert.strictEqual(plain("rev-parse", "--show-toplevel"), other)
    assert.strictEqual(plain("branch", "--show-current"), "their-branch")

    const run = await runLathe(["run", "--format", "json", "hello"], {
      cwd: project,
      env: { ...box.env, ...redirect, LATHE_BASE_URL: server.url, LATHE_MODEL: "m" }
    })
    assert.strictEqual(run.code, 0, run.stderr)
    const system = JSON.stringify(server.requests[0]?.body)
    assert.include(system, `Project root: ${project}`)
    assert.include(system, "Git branch: main")
    assert.include(system, "Uncommitted changes: none")
    assert.notInclude(system, "their-branch")
  })
})
