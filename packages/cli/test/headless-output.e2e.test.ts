/**
 * The headless contract of `lathe run`, through the real CLI and a scripted OpenAI-compatible server: every
 * `--format stream-json` line validates against the contract's schema (packages/cli/schema/stream-json.schema.json)
 * for a run with a tool call, a failed run and a subagent; `--input-format stream-json` holds two turns in one session;
 * `--format json` ends with its `run.result` line; `-o` writes the final text; the exit codes are the documented ones.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { type RecordedRequest, type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { afterEach, assert, describe, it } from "vitest"
import { z } from "zod"
import { type CliRun, runLathe, sandbox } from "./helpers.js"

const timeoutMs = 90_000
const slow = { timeout: 2 * timeoutMs }

const contract = z.fromJSONSchema(
  JSON.parse(readFileSync(new URL("../schema/stream-json.schema.json", import.meta.url), "utf8"))
)

let server: ScriptedServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

const setup = async (script: Parameters<typeof startScriptedServer>[0]) => {
  server = await startScriptedServer(script)
  const box = sandbox()
  writeFileSync(join(box.project, "a.txt"), "alpha\n")
  const env = { ...box.env, LATHE_BASE_URL: server.url, LATHE_MODEL: "test-model" }
  return { ...box, env, server }
}

type Line = Record<string, unknown> & { readonly type: string }

/** stdout as stream-json lines, each checked against the contract (every line must be one JSON object). */
const streamLines = (run: CliRun): Array<Line> =>
  run.stdout
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => {
      const value = JSON.parse(line) as Line
      const checked = contract.safeParse(value)
      assert.isTrue(checked.success, `not a contract line: ${line}\n${checked.error?.message ?? ""}`)
      return value
    })

const blocks = (lines: ReadonlyArray<Line>, type: string) =>
  lines.flatMap((line) =>
    line.type === "assistant" || line.type === "user"
      ? ((line.message as { content: Array<Record<string, unknown>> }).content.filter((b) => b.type === type) ?? [])
      : []
  )

const history = (request: RecordedRequest | undefined) =>
  JSON.stringify((request?.body as { messages?: unknown } | undefined)?.messages)

