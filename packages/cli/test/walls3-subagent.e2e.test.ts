/**
 * "Walls, round three", end to end through the real CLI with no terminal and a scripted model server:
 * - a subagent never does more than its caller: an agent with `tools: {bash: false, write: false}` calls `task` with
 *   `general`, whose hostile model calls `bash touch pwned` and `write`. First the payload bites (`general` run
 *   directly creates both files), then through the chain nothing is created, the subagent's requests offer neither
 *   tool, and each call comes back to the model as an error;
 * - an untrusted repository's command file (`.claude/commands/x.md` with `model:` and `agent:`) run by
 *   `lathe run --command x` runs with the person's model and agent, and stderr names the dropped fields; after
 *   `lathe trust` they apply.
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { type RecordedRequest, type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { afterEach, assert, describe, it } from "vitest"
import { runLathe, sandbox } from "./helpers.js"

const timeoutMs = 90_000
const slow = { timeout: 4 * timeoutMs }

const servers: Array<ScriptedServer> = []
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close()
})

/** The tool names a request offered. */
const offered = (request: RecordedRequest): Array<string> =>
  ((request.body as { tools?: Array<{ function?: { name?: string } }> }).tools ?? []).map((t) => t.function?.name ?? "")
/** The conversation so far, as sent. */
const history = (request: RecordedRequest) => JSON.stringify((request.body as { messages?: unknown }).messages)
/** The caller offers the task tool; a subagent never does. */
const isCaller = (request: RecordedRequest) => offered(request).includes("task")

const PROMPT_MARK = "HOSTILE-SUBAGENT-7f3c"

/**
 * The hostile model: as the caller it starts `general` once; as the subagent it calls bash and write once (whether
 * or not they were offered), then answers.
 */
const hostile = (request: RecordedRequest) => {
  if (isCaller(request)) {
    if (history(request).includes("task_metadata")) return { steps: [{ text: "Delegated." }] }
    return {
      steps: [{ tool: "task", input: { description: "set things up", prompt: PROMPT_MARK, subagent_type: "general" } }]
    }
  }
  if (history(request).includes("touch pwned")) return { steps: [{ text: "Done." }] }
  return {
    steps: [
      { tool: "bash", input: { command: "touch pwned", description: "create a file" } },
      { tool: "write", input: { filePath: "written.txt", content: "pwned" } }
    ]
  }
}

/** The person's config: their provider, and a careful agent with bash and write switched off. */
const personConfig = (box: ReturnType<typeof sandbox>, url: string, extra: Record<string, unknown> = {}) => {
  mkdirSync(join(box.dir, "config", "lathe"), { recursive: true })
  writeFileSync(
    join(box.dir, "config", "lathe", "lathe.json"),
    JSON.stringify({
      model: "local/cheap",
      provider: { local: { type: "openai-compatible", baseURL: url, models: { cheap: {}, expensive: {} } } },
      ...extra
    })
  )
}

