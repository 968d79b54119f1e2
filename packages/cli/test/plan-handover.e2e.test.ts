import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { afterEach, assert, describe, it } from "vitest"
import { runAtTerminal, runLathe, sandbox } from "./helpers.js"

// plan_exit, end to end: the real CLI at a pseudo-terminal (or without one), the real permission engine and agents;
// only the model is scripted. What the model's next request looks like is the proof of who runs the turn.
let server: ScriptedServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

const PLAN = "# Retry\n1. add a retry loop to fetchAll\n2. test it\n"

const setup = async (userConfig?: unknown) => {
  server = await startScriptedServer([
    { steps: [{ tool: "plan_exit", input: { path: ".lathe/plans/retry.md" } }] },
    { steps: [{ text: "on it" }] }
  ])
  const box = sandbox()
  mkdirSync(join(box.project, ".lathe", "plans"), { recursive: true })
  writeFileSync(join(box.project, ".lathe", "plans", "retry.md"), PLAN)
  if (userConfig !== undefined) {
    mkdirSync(join(box.dir, "config", "lathe"), { recursive: true })
    writeFileSync(join(box.dir, "config", "lathe", "lathe.json"), JSON.stringify(userConfig))
  }
  return { ...box, env: { ...box.env, LATHE_BASE_URL: server.url, LATHE_MODEL: "m" } }
}

interface ChatBody {
  readonly messages: ReadonlyArray<{ readonly role: string; readonly content: unknown }>
  readonly tools?: ReadonlyArray<{ readonly function: { readonly name: string } }>
}

/** The agent a request was made for, told by its system prompt and its tools. */
const whoAsked = (index: number) => {
  const body = server?.requests[index]?.body as ChatBody
  const system = body.messages
    .filter((m) => m.role === "system")
    .map((m) => JSON.stringify(m.content))
    .join("\n")
  const tools = (body.tools ?? []).map((t) => t.function.name)
  return {
    agent: system.includes("You are the build agent")
      ? "build"
      : system.includes("You are the plan agent")
        ? "plan"
        : "?",
    tools,
    text: JSON.stringify(body.messages)
  }
}

describe.runIf(process.platform !== "win32")("plan_exit: plan hands over to build with the person's approval", () => {
  it("approved at the terminal: the next request of the same turn is build's, with the plan", async () => {
    const { project, env } = await setup()
    const { code, output } = await runAtTerminal(["run", "--agent", "plan", "plan a retry"], {
      cwd: project,
      env,
      prompt: "answer: [o]nce",
      answer: "o"
    })
    assert.strictEqual(code, 0, output)
    // The person saw what they approve: the permission, that only they may, and the plan itself.
    assert.include(output, "Permission needed: plan_exit")
    assert.include(output, "only a person may approve this")
    assert.include(output, "add a retry loop to fetchAll")
    assert.strictEqual(server?.requests.length, 2)
    assert.strictEqual(whoAsked(0).agent, "plan")
    assert.include(whoAsked(0).tools, "plan_exit")
    const next = whoAsked(1)
    assert.strictEqual(next.agent, "build")
    assert.include(next.tools, "plan_enter")
    assert.notInclude(next.tools, "plan_exit")
    assert.include(next.text, "you are the build agent")
    assert.include(next.text, "1. add a retry loop to fetchAll")
    // The session keeps build: its next prompt runs with it (`session show` prints the session's agent).
    const shown = await runLathe(["session", "show", "--last", "--json"], { cwd: project, env })
    assert.strictEqual(shown.code, 0, shown.stderr)
    const doc = JSON.parse(shown.stdout) as { session: { agent?: string } }
    assert.strictEqual(doc.session.agent, "build")
  }, 60_000)

  it("rejected at the terminal with a reason: the next request is still plan's, with the reason", async () => {
    const { project, env } = await setup()
    const { code, output } = await runAtTerminal(["run", "--agent", "plan", "plan a retry"], {
      cwd: project,
      env,
      prompt: "answer: [o]nce",
      answer: "add tests first"
    })
    assert.strictEqual(code, 0, output)
    const next = whoAsked(1)
    assert.strictEqual(next.agent, "plan")
    assert.include(next.tools, "plan_exit")
    assert.include(next.text, "The switch to build was not approved: add tests first")
  }, 60_000)

  it("lathe run --yes without a terminal: refused (only a person may approve it), and plan goes on", async () => {
    const { project, env } = await setup()
    const run = await runLathe(["run", "--format", "json", "--agent", "plan", "--yes", "plan a retry"], {
      cwd: project,
      env,
      timeoutMs: 60_000
    })
    // As for every ask no one could answer: exit 1, and stderr says which and why.
    assert.strictEqual(run.code, 1, run.stderr)
    assert.include(run.stderr, "rejected a plan_exit ask (build): only a person may approve it (--yes does not)")
    const next = whoAsked(1)
    assert.strictEqual(next.agent, "plan")
    assert.include(next.text, "Only a person may approve this plan_exit request")
    assert.include(next.text, '\\"plan_exit\\"')
    const switched = run.events.some((e) => e.type === "session.updated" && e.session.agent === "build")
    assert.isFalse(switched)
  }, 60_000)

  it("without a terminal, a rule in the person's config naming plan_exit approves it: build goes on", async () => {
    const { project, env } = await setup({ permission: { plan_exit: "allow" } })
    const run = await runLathe(["run", "--format", "json", "--agent", "plan", "plan a retry"], {
      cwd: project,
      env,
      timeoutMs: 60_000
    })
    assert.strictEqual(run.code, 0, run.stderr)
    assert.isFalse(run.events.some((e) => e.type === "permission.asked"))
    assert.strictEqual(whoAsked(1).agent, "build")
    assert.isTrue(run.events.some((e) => e.type === "session.updated" && e.session.agent === "build"))
  }, 60_000)
})