describe("lathe run --format stream-json", () => {
  it("a run with a tool call: init, tool_use, tool_result, text, result; -o gets the final text", slow, async () => {
    const { project, env, server } = await setup([
      { steps: [{ reasoning: "Look at a." }, { text: "Reading a." }, { tool: "read", input: { filePath: "a.txt" } }] },
      { steps: [{ text: "a says alpha." }], usage: { input: 100, output: 7, cached: 40 } }
    ])
    const run = await runLathe(["run", "--format", "stream-json", "-o", "last.txt", "--yes", "what does a say?"], {
      cwd: project,
      env,
      timeoutMs
    })
    assert.strictEqual(run.code, 0, run.stderr)
    const lines = streamLines(run)
    assert.deepStrictEqual(lines.at(0)?.type, "system")
    const init = lines[0] as Line
    assert.strictEqual(init.subtype, "init")
    assert.match(String(init.model), /^[\w-]+\/test-model$/)
    assert.include(init.tools as Array<string>, "read")
    assert.strictEqual(init.permissionMode, "bypassPermissions")
    const session = init.session_id as string
    assert.isTrue(lines.every((line) => line.session_id === session))

    const [use] = blocks(lines, "tool_use")
    assert.deepStrictEqual({ name: use?.name, input: use?.input }, { name: "read", input: { filePath: "a.txt" } })
    const [result] = blocks(lines, "tool_result")
    assert.strictEqual(result?.tool_use_id, use?.id)
    assert.strictEqual(result?.is_error, false)
    assert.include(String(result?.content), "alpha")
    assert.deepStrictEqual(
      blocks(lines, "text").map((b) => b.text),
      ["Reading a.", "a says alpha."]
    )
    assert.deepStrictEqual(
      blocks(lines, "thinking").map((b) => b.thinking),
      ["Look at a."]
    )
    // The tool's result line comes after its call, and the final text after both.
    const at = (predicate: (line: Line) => boolean) => lines.findIndex(predicate)
    assert.isBelow(
      at((l) => JSON.stringify(l).includes('"tool_use"')),
      at((l) => l.type === "user")
    )

    const end = lines.at(-1) as Line
    assert.strictEqual(end.type, "result")
    assert.strictEqual(end.subtype, "success")
    assert.strictEqual(end.is_error, false)
    assert.strictEqual(end.result, "a says alpha.")
    assert.strictEqual(end.num_turns, 2)
    assert.strictEqual(end.exit_code, 0)
    assert.deepStrictEqual(end.usage, {
      input_tokens: 10 + 60,
      output_tokens: 5 + 7,
      cache_read_input_tokens: 40,
      cache_creation_input_tokens: 0
    })
    assert.strictEqual(server.requests.length, 2)
    assert.strictEqual(readFileSync(join(project, "last.txt"), "utf8"), "a says alpha.")
  })

  it("a failed run (the provider refuses): the result line says error_during_execution, exit 1", slow, async () => {
    const { project, env } = await setup([
      { type: "error", status: 400, body: { error: { message: "bad request here", type: "invalid_request_error" } } }
    ])
    const run = await runLathe(["run", "--format", "stream-json", "-o", "last.txt", "hi"], {
      cwd: project,
      env,
      timeoutMs
    })
    assert.strictEqual(run.code, 1, run.stderr)
    const lines = streamLines(run)
    assert.strictEqual(lines[0]?.type, "system")
    const end = lines.at(-1) as Line
    assert.strictEqual(end.type, "result")
    assert.strictEqual(end.subtype, "error_during_execution")
    assert.strictEqual(end.is_error, true)
    assert.strictEqual(end.exit_code, 1)
    assert.strictEqual((end.error as { name: string }).name, "ProviderError")
    assert.include((end.errors as Array<string>)[0], "bad request here")
    // The turn ran (its prompt is stored): -o holds its final text, none here.
    assert.strictEqual(readFileSync(join(project, "last.txt"), "utf8"), "")
  })

  it("a turn stopped by max_steps: error_max_turns, with the last words as the result, exit 1", slow, async () => {
    const { dir, project, env } = await setup([
      { steps: [{ tool: "read", input: { filePath: "a.txt" } }] },
      { steps: [{ text: "Out of steps: a says alpha." }] }
    ])
    mkdirSync(join(dir, "config", "lathe"), { recursive: true })
    writeFileSync(join(dir, "config", "lathe", "lathe.json"), JSON.stringify({ max_steps: 2 }))
    const run = await runLathe(["run", "--format", "stream-json", "read a"], { cwd: project, env, timeoutMs })
    assert.strictEqual(run.code, 1, run.stderr)
    const end = streamLines(run).at(-1) as Line
    assert.strictEqual(end.subtype, "error_max_turns")
    assert.strictEqual(end.num_turns, 2)
    assert.strictEqual(end.result, "Out of steps: a says alpha.")
    assert.strictEqual((end.error as { name: string }).name, "StepLimit")
  })

  it("an ask no one can answer (no terminal, no --yes) is a permission denial, exit 1", slow, async () => {
    const { project, env } = await setup([
      { steps: [{ tool: "bash", input: { command: "touch made.txt", description: "make a file" } }] },
      { steps: [{ text: "Could not." }] }
    ])
    // Narrowing rules apply in an untrusted project: bash asks here.
    writeFileSync(join(project, "lathe.json"), JSON.stringify({ permission: { bash: "ask" } }))
    const run = await runLathe(["run", "--format", "stream-json", "make a file"], { cwd: project, env, timeoutMs })
    assert.strictEqual(run.code, 1, run.stderr)
    const lines = streamLines(run)
    const [use] = blocks(lines, "tool_use")
    const end = lines.at(-1) as Line
    assert.strictEqual(end.subtype, "error_during_execution")
    assert.deepStrictEqual(end.permission_denials, [
      { tool_name: "bash", tool_use_id: use?.id, tool_input: { command: "touch made.txt", description: "make a file" } }
    ])
    assert.strictEqual((end.error as { name: string }).name, "PermissionRejected")
    assert.isFalse(existsSync(join(project, "made.txt")))
  })

  it(
    "a run that fails before its turn (an unknown model) still ends with a result line; no -o file",
    slow,
    async () => {
      const { project, env } = await setup([{ steps: [{ text: "never" }] }])
      const run = await runLathe(["run", "--format", "stream-json", "-o", "last.txt", "-m", "nowhere/none", "hi"], {
        cwd: project,
        env,
        timeoutMs
      })
      assert.strictEqual(run.code, 1, run.stderr)
      const lines = streamLines(run)
      assert.deepStrictEqual(
        lines.map((l) => l.type),
        ["system", "result"]
      )
      assert.strictEqual(lines[1]?.subtype, "error_during_execution")
      // The session the run made was removed again (nothing was stored in it): the lines name none.
      assert.deepStrictEqual(
        lines.map((l) => l.session_id),
        ["", ""]
      )
      assert.isFalse(existsSync(join(project, "last.txt")))
    }
  )

  it("a subagent's lines carry the task call's id as parent_tool_use_id", slow, async () => {
    const isCaller = (request: RecordedRequest) => JSON.stringify(request.body).includes('"name":"task"')
    const { project, env } = await setup((request) => {
      if (!isCaller(request))
        return history(request).includes('"role":"tool"')
          ? { steps: [{ text: "The parser is in app.ts." }] }
          : { steps: [{ tool: "read", input: { filePath: "a.txt" } }] }
      if (history(request).includes("task_metadata")) return { steps: [{ text: "Explored." }] }
      return {
        steps: [
          { tool: "task", input: { description: "find it", prompt: "find the parser", subagent_type: "explore" } }
        ]
      }
    })
    const run = await runLathe(["run", "--format", "stream-json", "--yes", "where is the parser?"], {
      cwd: project,
      env,
      timeoutMs
    })
    assert.strictEqual(run.code, 0, run.stderr)
    const lines = streamLines(run)
    const task = blocks(lines, "tool_use").find((b) => b.name === "task")
    assert.isDefined(task)
    const child = lines.filter((l) => l.parent_tool_use_id === task?.id)
    assert.includeMembers(
      child.map((l) => l.type),
      ["assistant", "user"],
      "the subagent's read call and its result"
    )
    assert.include(JSON.stringify(child), "The parser is in app.ts.")
    const own = lines.filter((l) => (l.type === "assistant" || l.type === "user") && l.parent_tool_use_id === null)
    assert.include(JSON.stringify(own), "Explored.")
    const end = lines.at(-1) as Line
    assert.strictEqual(end.result, "Explored.")
    // The subagent's steps count toward the cost and tokens, not toward num_turns (the caller's own steps).
    assert.strictEqual(end.num_turns, 2)
    assert.strictEqual((end.usage as { output_tokens: number }).output_tokens, 5 * 4)
  })
})