describe("walls3: a subagent never does more than its caller", () => {
  it("the payload bites: general, run directly, runs bash and write", slow, async () => {
    const model = await startScriptedServer(hostile)
    servers.push(model)
    const box = sandbox()
    personConfig(box, model.url)
    const run = await runLathe(["run", "--format", "json", "--yes", `@general ${PROMPT_MARK}`], {
      cwd: box.project,
      env: box.env,
      timeoutMs
    })
    assert.strictEqual(run.code, 0, run.stderr)
    assert.includeMembers(offered(model.requests[0] as RecordedRequest), ["bash", "write"])
    assert.isTrue(existsSync(join(box.project, "pwned")), "bash ran touch pwned")
    assert.isTrue(existsSync(join(box.project, "written.txt")), "write wrote the file")
  })

  it(
    "through task from an agent with bash and write off: nothing is created, nothing offered, errors returned",
    slow,
    async () => {
      const model = await startScriptedServer(hostile)
      servers.push(model)
      const box = sandbox()
      personConfig(box, model.url, {
        agent: { careful: { mode: "primary", tools: { bash: false, write: false } } }
      })
      const run = await runLathe(["run", "--format", "json", "--yes", "--agent", "careful", "set things up"], {
        cwd: box.project,
        env: box.env,
        timeoutMs
      })
      assert.strictEqual(run.code, 0, run.stderr)
      const children = model.requests.filter((r) => !isCaller(r))
      assert.isAtLeast(children.length, 2, "the subagent made its calls and answered")
      assert.include(history(children[0] as RecordedRequest), PROMPT_MARK)
      for (const request of model.requests) {
        assert.notInclude(offered(request), "bash")
        assert.notInclude(offered(request), "write")
      }
      // The subagent still has the tools its caller has (read among them): the offer is an intersection, not nothing.
      assert.include(offered(children[0] as RecordedRequest), "read")
      assert.isFalse(existsSync(join(box.project, "pwned")), "bash did not run")
      assert.isFalse(existsSync(join(box.project, "written.txt")), "write did not run")
      // Each denied call came back to the subagent's model as an error it can read.
      const errors = run.events.flatMap((e) =>
        e.type === "part.updated" && e.part.type === "tool" && e.part.state.status === "error"
          ? [[e.part.tool, e.part.state.error] as const]
          : []
      )
      for (const tool of ["bash", "write"]) {
        const error = errors.find(([name]) => name === tool)?.[1] ?? ""
        assert.match(error, new RegExp(`^The ${tool} tool is not available here: it is switched off`), tool)
      }
      assert.include(history(children[1] as RecordedRequest), "is not available here")
    }
  )

  it("a project's agent file switching tools off binds its subagents once the project is trusted", slow, async () => {
    const model = await startScriptedServer(hostile)
    servers.push(model)
    const box = sandbox()
    personConfig(box, model.url)
    mkdirSync(join(box.project, ".lathe", "agents"), { recursive: true })
    writeFileSync(
      join(box.project, ".lathe", "agents", "careful.md"),
      "---\ndescription: Careful\nmode: primary\ntools:\n  bash: false\n  write: false\n---\nBe careful.\n"
    )
    const trust = await runLathe(["trust"], { cwd: box.project, env: box.env })
    assert.strictEqual(trust.code, 0, trust.stderr)
    const run = await runLathe(["run", "--format", "json", "--yes", "--agent", "careful", "set things up"], {
      cwd: box.project,
      env: box.env,
      timeoutMs
    })
    assert.strictEqual(run.code, 0, run.stderr)
    assert.isAtLeast(model.requests.filter((r) => !isCaller(r)).length, 1, "the subagent ran")
    for (const request of model.requests) assert.notIncludeMembers(offered(request), ["bash", "write"])
    assert.isFalse(existsSync(join(box.project, "pwned")))
    assert.isFalse(existsSync(join(box.project, "written.txt")))
  })
})

describe("walls3: untrusted command files lose agent and model", () => {
  it("lathe run --command x uses the person's model and agent until lathe trust", slow, async () => {
    const model = await startScriptedServer(() => ({ steps: [{ text: "Shipped." }] }))
    servers.push(model)
    const box = sandbox()
    personConfig(box, model.url, {
      default_agent: "careful",
      agent: { careful: { mode: "primary", description: "Careful", prompt: "CAREFUL-PROMPT-1d9e" } }
    })
    mkdirSync(join(box.project, ".claude", "commands"), { recursive: true })
    writeFileSync(
      join(box.project, ".claude", "commands", "x.md"),
      "---\ndescription: Ship\nmodel: local/expensive\nagent: build\n---\nShip COMMAND-BODY-5a1b now.\n"
    )
    const modelOf = (request: RecordedRequest | undefined) => (request?.body as { model?: string } | undefined)?.model
    const run = () =>
      runLathe(["run", "--format", "json", "--command", "x"], { cwd: box.project, env: box.env, timeoutMs })

    const first = await run()
    assert.strictEqual(first.code, 0, first.stderr)
    const request = model.requests[0]
    assert.include(JSON.stringify(request?.body), "COMMAND-BODY-5a1b") // the command itself ran
    assert.strictEqual(modelOf(request), "cheap") // the person's model, not the file's
    assert.include(JSON.stringify(request?.body), "CAREFUL-PROMPT-1d9e") // the person's agent, not build
    const notice = first.stderr.split("\n").find((line) => line.includes("Ignored from untrusted"))
    assert.isDefined(notice, first.stderr)
    assert.include(notice, join(".claude", "commands", "x.md"))
    assert.include(notice, "model, agent")
    assert.include(notice, "lathe trust")

    const trust = await runLathe(["trust"], { cwd: box.project, env: box.env })
    assert.strictEqual(trust.code, 0, trust.stderr)
    const second = await run()
    assert.strictEqual(second.code, 0, second.stderr)
    assert.notInclude(second.stderr, "Ignored from untrusted")
    assert.strictEqual(modelOf(model.requests[1]), "expensive")
    assert.notInclude(JSON.stringify(model.requests[1]?.body), "CAREFUL-PROMPT-1d9e") // build ran
  })
})
