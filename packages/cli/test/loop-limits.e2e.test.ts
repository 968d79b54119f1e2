import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { type ScriptedReply, type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import type { LatheEvent } from "@lathe/plugin/schema"
import { afterEach, assert, describe, it } from "vitest"
import { runLathe, sandbox } from "./helpers.js"

// The loop's limits and errors through the real `lathe run`: in-band provider errors retried, the step cap, and what a
// stopped doom loop tells the person. The model is a scripted server on 127.0.0.1; everything else is real.
let server: ScriptedServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

/** A project with a file, the person's own config (`global`), and a scripted model. */
const project = async (script: ReadonlyArray<ScriptedReply>, global: unknown = {}) => {
  server = await startScriptedServer([...script])
  const box = sandbox()
  writeFileSync(join(box.project, "a.txt"), "alpha\n")
  mkdirSync(join(box.dir, "config", "lathe"), { recursive: true })
  writeFileSync(join(box.dir, "config", "lathe", "lathe.json"), JSON.stringify(global))
  return { ...box, env: { ...box.env, LATHE_BASE_URL: server.url, LATHE_MODEL: "m" }, server }
}

const toolsOf = (body: unknown): ReadonlyArray<string> =>
  ((body as { tools?: ReadonlyArray<{ function?: { name?: string } }> } | undefined)?.tools ?? []).map(
    (tool) => tool.function?.name ?? ""
  )

const read = (n: number): ScriptedReply => ({ steps: [{ tool: "read", input: { filePath: "a.txt", offset: n } }] })

describe("lathe run: in-band provider errors", () => {
  it("a too_many_requests error inside a 200 stream is retried like a 429, and the turn then succeeds", async () => {
    const {
      project: cwd,
      env,
      server
    } = await project(
      [
        {
          type: "in-band-error",
          steps: [{ text: "Half an ans" }],
          error: { message: "Too many requests", type: "too_many_requests" }
        },
        { steps: [{ text: "The whole answer." }] }
      ],
      { retry: { max_delay_ms: 50 } }
    )
    const run = await runLathe(["run", "--format", "json", "hello"], { cwd, env })
    assert.strictEqual(run.code, 0, run.stderr)
    assert.strictEqual(server.requests.length, 2)
    const retry = run.events.find((e) => e.type === "session.status" && e.status.type === "retry")
    assert.isDefined(retry, "a retry was announced")
    if (retry?.type === "session.status" && retry.status.type === "retry")
      assert.include(retry.status.message, "rate-limited (mid-stream)")
    // The failed attempt's text is removed again; the answer is the retried one.
    const texts = run.events.flatMap((e) => (e.type === "part.updated" && e.part.type === "text" ? [e.part] : []))
    assert.isTrue(texts.some((part) => part.text === "The whole answer."))
    const half = texts.find((part) => part.text === "Half an ans")
    assert.isTrue(run.events.some((e) => e.type === "part.removed" && e.partID === half?.id))
    assert.isUndefined(run.events.find((e) => e.type === "session.error"))
  })
})

describe("lathe run: the step cap", () => {
  it("max_steps 3 ends the turn after three model calls with StepLimit; lathe run -c continue goes on", async () => {
    const {
      project: cwd,
      env,
      server
    } = await project(
      [
        read(1),
        read(2),
        { steps: [{ text: "Read a.txt twice; nothing left but to say so." }] },
        { steps: [{ text: "Going on." }] }
      ],
      { max_steps: 3 }
    )
    const run = await runLathe(["run", "read a.txt again and again"], { cwd, env })
    assert.strictEqual(run.code, 1, "a turn cut short is not done")
    assert.strictEqual(server.requests.length, 3)
    assert.include(toolsOf(server.requests[1]?.body), "read")
    assert.deepStrictEqual(toolsOf(server.requests[2]?.body), [], "the last step offers no tools")
    assert.include(run.stdout, "nothing left but to say so")
    assert.include(run.stderr, "lathe: Stopped after 3 steps")
    assert.include(run.stderr, 'lathe run -c "continue"')

    const next = await runLathe(["run", "-c", "continue"], { cwd, env })
    assert.strictEqual(next.code, 0, next.stderr)
    assert.include(next.stdout, "Going on.")
    assert.strictEqual(server.requests.length, 4)
    assert.include(JSON.stringify(server.requests[3]?.body), "nothing left but to say so", "the same session went on")
  })

  it("an untrusted project cannot lift the person's cap: its max_steps is dropped with a notice", async () => {
    const {
      project: cwd,
      env,
      server
    } = await project([read(1), { steps: [{ text: "Wrapped up." }] }, { steps: [{ text: "never reached" }] }], {
      max_steps: 2
    })
    writeFileSync(join(cwd, "lathe.json"), JSON.stringify({ max_steps: 0 }))
    const run = await runLathe(["run", "--format", "json", "go"], { cwd, env })
    assert.strictEqual(run.code, 1)
    assert.strictEqual(server.requests.length, 2)
    assert.match(run.stderr, /max_steps/)
    const error = run.events.find(
      (e): e is Extract<LatheEvent, { type: "session.error" }> => e.type === "session.error"
    )
    assert.strictEqual(error?.error.name, "StepLimit")
    if (error?.error.name === "StepLimit") assert.strictEqual(error.error.steps, 2)
  })
})

describe("lathe run: a stopped doom loop", () => {
  it("says the threshold, the repeated call and what to do; --format json carries them as fields", async () => {
    const same = (): ScriptedReply => ({ steps: [{ tool: "read", input: { filePath: "a.txt" } }] })
    const script = [same(), same(), same(), { steps: [{ text: "never reached" }] }]
    const { project: cwd, env, server } = await project(script)
    // No terminal: the doom_loop ask cannot be put to anyone, so it is rejected and the loop stops.
    const text = await runLathe(["run", "read a.txt"], { cwd, env })
    assert.strictEqual(text.code, 1)
    assert.strictEqual(server.requests.length, 3)
    assert.include(text.stderr, "called read 3 times in a row with the same input")
    assert.include(text.stderr, "threshold is 3")
    assert.include(text.stderr, 'Repeated call (×3): read {"filePath":"a.txt"}')
    assert.include(text.stderr, "doom_loop.threshold")

    const again = await project(script)
    const json = await runLathe(["run", "--format", "json", "read a.txt"], { cwd: again.project, env: again.env })
    assert.strictEqual(json.code, 1)
    const error = json.events.find(
      (e): e is Extract<LatheEvent, { type: "session.error" }> => e.type === "session.error"
    )
    assert.strictEqual(error?.error.name, "DoomLoopDetected")
    if (error?.error.name !== "DoomLoopDetected") return
    assert.strictEqual(error.error.threshold, 3)
    assert.deepStrictEqual(error.error.calls, [
      { tool: "read", input: '{"filePath":"a.txt"}' },
      { tool: "read", input: '{"filePath":"a.txt"}' },
      { tool: "read", input: '{"filePath":"a.txt"}' }
    ])
    assert.include(error.error.suggestion ?? "", "doom_loop.ignored_tools")
  })
})
