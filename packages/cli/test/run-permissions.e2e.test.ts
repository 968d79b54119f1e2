import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { afterEach, assert, describe, it } from "vitest"
import { runAtTerminal, runLathe, sandbox } from "./helpers.js"

// Permission asks in `lathe run`, with the real permission engine: no terminal, --yes, and deny rules.
let server: ScriptedServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

const setup = async (permission: unknown, command: string) => {
  server = await startScriptedServer([
    { steps: [{ tool: "bash", input: { command, description: "run it" } }] },
    { steps: [{ text: "finished" }] }
  ])
  const box = sandbox()
  writeFileSync(join(box.project, "a.txt"), "alpha\n")
  // Narrowing rules (ask, deny) apply even though the project is not trusted.
  writeFileSync(join(box.project, "lathe.json"), JSON.stringify({ permission }))
  return { ...box, env: { ...box.env, LATHE_BASE_URL: server.url, LATHE_MODEL: "m" }, server }
}

describe("lathe run: permission asks", () => {
  it("without a terminal an ask is rejected, the run says how to allow it, and exits 1", async () => {
    const { project, env } = await setup({ bash: "ask" }, "touch made-by-bash")
    const run = await runLathe(["run", "--format", "json", "make a file"], { cwd: project, env })
    assert.strictEqual(run.code, 1)
    assert.include(run.stderr, "Re-run with --yes")
    assert.isTrue(run.events.some((e) => e.type === "permission.asked"))
    const replied = run.events.find((e) => e.type === "permission.replied")
    assert.strictEqual(replied?.type === "permission.replied" ? replied.reply : "", "reject")
    assert.isFalse(existsSync(join(project, "made-by-bash")))
  })

  it("--yes allows the ask, and the audit trail records that --yes decided", async () => {
    const { project, env, dir } = await setup({ bash: "ask" }, "touch made-by-bash")
    const run = await runLathe(["run", "--format", "json", "--yes", "make a file"], { cwd: project, env })
    assert.strictEqual(run.code, 0, run.stderr)
    assert.isTrue(existsSync(join(project, "made-by-bash")))
    const audit = readFileSync(join(dir, "data", "permission", "audit.jsonl"), "utf8")
    assert.match(audit, /"permission":"bash".*"by":"yes"/)
  })

  it("a deny rule holds even with --yes", async () => {
    const { project, env } = await setup({ bash: { "*": "ask", "rm *": "deny" } }, "rm a.txt")
    const run = await runLathe(["run", "--format", "json", "--yes", "delete a"], { cwd: project, env })
    assert.strictEqual(run.code, 0, run.stderr)
    assert.isTrue(existsSync(join(project, "a.txt")))
    const failed = run.events.find((e) => e.type === "tool.error")
    assert.match(failed?.type === "tool.error" && failed.state.status === "error" ? failed.state.error : "", /denied/i)
    assert.isFalse(run.events.some((e) => e.type === "permission.asked"))
  })

  it("--yes does not approve a command Lathe cannot know while deny rules exist: rejected, and the model told why", async () => {
    const { project, env } = await setup({ bash: { "*": "ask", "rm *": "deny" } }, "x=rm; $x a.txt")
    const run = await runLathe(["run", "--format", "json", "--yes", "delete a"], { cwd: project, env })
    assert.strictEqual(run.code, 1, run.stderr)
    assert.isTrue(existsSync(join(project, "a.txt")))
    assert.include(run.stderr, "only a person may approve it (--yes does not)")
    const asked = run.events.find((e) => e.type === "permission.asked")
    assert.strictEqual(asked?.type === "permission.asked" ? asked.metadata.requiresPerson : undefined, true)
    const replied = run.events.find((e) => e.type === "permission.replied")
    assert.strictEqual(replied?.type === "permission.replied" ? replied.reply : "", "reject")
    assert.include(JSON.stringify(server?.requests[1]?.body), "only a person may approve it")
  })

  it("at a terminal the person answers: 'always' runs the command and remembers the prefix", async () => {
    const { project, env, dir } = await setup({ bash: "ask" }, "touch made-by-bash")
    const { code, output } = await runAtTerminal(["run", "make a file"], {
      cwd: project,
      env,
      prompt: "answer: [o]nce",
      answer: "a"
    })
    assert.strictEqual(code, 0, output)
    assert.include(output, "Permission needed: bash")
    assert.include(output, "always would allow from now on: touch *")
    assert.isTrue(existsSync(join(project, "made-by-bash")))
    const approvals = readdirSync(join(dir, "data", "permission")).filter((file) => file !== "audit.jsonl")
    assert.include(readFileSync(join(dir, "data", "permission", approvals[0] ?? "missing"), "utf8"), "touch *")
  })

  it("the question tool: allowed in the user's config, answered at the terminal, the answer reaches the model", async () => {
    server = await startScriptedServer([
      {
        steps: [
          {
            tool: "question",
            input: {
              questions: [{ question: "Which database?", options: [{ label: "SQLite" }, { label: "Postgres" }] }]
            }
          }
        ]
      },
      { steps: [{ text: "Postgres it is." }] }
    ])
    const box = sandbox()
    mkdirSync(join(box.dir, "config", "lathe"), { recursive: true })
    writeFileSync(join(box.dir, "config", "lathe", "lathe.json"), JSON.stringify({ permission: { question: "allow" } }))
    const env = { ...box.env, LATHE_BASE_URL: server.url, LATHE_MODEL: "m" }
    const { code, output } = await runAtTerminal(["run", "pick a database"], {
      cwd: box.project,
      env,
      prompt: "answer with a number",
      answer: "2"
    })
    assert.strictEqual(code, 0, output)
    assert.include(output, "2. Postgres")
    assert.include(JSON.stringify(server.requests[1]?.body), "Answer: Postgres")
  })

  it("the question tool without a terminal: dismissed, and the model is told to decide", async () => {
    server = await startScriptedServer([
      { steps: [{ tool: "question", input: { questions: [{ question: "Which database?" }] } }] },
      { steps: [{ text: "I chose SQLite." }] }
    ])
    const box = sandbox()
    mkdirSync(join(box.dir, "config", "lathe"), { recursive: true })
    writeFileSync(join(box.dir, "config", "lathe", "lathe.json"), JSON.stringify({ permission: { question: "allow" } }))
    const env = { ...box.env, LATHE_BASE_URL: server.url, LATHE_MODEL: "m" }
    const run = await runLathe(["run", "--format", "json", "pick"], { cwd: box.project, env })
    assert.strictEqual(run.code, 0, run.stderr)
    assert.include(JSON.stringify(server.requests[1]?.body), "There is no terminal to ask the user")
  })
})
