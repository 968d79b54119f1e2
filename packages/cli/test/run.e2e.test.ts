import { writeFileSync } from "node:fs"
import { createServer } from "node:net"
import { join } from "node:path"
import { type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { afterEach, assert, describe, it } from "vitest"
import { runLathe, sandbox } from "./helpers.js"

// End to end: the real CLI process, the real @ai-sdk/openai-compatible provider, a scripted SSE server on 127.0.0.1.
let server: ScriptedServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

const setup = async (script: Parameters<typeof startScriptedServer>[0]) => {
  server = await startScriptedServer(script)
  const box = sandbox()
  writeFileSync(join(box.project, "a.txt"), "alpha\n")
  writeFileSync(join(box.project, "b.txt"), "beta\n")
  const env = { ...box.env, LATHE_BASE_URL: server.url, LATHE_MODEL: "test-model" }
  return { ...box, env, server }
}

describe("lathe run (end to end)", () => {
  it("runs a three-step tool session and prints every event as JSON", async () => {
    const { project, env, server } = await setup([
      { steps: [{ text: "Reading a." }, { tool: "read", input: { filePath: "a.txt" } }] },
      { steps: [{ tool: "read", input: { filePath: "b.txt" } }] },
      { steps: [{ text: "a says alpha, b says beta." }], usage: { input: 120, output: 12, cached: 100 } }
    ])
    const run = await runLathe(["run", "--format", "json", "what do a and b say?"], { cwd: project, env })
    assert.strictEqual(run.code, 0, run.stderr)
    assert.strictEqual(server.requests.length, 3)
    // The default rules deny `question`, so the model is not offered that tool at all.
    const offered = JSON.stringify((server.requests[0]?.body as { tools?: unknown } | undefined)?.tools)
    assert.include(offered, '"name":"read"')
    assert.notInclude(offered, '"name":"question"')
    const types = run.events.map((e) => e.type)
    assert.includeMembers(types, [
      "session.created",
      "session.started",
      "step.started",
      "tool.completed",
      "session.idle"
    ])
    // The turn's last event is its idle; the CLI's run.result line closes the output.
    assert.strictEqual(types.at(-2), "session.idle")
    assert.include(run.stdout.trim().split("\n").at(-1), '"type":"run.result"')
    assert.strictEqual(types.filter((t) => t === "step.finished").length, 3)
    const completed = run.events.flatMap((e) => (e.type === "tool.completed" ? [e] : []))
    assert.deepStrictEqual(
      completed.map((e) => e.state.input),
      [{ filePath: "a.txt" }, { filePath: "b.txt" }]
    )
    // The second and third requests carried the tool results back to the model.
    const third = JSON.stringify(server.requests[2]?.body)
    assert.include(third, "alpha")
    assert.include(third, "beta")
    const last = run.events.findLast((e) => e.type === "step.finished")
    assert.deepStrictEqual(last?.type === "step.finished" ? last.tokens.cache.read : -1, 100)
  })

  it("waits out a 429 with retry-after, then succeeds", async () => {
    const { project, env, server } = await setup([
      { type: "error", status: 429, headers: { "retry-after": "1" } },
      { steps: [{ text: "ok after retry" }] }
    ])
    const started = Date.now()
    const run = await runLathe(["run", "--format", "json", "hi"], { cwd: project, env })
    assert.strictEqual(run.code, 0, run.stderr)
    assert.strictEqual(server.requests.length, 2)
    assert.isAtLeast(Date.now() - started, 1_000)
    const retry = run.events.find((e) => e.type === "session.status" && e.status.type === "retry")
    assert.isDefined(retry)
  })

  it("retries a stream cut in the middle of a tool call, then succeeds", async () => {
    const { project, env, server } = await setup([
      { type: "cut", steps: [{ text: "Let me read" }, { tool: "read", input: { filePath: "a.txt" } }] },
      { steps: [{ tool: "read", input: { filePath: "a.txt" } }] },
      { steps: [{ text: "It says alpha." }] }
    ])
    const run = await runLathe(["run", "--format", "json", "read a"], { cwd: project, env })
    assert.strictEqual(run.code, 0, run.stderr)
    assert.strictEqual(server.requests.length, 3)
    // The cut attempt's parts were removed; exactly one read ran.
    assert.strictEqual(run.events.filter((e) => e.type === "tool.completed").length, 1)
    assert.isTrue(run.events.some((e) => e.type === "part.removed"))
  })

  it("fails at once on a 401 with a message that says how to fix it", async () => {
    const { project, env, server } = await setup([{ type: "error", status: 401 }])
    const run = await runLathe(["run", "hi"], { cwd: project, env })
    assert.strictEqual(run.code, 1)
    assert.strictEqual(server.requests.length, 1)
    assert.match(run.stderr, /LATHE_API_KEY|api key|API key/i)
  })

  it("fails at once on a 429 that says the account has no quota (OpenAI's insufficient_quota)", async () => {
    const text = "You exceeded your current quota, please check your plan and billing details."
    const { project, env, server } = await setup([
      {
        type: "error",
        status: 429,
        body: { error: { message: text, type: "insufficient_quota", code: "insufficient_quota" } }
      }
    ])
    const run = await runLathe(["run", "hi"], { cwd: project, env })
    assert.strictEqual(run.code, 1)
    assert.strictEqual(server.requests.length, 1)
    assert.notInclude(run.stderr, "Retrying")
    assert.include(run.stderr, `the account has no quota left (HTTP 429): ${text} Check the plan and billing`)
  })

  it("a server that is not running: two quick retries, then an error that says so and how many attempts", async () => {
    const box = sandbox()
    const closed = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, "127.0.0.1", () => {
        const address = probe.address()
        probe.close(() => resolve(typeof address === "object" && address ? address.port : 0))
      })
    })
    // Short waits for the test; the policy's own 2 s and 4 s are unit-tested (retry.test.ts).
    writeFileSync(join(box.project, "lathe.json"), JSON.stringify({ retry: { max_delay_ms: 20 } }))
    const url = `http://127.0.0.1:${closed}/v1`
    const env = { ...box.env, LATHE_BASE_URL: url, LATHE_MODEL: "test-model" }
    const run = await runLathe(["run", "hi"], { cwd: box.project, env })
    assert.strictEqual(run.code, 1)
    const cannot = `Cannot connect to ${url}/chat/completions (connection refused); is the server running and the base URL right?`
    assert.include(run.stderr, `${cannot} Retrying (attempt 2)`)
    assert.include(run.stderr, `${cannot} Retrying (attempt 3)`)
    assert.notInclude(run.stderr, "attempt 4")
    assert.include(run.stderr, `${cannot} Gave up after 3 attempts.`)
  })

  it("text mode streams the answer, one line per tool call, and the totals", async () => {
    const { project, env } = await setup([
      { steps: [{ tool: "read", input: { filePath: "a.txt" } }] },
      { steps: [{ text: "Done." }] }
    ])
    const run = await runLathe(["run", "read a"], { cwd: project, env })
    assert.strictEqual(run.code, 0, run.stderr)
    assert.match(run.stdout, /✓ read .*\(\d+ ms\)/)
    assert.include(run.stdout, "Done.")
    // The scripted server reports 10 in and 5 out per step, no cache, no cost: zero fields are left out.
    assert.match(run.stderr, /^2 steps · tokens in 20, out 10$/m)
  })

  it("explains what is missing when no provider is configured", async () => {
    const box = sandbox()
    const run = await runLathe(["run", "hi"], { cwd: box.project, env: box.env })
    assert.strictEqual(run.code, 1)
    assert.include(run.stderr, "LATHE_BASE_URL")
    assert.include(run.stderr, "lathe.json")
  })

  it("--continue carries on the latest session with its history", async () => {
    const { project, env, server } = await setup([
      { steps: [{ text: "The secret word is walnut." }] },
      { steps: [{ text: "You asked about walnut." }] }
    ])
    const first = await runLathe(["run", "--format", "json", "remember walnut"], { cwd: project, env })
    assert.strictEqual(first.code, 0, first.stderr)
    const second = await runLathe(["run", "--format", "json", "-c", "what was the word?"], { cwd: project, env })
    assert.strictEqual(second.code, 0, second.stderr)
    assert.isFalse(second.events.some((e) => e.type === "session.created"))
    const body = JSON.stringify(server.requests[1]?.body)
    assert.include(body, "remember walnut")
    assert.include(body, "The secret word is walnut.")
    assert.include(body, "what was the word?")
  })

  it("Ctrl-C during a tool aborts cleanly: exit 130 and the aborted state is recorded", async () => {
    const { project, env, server } = await setup([
      { steps: [{ tool: "bash", input: { command: "sleep 20", description: "wait" } }] },
      { steps: [{ text: "never reached" }] }
    ])
    const run = await runLathe(["run", "--format", "json", "--yes", "wait a while"], {
      cwd: project,
      env,
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
    assert.strictEqual(server.requests.length, 1)
    const errored = run.events.find((e) => e.type === "tool.error")
    assert.strictEqual(
      errored?.type === "tool.error" && errored.state.status === "error" ? errored.state.error : "",
      "aborted"
    )
    const aborted = run.events.findLast((e) => e.type === "message.updated")
    assert.strictEqual(
      aborted?.type === "message.updated" && aborted.message.role === "assistant" ? aborted.message.error?.name : "",
      "Aborted"
    )
  })
})
