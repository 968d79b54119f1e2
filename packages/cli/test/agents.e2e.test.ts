import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { afterEach, assert, describe, it } from "vitest"
import { runLathe, sandbox } from "./helpers.js"

// The built-in agents and subagents through the real CLI, the real permission engine and a scripted model.
let server: ScriptedServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

const setup = async (script: Parameters<typeof startScriptedServer>[0]) => {
  server = await startScriptedServer(script)
  const box = sandbox()
  mkdirSync(join(box.project, "src"), { recursive: true })
  writeFileSync(join(box.project, "src", "app.ts"), "export const x = 1\n")
  return { ...box, env: { ...box.env, LATHE_BASE_URL: server.url, LATHE_MODEL: "m" }, server }
}

describe("agents end to end", () => {
  it("--agent plan cannot edit source files, but may write its plan under .lathe/plans/", async () => {
    const { project, env } = await setup([
      {
        steps: [
          { tool: "edit", input: { filePath: "src/app.ts", oldString: "x = 1", newString: "x = 2" } },
          { tool: "write", input: { filePath: ".lathe/plans/refactor.md", content: "# Plan\n1. change x\n" } }
        ]
      },
      { steps: [{ text: "Plan written." }] }
    ])
    const run = await runLathe(["run", "--format", "json", "--agent", "plan", "plan the refactor"], {
      cwd: project,
      env
    })
    assert.strictEqual(run.code, 0, run.stderr)
    assert.strictEqual(readFileSync(join(project, "src", "app.ts"), "utf8"), "export const x = 1\n")
    const denied = run.events.find((e) => e.type === "tool.error" && e.tool === "edit")
    assert.match(denied?.type === "tool.error" && denied.state.status === "error" ? denied.state.error : "", /denied/i)
    assert.isTrue(existsSync(join(project, ".lathe", "plans", "refactor.md")))
  })

  it("a parent that denies bash spawns an explore subagent that cannot run bash either", async () => {
    const { project, env, dir } = await setup((request, index) => {
      const body = JSON.stringify(request.body)
      const messages = JSON.stringify((request.body as { messages?: unknown } | undefined)?.messages)
      const isChild = !body.includes('"name":"task"')
      if (!isChild)
        return messages.includes("task_metadata")
          ? { steps: [{ text: "Explored." }] }
          : {
              steps: [
                {
                  tool: "task",
                  input: { description: "list files", prompt: "run ls in the project", subagent_type: "explore" }
                }
              ]
            }
      return messages.includes("denied") || messages.includes("Denied")
        ? { steps: [{ text: "I could not run ls." }] }
        : index < 10
          ? { steps: [{ tool: "bash", input: { command: "ls", description: "list" } }] }
          : undefined
    })
    mkdirSync(join(dir, "config", "lathe"), { recursive: true })
    writeFileSync(
      join(dir, "config", "lathe", "lathe.json"),
      JSON.stringify({ agent: { build: { permission: { bash: "deny" } } } })
    )
    const run = await runLathe(["run", "--format", "json", "--yes", "look around"], { cwd: project, env })
    assert.strictEqual(run.code, 0, run.stderr)
    const bash = run.events.find((e) => e.type === "tool.error" && e.tool === "bash")
    assert.match(bash?.type === "tool.error" && bash.state.status === "error" ? bash.state.error : "", /denied/i)
    const child = run.events.find((e) => e.type === "session.created" && e.session.parentID !== undefined)
    assert.include(child?.type === "session.created" ? child.session.title : "", "(@explore subagent)")
  })

  it("lathe agents lists the built-in agents with their modes; @explore runs the subagent directly", async () => {
    const { project, env, server, dir } = await setup([{ steps: [{ text: "Found it." }] }])
    const list = await runLathe(["agents"], { cwd: project, env })
    assert.strictEqual(list.code, 0, list.stderr)
    for (const line of [/^build +primary/m, /^plan +primary/m, /^explore +subagent/m, /^general +subagent/m])
      assert.match(list.stdout, line)
    // A markdown agent shows the file it came from.
    mkdirSync(join(dir, "config", "lathe", "agents"), { recursive: true })
    writeFileSync(
      join(dir, "config", "lathe", "agents", "docs.md"),
      "---\ndescription: Writes docs\nmode: subagent\n---\nYou write docs."
    )
    const withFile = await runLathe(["agents"], { cwd: project, env })
    assert.match(withFile.stdout, /^docs +subagent +inherits +\/.*config\/lathe\/agents\/docs\.md\n +Writes docs/m)
    const run = await runLathe(["run", "--format", "json", "@explore where is x defined?"], { cwd: project, env })
    assert.strictEqual(run.code, 0, run.stderr)
    const started = run.events.find((e) => e.type === "message.updated" && e.message.role === "user")
    assert.strictEqual(started?.type === "message.updated" ? started.message.agent : "", "explore")
    assert.include(JSON.stringify(server.requests[0]?.body), "where is x defined?")
    assert.notInclude(JSON.stringify(server.requests[0]?.body), "@explore")
  })
})