describe("lathe run --format stream-json and secrets", () => {
  it("a key the model reads and a provider echoes is masked in every line and in -o's file", slow, async () => {
    const key = "sk-headless-7f3a9c2e5b1d4f6a8c0e2b4d"
    server = await startScriptedServer((request) =>
      history(request).includes('"role":"tool"')
        ? { steps: [{ text: `The notes say: ${JSON.stringify(request.headers.authorization)}` }] }
        : { steps: [{ tool: "read", input: { filePath: "notes.txt" } }] }
    )
    const box = sandbox()
    mkdirSync(join(box.dir, "config", "lathe"), { recursive: true })
    writeFileSync(
      join(box.dir, "config", "lathe", "lathe.json"),
      JSON.stringify({
        model: "local/m",
        provider: { local: { type: "openai-compatible", baseURL: server.url, apiKey: key, models: { m: {} } } }
      })
    )
    writeFileSync(join(box.project, "notes.txt"), `deploy with ${key}\n`)
    const run = await runLathe(["run", "--format", "stream-json", "-o", "last.txt", "read notes.txt"], {
      cwd: box.project,
      env: box.env,
      timeoutMs
    })
    assert.strictEqual(run.code, 0, run.stderr)
    const lines = streamLines(run)
    assert.include(String(blocks(lines, "tool_result")[0]?.content), "deploy with sk-…")
    assert.include(String((lines.at(-1) as Line).result), "The notes say:")
    const file = readFileSync(join(box.project, "last.txt"), "utf8")
    for (const [where, text] of [
      ["stdout", run.stdout],
      ["stderr", run.stderr],
      ["-o", file]
    ] as const)
      assert.notInclude(text, key, where)
  })
})

