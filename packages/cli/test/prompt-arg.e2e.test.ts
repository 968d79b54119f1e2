import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import { type RecordedRequest, type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { afterEach, assert, describe, it } from "vitest"
import { runLathe, sandbox } from "./helpers.js"
import { closeAll, quit, spawnTerminal } from "./pty.js"

// `lathe "a prompt"`: a first argument that is not a command opens the session with that prompt sent.
const bin = fileURLToPath(new URL("../src/bin.ts", import.meta.url))
const tsx = import.meta.resolve("tsx")

let server: ScriptedServer | undefined
afterEach(async () => {
  await closeAll()
  await server?.close()
  server = undefined
})

const isTitleRequest = (request: RecordedRequest) => JSON.stringify(request.body).includes("Write a title for this")

/** The last message the model was sent, as JSON text. */
const lastMessage = (request: RecordedRequest) =>
  JSON.stringify(((request.body as { messages?: ReadonlyArray<unknown> }).messages ?? []).at(-1))

/** A scripted model that answers each prompt by quoting it; its requests, titles left out. */
const setup = async () => {
  const prompts: Array<string> = []
  server = await startScriptedServer((request) => {
    if (isTitleRequest(request)) return { steps: [{ text: "A title" }] }
    const last = lastMessage(request)
    prompts.push(last)
    if (last.includes("fix the failing test")) return { steps: [{ text: "Fixed the test." }] }
    if (last.includes("and now the docs")) return { steps: [{ text: "Wrote the docs." }] }
    return { steps: [{ text: "ok" }] }
  })
  const box = sandbox()
  return { ...box, env: { ...box.env, LATHE_BASE_URL: server.url, LATHE_MODEL: "test-model" }, prompts }
}

describe('lathe "prompt"', () => {
  it("without a terminal: the prompt is the first plain line, and it exits when stdin ends", {
    timeout: 60_000
  }, async () => {
    const { project, env, prompts } = await setup()
    const run = await runLathe(["fix the failing test"], { cwd: project, env })
    assert.strictEqual(run.code, 0, run.stdout + run.stderr)
    assert.include(run.stdout, "Fixed the test.")
    assert.notInclude(run.stdout, "\u001b")
    assert.notInclude(run.stderr, "unknown command")
    assert.strictEqual(prompts.length, 1)
    assert.include(prompts[0], "fix the failing test")
  })

  it("without a terminal: after the prompt, stdin lines go on in the same session", { timeout: 60_000 }, async () => {
    const { project, env, prompts } = await setup()
    const child = spawn(
      process.execPath,
      ["--conditions=@lathe/source", "--import", tsx, bin, "fix the failing test"],
      {
        cwd: project,
        env: { ...env, TERM: "dumb" },
        stdio: ["pipe", "pipe", "pipe"]
      }
    )
    let out = ""
    for (const stream of [child.stdout, child.stderr])
      stream.on("data", (chunk: Buffer) => {
        out += chunk.toString("utf8")
      })
    child.stdin.end("and now the docs\n")
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve))
    assert.strictEqual(code, 0, out)
    assert.isBelow(out.indexOf("Fixed the test."), out.indexOf("Wrote the docs."))
    assert.isAtLeast(out.indexOf("Fixed the test."), 0, out)
    assert.strictEqual(prompts.length, 2)
    // The second request carries the first exchange: one session, not two.
    assert.include(JSON.stringify(server?.requests.filter((r) => !isTitleRequest(r))[1]?.body), "Fixed the test.")
  })

  it("a near-miss of a command is a typo, not a prompt: nothing reaches the model", { timeout: 60_000 }, async () => {
    const { project, env } = await setup()
    for (const [typo, meant] of [
      ["rn", "run"],
      ["sesion", "session"],
      ["doctr", "doctor"],
      ["hlep", "help"]
    ] as const) {
      const run = await runLathe([typo], { cwd: project, env })
      assert.strictEqual(run.code, 2, run.stderr)
      assert.include(run.stderr, `unknown command "${typo}"`)
      assert.include(run.stderr, `Did you mean \`lathe ${meant}\`?`)
    }
    // An unknown option is still an error, not a prompt.
    const option = await runLathe(["--frobnicate"], { cwd: project, env })
    assert.strictEqual(option.code, 2)
    assert.include(option.stderr, "lathe: unknown option --frobnicate.")
    const near = await runLathe(["--contnue"], { cwd: project, env })
    assert.strictEqual(near.code, 2)
    assert.include(near.stderr, "lathe: unknown option --contnue. Did you mean --continue?")
    assert.strictEqual(server?.requests.length, 0)
  })

  it("a single word far from every command, or `--` before a command-like word, is a prompt", {
    timeout: 60_000
  }, async () => {
    const { project, env, prompts } = await setup()
    const word = await runLathe(["refactor"], { cwd: project, env })
    assert.strictEqual(word.code, 0, word.stderr)
    const forced = await runLathe(["--", "run"], { cwd: project, env })
    assert.strictEqual(forced.code, 0, forced.stderr)
    assert.strictEqual(prompts.length, 2)
    assert.include(prompts[0], "refactor")
    assert.include(prompts[1], '"run"')
  })

  it("at a terminal: the full-screen session opens with the prompt already sent", { timeout: 60_000 }, async () => {
    const { project, env } = await setup()
    const term = spawnTerminal({
      command: process.execPath,
      args: ["--conditions=@lathe/source", "--import", tsx, bin, "fix the failing test"],
      cwd: project,
      env
    })
    await term.waitFor("Fixed the test.", 30_000)
    assert.include(term.screen(), "fix the failing test")
    assert.strictEqual(await quit(term), 0)
  })
})
