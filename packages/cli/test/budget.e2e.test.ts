/**
 * Hard cost budgets and structured answers through the real CLI, against a scripted OpenAI-compatible server that
 * reports usage: `--max-cost` with a subagent that would overspend sends each request with the output limit the
 * budget pays for and stops the turn within the cap (exit 3), the session stays resumable with `-c`; an unpriced model under a budget is refused before any request;
 * `--output-schema` sends a prose answer back and prints only the JSON value, and fails (exit 1) on one that never
 * conforms.
 */
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { type RecordedRequest, type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
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

/** The conversation of a request. */
const messagesOf = (request: RecordedRequest) =>
  ((request.body as { messages?: Array<Record<string, unknown>> }).messages ?? []) as Array<{
    role: string
    content?: unknown
    tool_calls?: Array<{ id: string }>
    tool_call_id?: string
  }>
/** The caller offers the task tool; a subagent never does (no recursion). */
const isCaller = (request: RecordedRequest) => JSON.stringify(request.body).includes('"name":"task"')

// $100 per million tokens both ways (the config's `cost`): a reply of 5,000 input and 20 output tokens is $0.502.
const usage = { input: 5_000, output: 20 }

/** A project whose user config has provider `local`, model alpha, priced (or not) in the config. */
const setup = async (script: Parameters<typeof startScriptedServer>[0], priced = true) => {
  server = await startScriptedServer(script)
  const box = sandbox()
  mkdirSync(join(box.dir, "config", "lathe"), { recursive: true })
  const alpha = priced ? { output: 8_000, cost: { input: 100, output: 100 } } : { output: 8_000 }
  writeFileSync(
    join(box.dir, "config", "lathe", "lathe.json"),
    JSON.stringify({
      model: "local/alpha",
      provider: { local: { type: "openai-compatible", baseURL: server.url, models: { alpha } } }
    })
  )
  writeFileSync(join(box.project, "app.ts"), "export const parse = () => 1\n")
  return { ...box, server }
}

let reads = 0
/** The output limit a request was sent with. */
const maxTokens = (request: RecordedRequest) => (request.body as { max_tokens?: number }).max_tokens

/**
 * The caller starts one explore task; the subagent reads for ever (it would overspend), writing every output token it
 * is allowed each time (the worst case); after -c, the caller ends.
 */
const overspend = (request: RecordedRequest) => {
  const text = JSON.stringify(messagesOf(request))
  if (!isCaller(request))
    return {
      steps: [{ tool: "read", input: { filePath: "app.ts", offset: ++reads } }],
      usage: { input: usage.input, output: maxTokens(request) ?? 8_000 }
    }
  if (text.includes("go on please")) return { steps: [{ text: "Finished." }], usage }
  return {
    steps: [
      { tool: "task", input: { description: "read it all", prompt: "read everything", subagent_type: "explore" } }
    ],
    usage
  }
}

/** Every tool call in the conversation has its result, in the request as sent. */
const dangling = (request: RecordedRequest): ReadonlyArray<string> => {
  const messages = messagesOf(request)
  const answered = new Set(messages.flatMap((m) => (m.role === "tool" && m.tool_call_id ? [m.tool_call_id] : [])))
  return messages.flatMap((m) => (m.tool_calls ?? []).map((call) => call.id).filter((id) => !answered.has(id)))
}

describe("--max-cost", () => {
  it(
    "a subagent writing all it may is cut to what is left, then stopped within the cap; exit 3; -c goes on",
    slow,
    async () => {
      const { project, env, server } = await setup(overspend)
      const cap = 4
      const run = await runLathe(["run", "--yes", "--max-cost", String(cap), "read the whole project"], {
        cwd: project,
        env,
        timeoutMs
      })
      assert.strictEqual(run.code, 3, run.stderr)
      // Every request carries the output limit its hold pays for: the model's own (8,000 tokens) while the budget
      // pays for it, then less (never under 1,024), then none is sent.
      const limits = server.requests.map(maxTokens)
      for (const limit of limits) assert.isTrue(limit !== undefined && limit >= 1_024 && limit <= 8_000, `${limit}`)
      assert.strictEqual(limits[0], 8_000)
      assert.isBelow(limits.at(-1) ?? 8_000, 8_000)
      // What the server's usage says was spent: within the cap, but for the input estimate's error (the scripted
      // server counts 5,000 input tokens whatever the request; a fifth of that bounds the error here).
      const spent = server.requests.reduce(
        (sum, r) => sum + (usage.input + (isCaller(r) ? usage.output : (maxTokens(r) ?? 0))) * 100e-6,
        0
      )
      assert.isAtMost(spent, cap + 0.2 * usage.input * 100e-6)
      // Caller, then the subagent until the shared budget could not cover its next call.
      assert.isAtLeast(server.requests.filter((r) => !isCaller(r)).length, 1)
      assert.strictEqual(server.requests.filter(isCaller).length, 1)
      assert.match(run.stderr, /Stopped: the turn has spent \$\d+\.\d{4} of its \$4\.0000 budget/)
      assert.include(run.stderr, 'lathe run -c "continue" with a higher --max-cost')

      const before = server.requests.length
      const resumed = await runLathe(["run", "-c", "--yes", "--max-cost", "5", "go on please"], {
        cwd: project,
        env,
        timeoutMs
      })
      assert.strictEqual(resumed.code, 0, resumed.stderr)
      assert.include(resumed.stdout, "Finished.")
      const next = server.requests[before]
      assert.isDefined(next)
      // The stopped turn left a well-formed history: the task call has its result.
      if (next) assert.deepStrictEqual(dangling(next), [])
      assert.include(JSON.stringify(next ? messagesOf(next) : []), "cost budget ran out")
    }
  )

  it("a model without a price under a budget is refused at start, with how to price it", slow, async () => {
    const { project, env, server } = await setup(() => ({ steps: [{ text: "hi" }] }), false)
    const run = await runLathe(["run", "--max-cost", "1", "hello"], { cwd: project, env, timeoutMs })
    assert.strictEqual(run.code, 1, run.stderr)
    assert.include(run.stderr, "the model local/alpha has no price")
    assert.include(run.stderr, '"cost"')
    assert.strictEqual(server.requests.length, 0)
  })

  it("bad limit flags are usage errors (exit 2)", slow, async () => {
    const { project, env } = await setup(() => ({ steps: [{ text: "hi" }] }))
    const cost = await runLathe(["run", "--max-cost", "lots", "hello"], { cwd: project, env, timeoutMs })
    assert.strictEqual(cost.code, 2)
    assert.include(cost.stderr, "--max-cost takes an amount in USD")
    writeFileSync(join(project, "bad.json"), '{ "type": "object",\n  "properties": { , } }')
    const schema = await runLathe(["run", "--output-schema", "bad.json", "hello"], { cwd: project, env, timeoutMs })
    assert.strictEqual(schema.code, 2)
    assert.match(schema.stderr, /--output-schema bad\.json is not JSON: .*line 2/)
  })
})

const reviewSchema = {
  type: "object",
  properties: {
    verdict: { type: "string", enum: ["ok", "fix"] },
    issues: { type: "array", items: { type: "string" } }
  },
  required: ["verdict", "issues"],
  additionalProperties: false
}

describe("--output-schema", () => {
  it("prose first, then JSON: the errors go back, and stdout is exactly the JSON value", slow, async () => {
    let calls = 0
    const { project, env, server } = await setup(() =>
      ++calls === 1
        ? { steps: [{ text: "Looks fine to me, one typo in app.ts." }] }
        : { steps: [{ text: '```json\n{"verdict": "fix", "issues": ["typo in app.ts"]}\n```' }] }
    )
    writeFileSync(join(project, "review.json"), JSON.stringify(reviewSchema))
    const run = await runLathe(["run", "--output-schema", "review.json", "review app.ts"], {
      cwd: project,
      env,
      timeoutMs
    })
    assert.strictEqual(run.code, 0, run.stderr)
    assert.strictEqual(run.stdout, '{"verdict":"fix","issues":["typo in app.ts"]}\n')
    assert.strictEqual(server.requests.length, 2)
    assert.include(JSON.stringify(messagesOf(server.requests[1] as RecordedRequest)), "the answer is not a JSON value")
  })

  it("an answer that never conforms fails the run (exit 1) with the errors, and nothing on stdout", slow, async () => {
    const { project, env, server } = await setup(() => ({ steps: [{ text: '{"verdict": "maybe", "issues": []}' }] }))
    writeFileSync(join(project, "review.json"), JSON.stringify(reviewSchema))
    const run = await runLathe(["run", "--output-schema", "review.json", "review app.ts"], {
      cwd: project,
      env,
      timeoutMs
    })
    assert.strictEqual(run.code, 1, run.stderr)
    assert.strictEqual(run.stdout, "")
    assert.include(run.stderr, "does not validate against the output schema (sent back 2 times")
    assert.include(run.stderr, "verdict: ")
    assert.strictEqual(server.requests.length, 3)
  })
})