describe("lathe run --format stream-json interrupted", () => {
  it("Ctrl-C during a tool: the call's error result, then the result line with exit_code 130", slow, async () => {
    const { project, env, server } = await setup([
      { steps: [{ tool: "bash", input: { command: "sleep 20", description: "wait" } }] },
      { steps: [{ text: "never reached" }] }
    ])
    const run = await runLathe(["run", "--format", "stream-json", "--yes", "wait a while"], {
      cwd: project,
      env,
      timeoutMs,
      onSpawn: (child) => {
        const poll = setInterval(() => {
          if (server.requests.length > 0) {
            clearInterval(poll)
            setTimeout(() => child.kill("SIGINT"), 700)
          }
        }, 20)
      }
    })
    assert.strictEqual(run.code, 130, run.stderr)
    const lines = streamLines(run)
    const [result] = blocks(lines, "tool_result")
    assert.deepStrictEqual(
      { content: result?.content, is_error: result?.is_error },
      { content: "aborted", is_error: true }
    )
    const end = lines.at(-1) as Line
    assert.deepStrictEqual(
      { subtype: end.subtype, exit_code: end.exit_code, error: (end.error as { name: string }).name },
      { subtype: "error_during_execution", exit_code: 130, error: "Aborted" }
    )
  })
})

describe("lathe run --format stream-json under a cost budget", () => {
  it("a subagent that would overspend: error_max_budget_usd with the spent cost, exit 3", slow, async () => {
    // $100 per million tokens both ways: each reply of 5,000 input and 20 output tokens costs $0.502.
    const usage = { input: 5_000, output: 20 }
    const isCaller = (request: RecordedRequest) => JSON.stringify(request.body).includes('"name":"task"')
    let reads = 0
    server = await startScriptedServer((request) =>
      isCaller(request)
        ? {
            steps: [{ tool: "task", input: { description: "read", prompt: "read all", subagent_type: "explore" } }],
            usage
          }
        : { steps: [{ tool: "read", input: { filePath: "a.txt", offset: ++reads } }], usage }
    )
    const box = sandbox()
    writeFileSync(join(box.project, "a.txt"), "alpha\n")
    mkdirSync(join(box.dir, "config", "lathe"), { recursive: true })
    const alpha = { output: 50, cost: { input: 100, output: 100 } }
    writeFileSync(
      join(box.dir, "config", "lathe", "lathe.json"),
      JSON.stringify({
        model: "local/alpha",
        provider: { local: { type: "openai-compatible", baseURL: server.url, models: { alpha } } }
      })
    )
    const run = await runLathe(["run", "--format", "stream-json", "--yes", "--max-cost", "1.2", "read it all"], {
      cwd: box.project,
      env: box.env,
      timeoutMs
    })
    assert.strictEqual(run.code, 3, run.stderr)
    const end = streamLines(run).at(-1) as Line
    assert.strictEqual(end.subtype, "error_max_budget_usd")
    assert.strictEqual(end.is_error, true)
    assert.strictEqual(end.exit_code, 3)
    assert.strictEqual((end.error as { name: string }).name, "BudgetExhausted")
    // The caller's call and the subagent's: within the budget plus one call's cost.
    assert.isAbove(end.total_cost_usd as number, 0.5)
    assert.isAtMost(end.total_cost_usd as number, 1.2 + 0.503)
  })
})

