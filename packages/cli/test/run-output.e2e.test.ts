import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { type ScriptedReply, type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { afterEach, assert, describe, it } from "vitest"
import { runLathe, sandbox } from "./helpers.js"
import { closeAll, spawnTerminal } from "./pty.js"

// `lathe run`'s text output, end to end: the real CLI, a scripted model server on 127.0.0.1, real bash.
const bin = fileURLToPath(new URL("../src/bin.ts", import.meta.url))
const tsx = import.meta.resolve("tsx")

let server: ScriptedServer | undefined
afterEach(async () => {
  await closeAll()
  await server?.close()
  server = undefined
})

const setup = async (replies: ReadonlyArray<ScriptedReply>) => {
  server = await startScriptedServer(replies)
  const box = sandbox()
  writeFileSync(join(box.project, "a.txt"), "alpha\n")
  const env = { ...box.env, LATHE_BASE_URL: server.url, LATHE_MODEL: "test-model" }
  return { ...box, env, server }
}

const answer = "# Findings\n\nThe test **fails** because `add` subtracts.\n\n- one\n- two\n\n```js\nadd(1, 2)\n```\n"

// biome-ignore lint/suspicious/noControlCharactersInRegex: looking for escapes is the point
const ESCAPE = /\x1b|\r/

describe("lathe run's text output (end to end)", () => {
  it("piped: a failed command is ✗ with its exit code, the answer is plain Markdown, no escape codes, no zero totals", {
    timeout: 60_000
  }, async () => {
    const { project, env } = await setup([
      { steps: [{ tool: "bash", input: { command: "echo fine", description: "Say fine" } }] },
      { steps: [{ tool: "bash", input: { command: "echo broken >&2; exit 3", description: "Run the tests" } }] },
      { steps: [{ text: answer }] }
    ])
    const run = await runLathe(["run", "--yes", "run the tests"], { cwd: project, env })
    assert.strictEqual(run.code, 0, run.stderr)
    assert.match(run.stdout, /^✓ bash Say fine \([\d.]+ m?s\)$/m)
    assert.match(run.stdout, /^✗ bash Run the tests \([\d.]+ m?s\): exit 3$/m)
    // The answer exactly as the model wrote it, byte for byte after the tool lines.
    assert.isTrue(run.stdout.endsWith(`): exit 3\n${answer}`), run.stdout)
    assert.notMatch(run.stdout, ESCAPE)
    assert.notMatch(run.stderr, ESCAPE)
    // The scripted server reports 10 in / 5 out per step and no cost: nothing else is listed.
    assert.match(run.stderr, /^3 steps · tokens in 30, out 15$/m)
    assert.notMatch(run.stderr, /reasoning|cache|\$/)
  })

  it("a 404 for an unknown model names LATHE_BASE_URL's server and the model as it knows it", {
    timeout: 60_000
  }, async () => {
    const { project, env, server } = await setup([
      { type: "error", status: 404, body: { error: { message: "model 'qwen-nope' not found", type: "not_found" } } }
    ])
    const run = await runLathe(["run", "hi"], { cwd: project, env: { ...env, LATHE_MODEL: "qwen-nope" } })
    assert.strictEqual(run.code, 1)
    assert.strictEqual(server.requests.length, 1)
    assert.include(
      run.stderr,
      `Check that the server at LATHE_BASE_URL (${server.url}) serves a model named "qwen-nope" (LATHE_MODEL).`
    )
    assert.notInclude(run.stderr, "env/")
  })

  it("Ctrl-C during a command: the call says interrupted, once, and the stop notice says what happens now", {
    timeout: 60_000
  }, async () => {
    const { project, env, server } = await setup([
      { steps: [{ tool: "bash", input: { command: "sleep 20", description: "Wait long" } }] }
    ])
    const run = await runLathe(["run", "--yes", "wait"], {
      cwd: project,
      env,
      onSpawn: (child) => {
        const poll = setInterval(() => {
          if (server.requests.length > 0) {
            clearInterval(poll)
            setTimeout(() => child.kill("SIGINT"), 1_000)
          }
        }, 20)
      }
    })
    assert.strictEqual(run.code, 130, run.stderr)
    assert.match(run.stdout, /^✗ bash Wait long \([\d.]+ m?s\): interrupted$/m)
    assert.include(run.stderr, "lathe: stopping (Ctrl-C again to quit at once)...")
    const said = `${run.stdout}${run.stderr}`.match(/interrupted|aborted|aborting/g) ?? []
    assert.deepStrictEqual(said, ["interrupted"])
  })

  it("at a terminal with NO_COLOR: the live line still shows, the answer stays the model's plain text", {
    timeout: 60_000
  }, async () => {
    const { project, env } = await setup([
      { steps: [{ tool: "bash", input: { command: "sleep 1.5", description: "Wait a moment" } }] },
      { steps: [{ text: answer }] }
    ])
    const term = spawnTerminal({
      command: process.execPath,
      args: ["--conditions=@lathe/source", "--import", tsx, bin, "run", "--yes", "wait and report"],
      cwd: project,
      env: { ...env, NO_COLOR: "1" },
      cols: 100,
      rows: 30
    })
    await term.waitFor(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] bash Wait a moment · \d+s/, 20_000)
    assert.strictEqual(await term.exited, 0, term.transcript())
    const raw = term.transcript()
    assert.include(raw, "# Findings")
    assert.include(raw, "The test **fails** because `add` subtracts.")
    assert.include(raw, "```js")
  })

  it("at a terminal: a live line while a slow command runs, then ✓; the answer rendered as Markdown", {
    timeout: 60_000
  }, async () => {
    const { project, env } = await setup([
      { steps: [{ tool: "bash", input: { command: "sleep 2", description: "Wait a moment" } }] },
      { steps: [{ text: answer }] }
    ])
    const term = spawnTerminal({
      command: process.execPath,
      args: ["--conditions=@lathe/source", "--import", tsx, bin, "run", "--yes", "wait and report"],
      cwd: project,
      env,
      cols: 100,
      rows: 30
    })
    // The spinner line with the tool, its title and the seconds so far, while `sleep 2` runs.
    await term.waitFor(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] bash Wait a moment · \d+s/, 20_000)
    await term.waitFor(/✓ bash Wait a moment \([23456]\.\d s\)/, 10_000)
    assert.strictEqual(await term.exited, 0, term.transcript())
    const screen = term.transcript()
    // Replaced by the final line: no spinner left behind.
    assert.notMatch(screen, /[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] bash/)
    // Rendered: the heading without its "#", bold without "**", a bullet list, the code without its fence.
    assert.match(screen, /^Findings$/m)
    assert.include(screen, "The test fails because add subtracts.")
    assert.match(screen, /^• one$/m)
    assert.match(screen, /^ {2}add\(1, 2\)$/m)
    assert.notInclude(screen, "# Findings")
    assert.notInclude(screen, "**")
    assert.notInclude(screen, "```")
    assert.match(screen, /2 steps · tokens in 20, out 10\s*$/)
  })
})
