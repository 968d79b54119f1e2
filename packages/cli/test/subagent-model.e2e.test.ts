/**
 * Subagents on the user's model, through the real CLI and a scripted OpenAI-compatible server that records the
 * model of every request: a subagent with no model of its own runs on the model of the turn that called it (`-m`,
 * or the caller agent's), in `task` calls and in `@agent` mentions; a mention runs the subagent for that prompt only,
 * so `-c` goes on with the primary agent; a session whose stored agent can no longer take a prompt falls back to the
 * default agent with a notice.
 */
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { type RecordedRequest, type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import type { LatheEvent } from "@lathe/plugin/schema"
import { afterEach, assert, describe, it } from "vitest"
import { runLathe, sandbox } from "./helpers.js"

// Several real CLI runs per test, on a machine shared with other test runs.
const timeoutMs = 90_000
const slow = { timeout: 4 * timeoutMs }

let server: ScriptedServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

const body = (request: RecordedRequest) => JSON.stringify(request.body)
/** The conversation so far (the tool descriptions mention <task_metadata> too). */
const history = (request: RecordedRequest) => JSON.stringify((request.body as { messages?: unknown }).messages)
/** The model id a request asked for (the server side of the wire). */
const modelOf = (request: RecordedRequest) => (request.body as { model?: string }).model
/** The caller offers the task tool; a subagent never does (no recursion). */
const isCaller = (request: RecordedRequest) => body(request).includes('"name":"task"')

/** The caller starts one explore task, then ends once its result is back; the subagent answers at once. */
const taskScript = (request: RecordedRequest) => {
  if (!isCaller(request)) return { steps: [{ text: "The parser is in src/app.ts." }] }
  if (history(request).includes("task_metadata")) return { steps: [{ text: "Explored." }] }
  return {
    steps: [
      { tool: "task", input: { description: "find the parser", prompt: "find the parser", subagent_type: "explore" } }
    ]
  }
}

/** A project with the user's provider `local` (models alpha, beta, gamma) in the global config. */
const setup = async (script: Parameters<typeof startScriptedServer>[0], extra: Record<string, unknown> = {}) => {
  server = await startScriptedServer(script)
  const box = sandbox()
  mkdirSync(join(box.dir, "config", "lathe"), { recursive: true })
  writeFileSync(
    join(box.dir, "config", "lathe", "lathe.json"),
    JSON.stringify({
      model: "local/alpha",
      provider: {
        local: { type: "openai-compatible", baseURL: server.url, models: { alpha: {}, beta: {}, gamma: {} } }
      },
      ...extra
    })
  )
  writeFileSync(join(box.project, "app.ts"), "export const parse = () => 1\n")
  return { ...box, server }
}

describe("subagents on the user's model", () => {
  it(
    "-m reaches every request of a task subagent, checked on the server; lathe agents says it inherits",
    slow,
    async () => {
      const { project, env, server } = await setup(taskScript)
      const run = await runLathe(["run", "--format", "json", "--yes", "-m", "local/beta", "where is the parser?"], {
        cwd: project,
        env,
        timeoutMs
      })
      assert.strictEqual(run.code, 0, run.stderr)
      const child = run.events.find((e) => e.type === "session.created" && e.session.parentID !== undefined)
      assert.include(child?.type === "session.created" ? child.session.title : "", "(@explore subagent)")
      const children = server.requests.filter((r) => !isCaller(r))
      assert.isAtLeast(children.length, 1, "the subagent made requests")
      // Regression: every request of the subagent went to the configured default (alpha), not to -m.
      assert.deepStrictEqual([...new Set(server.requests.map(modelOf))], ["beta"])

      const json = JSON.parse(
        (await runLathe(["agents", "--json"], { cwd: project, env, timeoutMs })).stdout
      ) as Array<{
        name: string
        model: string
      }>
      assert.strictEqual(json.find((a) => a.name === "explore")?.model, "inherits")
    }
  )

  it(
    "without -m a task subagent inherits the caller agent's model; lathe agents shows each model or inherits",
    slow,
    async () => {
      const { project, env, server } = await setup(taskScript, {
        agent: { build: { model: "local/gamma" }, general: { model: "local/beta" } }
      })
      const run = await runLathe(["run", "--format", "json", "--yes", "where is the parser?"], {
        cwd: project,
        env,
        timeoutMs
      })
      assert.strictEqual(run.code, 0, run.stderr)
      assert.deepStrictEqual([...new Set(server.requests.map(modelOf))], ["gamma"])
      const list = await runLathe(["agents"], { cwd: project, env, timeoutMs })
      assert.strictEqual(list.code, 0, list.stderr)
      assert.match(list.stdout, /^explore +subagent +inherits +@lathe\/agents$/m)
      assert.match(list.stdout, /^general +subagent +local\/beta +@lathe\/agents$/m)
      assert.match(list.stdout, /^build +primary +local\/gamma +@lathe\/agents$/m)
    }
  )

  it(
    '"@explore …" runs explore for that prompt only, on the caller\'s model; -c then goes on with build',
    slow,
    async () => {
      const { project, env, server } = await setup(() => ({ steps: [{ text: "Answered." }] }), {
        agent: { build: { model: "local/gamma" } }
      })
      const mention = await runLathe(["run", "--format", "json", "@explore where is parse defined?"], {
        cwd: project,
        env,
        timeoutMs
      })
      assert.strictEqual(mention.code, 0, mention.stderr)
      const user = (events: ReadonlyArray<LatheEvent>) =>
        events.find((e) => e.type === "message.updated" && e.message.role === "user")
      const first = user(mention.events)
      assert.strictEqual(first?.type === "message.updated" ? first.message.agent : "", "explore")
      assert.strictEqual(modelOf(server.requests[0] as RecordedRequest), "gamma", "the mention ran on build's model")
      const updated = mention.events.findLast((e) => e.type === "session.updated")
      assert.notStrictEqual(updated?.type === "session.updated" ? updated.session.agent : "", "explore")

      // Regression: the mention stored explore as the session's agent and this failed with
      // `No agent "explore" can take a prompt`.
      const next = await runLathe(["run", "--format", "json", "-c", "now explain it"], { cwd: project, env, timeoutMs })
      assert.strictEqual(next.code, 0, next.stderr)
      const second = user(next.events)
      assert.strictEqual(second?.type === "message.updated" ? second.message.agent : "", "build")
      assert.strictEqual(
        second?.type === "message.updated" ? second.message.sessionID : "",
        first?.type === "message.updated" ? first.message.sessionID : "x"
      )
      assert.isFalse(next.events.some((e) => e.type === "notice"))
    }
  )

  it("a session whose agent became a subagent falls back to the default agent with a notice", slow, async () => {
    const { project, env, dir } = await setup(() => ({ steps: [{ text: "Answered." }] }))
    const agents = join(dir, "config", "lathe", "agents")
    mkdirSync(agents, { recursive: true })
    writeFileSync(join(agents, "helper.md"), "---\ndescription: Helps\nmode: all\n---\nYou help.\n")
    const first = await runLathe(["run", "--agent", "helper", "hello"], { cwd: project, env, timeoutMs })
    assert.strictEqual(first.code, 0, first.stderr)
    writeFileSync(join(agents, "helper.md"), "---\ndescription: Helps\nmode: subagent\n---\nYou help.\n")
    const next = await runLathe(["run", "-c", "again"], { cwd: project, env, timeoutMs })
    assert.strictEqual(next.code, 0, next.stderr)
    assert.match(next.stderr, /agent "helper" cannot take a prompt \(it is a subagent\); the "build" agent answers/)
  })
})