describe("lathe run --input-format stream-json", () => {
  it("two user lines are two turns of one session; the second request carries the first turn", slow, async () => {
    const { project, env, server } = await setup([
      { steps: [{ text: "First answer." }] },
      { steps: [{ text: "Second answer." }] }
    ])
    const input = [
      JSON.stringify({ type: "user", message: { role: "user", content: "first question" } }),
      JSON.stringify({ type: "user", message: { role: "user", content: [{ type: "text", text: "second question" }] } })
    ].join("\n")
    const run = await runLathe(["run", "--input-format", "stream-json", "--format", "stream-json"], {
      cwd: project,
      env,
      timeoutMs,
      input: `${input}\n`
    })
    assert.strictEqual(run.code, 0, run.stderr)
    const lines = streamLines(run)
    const results = lines.filter((l) => l.type === "result")
    assert.deepStrictEqual(
      results.map((l) => l.result),
      ["First answer.", "Second answer."]
    )
    assert.strictEqual(results[0]?.session_id, results[1]?.session_id)
    assert.strictEqual(lines.filter((l) => l.type === "system").length, 2)
    assert.strictEqual(server.requests.length, 2)
    const second = history(server.requests[1])
    assert.include(second, "first question")
    assert.include(second, "First answer.")
    assert.include(second, "second question")
  })

  it("a line that is not a user message is a usage error (exit 2), after the turns before it", slow, async () => {
    const { project, env } = await setup([{ steps: [{ text: "Fine." }] }])
    const input = `${JSON.stringify({ type: "user", message: { role: "user", content: "hello" } })}\nnot json\n`
    const run = await runLathe(["run", "--input-format", "stream-json", "--format", "stream-json"], {
      cwd: project,
      env,
      timeoutMs,
      input
    })
    assert.strictEqual(run.code, 2, run.stderr)
    assert.include(run.stderr, "stdin line 2 is not JSON")
    assert.deepStrictEqual(
      streamLines(run)
        .filter((l) => l.type === "result")
        .map((l) => l.subtype),
      ["success"]
    )
    const refused = await runLathe(["run", "--input-format", "stream-json", "hello"], { cwd: project, env, timeoutMs })
    assert.strictEqual(refused.code, 2)
    assert.include(refused.stderr, "give no message")
  })
})

describe("lathe run --format json and exit codes", () => {
  it("json ends with one run.result line carrying the result's facts; a bad --format is exit 2", slow, async () => {
    const { project, env } = await setup([{ steps: [{ text: "Done here." }], usage: { input: 30, output: 4 } }])
    const run = await runLathe(["run", "--format", "json", "-o", "out/last.txt", "say done"], {
      cwd: project,
      env,
      timeoutMs
    })
    // -o into a folder that does not exist: the run says so and fails (exit 1), and its closing line says why.
    assert.strictEqual(run.code, 1, run.stderr)
    assert.include(run.stderr, "could not write the last message to out/last.txt")
    const last = JSON.parse(run.stdout.trim().split("\n").at(-1) ?? "{}") as Record<string, unknown>
    assert.strictEqual(last.type, "run.result")
    assert.strictEqual(last.subtype, "error_during_execution")
    assert.strictEqual(last.result, "Done here.")
    assert.strictEqual(last.steps, 1)
    assert.strictEqual(last.isError, true)
    assert.strictEqual(last.exitCode, 1)
    assert.strictEqual((last.error as { name: string }).name, "OutputFileError")
    assert.deepStrictEqual((last.tokens as { input: number }).input, 30)
    const session = run.events.find((e) => e.type === "session.created")
    assert.strictEqual(last.sessionID, session?.type === "session.created" ? session.session.id : "")
    assert.strictEqual(run.stdout.split("\n").filter((l) => l.includes('"run.result"')).length, 1)

    const bad = await runLathe(["run", "--format", "yaml", "hi"], { cwd: project, env, timeoutMs })
    assert.strictEqual(bad.code, 2)
    assert.strictEqual(bad.stdout, "")
  })
})
