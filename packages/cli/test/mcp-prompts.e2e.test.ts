import { mkdirSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { type RecordedRequest, type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { afterEach, assert, describe, it } from "vitest"
import { runLathe, sandbox } from "./helpers.js"
import { closeAll, spawnTerminal } from "./pty.js"

// End to end: MCP prompts as commands and resources as attachments, with the real CLI, server-everything over stdio
// from node_modules, and the scripted model server on 127.0.0.1.
const require = createRequire(import.meta.url)
const everything = join(
  dirname(require.resolve("@modelcontextprotocol/server-everything/package.json")),
  "dist",
  "index.js"
)
const bin = fileURLToPath(new URL("../src/bin.ts", import.meta.url))
const tsx = import.meta.resolve("tsx")

let model: ScriptedServer | undefined
afterEach(async () => {
  await closeAll()
  await model?.close()
  model = undefined
})

const isTitle = (request: RecordedRequest) => JSON.stringify(request.body).includes("Write a title for this")
/** The last message the model was sent, as JSON text. */
const lastMessage = (request: RecordedRequest | undefined): string =>
  JSON.stringify(((request?.body as { messages?: ReadonlyArray<unknown> } | undefined)?.messages ?? []).at(-1))

/** A sandbox whose user config has the everything server, and a model that answers "ok". */
const setup = async () => {
  model = await startScriptedServer((request) => ({ steps: [{ text: isTitle(request) ? "A title" : "ok" }] }))
  const box = sandbox()
  const configDir = join(box.env.XDG_CONFIG_HOME ?? "", "lathe")
  mkdirSync(configDir, { recursive: true })
  const mcp = { everything: { type: "local", command: [process.execPath, everything, "stdio"] } }
  writeFileSync(join(configDir, "lathe.json"), JSON.stringify({ mcp }))
  return { ...box, env: { ...box.env, LATHE_BASE_URL: model.url, LATHE_MODEL: "test-model" }, model }
}

describe("MCP prompts and resources in the CLI (end to end)", () => {
  it("lathe run --command runs a server's prompt with key=value and positional arguments", {
    timeout: 60_000
  }, async () => {
    const { project, env, model } = await setup()
    const run = await runLathe(["run", "--command", "everything:args-prompt", "state=IL", "Chicago"], {
      cwd: project,
      env,
      timeoutMs: 50_000
    })
    assert.strictEqual(run.code, 0, run.stderr)
    assert.include(lastMessage(model.requests[0]), "What's weather in Chicago, IL?")
  })

  it("lathe run --command with an unknown prompt or a missing argument is a usage error naming what exists", {
    timeout: 60_000
  }, async () => {
    const { project, env, model } = await setup()
    const unknown = await runLathe(["run", "--command", "everything:nope"], { cwd: project, env, timeoutMs: 50_000 })
    assert.strictEqual(unknown.code, 2, unknown.stderr)
    assert.match(unknown.stderr, /has no prompt "nope"; its prompts are .*simple-prompt/)
    const missing = await runLathe(["run", "--command", "everything:args-prompt"], {
      cwd: project,
      env,
      timeoutMs: 50_000
    })
    assert.strictEqual(missing.code, 2, missing.stderr)
    assert.include(missing.stderr, "everything:args-prompt needs city")
    assert.strictEqual(model.requests.length, 0)
  })

  it("@<server>:<uri> in a message attaches the resource's text; an unreadable one is named on stderr", {
    timeout: 60_000
  }, async () => {
    const { project, env, model } = await setup()
    const run = await runLathe(
      ["run", "summarise @everything:demo://resource/dynamic/text/7 and @everything:nope://missing"],
      { cwd: project, env, timeoutMs: 50_000 }
    )
    assert.strictEqual(run.code, 0, run.stderr)
    const sent = lastMessage(model.requests[0])
    assert.include(sent, "The user attached the MCP resource everything:demo://resource/dynamic/text/7")
    assert.include(sent, "Resource 7: This is a plaintext resource")
    assert.match(run.stderr, /could not read nope:\/\/missing/)
  })

  it("the UI lists /<server>:<prompt> with its description and runs it with its arguments", {
    timeout: 90_000
  }, async () => {
    const { project, env, model } = await setup()
    const term = spawnTerminal({
      command: process.execPath,
      args: ["--conditions=@lathe/source", "--import", tsx, bin],
      cwd: project,
      env
    })
    await term.waitFor("ready", 30_000)
    await term.type("/everything:")
    await term.waitFor("/everything:simple-prompt")
    await term.waitFor(/\/everything:args-prompt {2}A prompt with two arguments/)
    // A space ends the command name and closes the palette; the rest are the prompt's arguments.
    await term.type('args-prompt "San Francisco"')
    term.press("enter")
    await term.waitFor("What's weather in San Francisco?")
    const sent = () => model.requests.filter((r) => !isTitle(r)).map(lastMessage)
    const sentBy = async (count: number) => {
      const end = Date.now() + 20_000
      while (sent().length < count && Date.now() < end) await new Promise((resolve) => setTimeout(resolve, 50))
    }
    await sentBy(1)
    assert.include(sent().at(-1) ?? "", "What's weather in San Francisco?")

    await term.type("read @everything:demo://resource/dynamic/text/4 please")
    term.press("enter")
    await term.waitFor(/read @everything:demo:\/\/resource\/dynamic\/text\/4 please/)
    await sentBy(2)
    assert.include(sent().at(-1) ?? "", "Resource 4: This is a plaintext resource")
  })
})
