import { mkdirSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { type RecordedRequest, type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { afterEach, assert, describe, it } from "vitest"
import { runLathe, sandbox } from "./helpers.js"
import { startServe } from "./serve-helpers.js"

// `lathe run --attach URL --command …` against a real `lathe serve` on 127.0.0.1: the server's turn-runner expands the
// command (an MCP server's prompt, from server-everything over stdio in node_modules) and attaches mentioned
// resources, as the in-process run does. The model is the scripted server.
const require = createRequire(import.meta.url)
const everything = join(
  dirname(require.resolve("@modelcontextprotocol/server-everything/package.json")),
  "dist",
  "index.js"
)
const TOKEN = "attach-command-s3cret"

const cleanups: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/** The last message the model was sent, as JSON text. */
const lastMessage = (request: RecordedRequest | undefined): string =>
  JSON.stringify(((request?.body as { messages?: ReadonlyArray<unknown> } | undefined)?.messages ?? []).at(-1))

/** A sandbox whose user config has the everything server, a model that answers "ok", and `lathe serve` there. */
const served = async () => {
  const model: ScriptedServer = await startScriptedServer(() => ({ steps: [{ text: "ok" }] }))
  cleanups.push(() => model.close())
  const box = sandbox()
  const configDir = join(box.env.XDG_CONFIG_HOME ?? "", "lathe")
  mkdirSync(configDir, { recursive: true })
  const mcp = { everything: { type: "local", command: [process.execPath, everything, "stdio"] } }
  writeFileSync(join(configDir, "lathe.json"), JSON.stringify({ mcp }))
  const env = { ...box.env, LATHE_BASE_URL: model.url, LATHE_MODEL: "test-model" }
  const server = await startServe(["--port", "0", "--token", TOKEN], { cwd: box.project, env, timeoutMs: 50_000 })
  cleanups.push(async () => {
    server.child.kill("SIGTERM")
    await server.exited
  })
  const run = (args: ReadonlyArray<string>) =>
    runLathe(["run", "--attach", server.url, ...args], {
      cwd: box.project,
      env: { ...env, LATHE_SERVER_TOKEN: TOKEN },
      timeoutMs: 50_000
    })
  return { model, run }
}

describe("lathe run --attach with a command (end to end)", () => {
  it("runs the server's MCP prompt with key=value and positional arguments, and names a command it has not", {
    timeout: 90_000
  }, async () => {
    const { model, run } = await served()
    const ran = await run(["--command", "everything:args-prompt", "state=IL", "Chicago"])
    assert.strictEqual(ran.code, 0, ran.stderr)
    assert.include(ran.stdout, "ok")
    assert.include(lastMessage(model.requests[0]), "What's weather in Chicago, IL?")

    const unknown = await run(["--command", "everything:nope"])
    assert.strictEqual(unknown.code, 1, unknown.stderr)
    assert.match(
      unknown.stderr,
      /the server at http:\/\/127\.0\.0\.1:\d+: .*has no prompt "nope"; its prompts are .*simple-prompt/
    )
    const missing = await run(["--command", "everything:args-prompt"])
    assert.strictEqual(missing.code, 1, missing.stderr)
    assert.include(missing.stderr, "everything:args-prompt needs city")
    assert.strictEqual(model.requests.length, 1)
  })

  it("attaches the server's MCP resource a message mentions; an unreadable one is named on stderr", {
    timeout: 90_000
  }, async () => {
    const { model, run } = await served()
    const ran = await run(["summarise @everything:demo://resource/dynamic/text/7 and @everything:nope://missing"])
    assert.strictEqual(ran.code, 0, ran.stderr)
    const sent = lastMessage(model.requests[0])
    assert.include(sent, "The user attached the MCP resource everything:demo://resource/dynamic/text/7")
    assert.include(sent, "Resource 7: This is a plaintext resource")
    assert.match(ran.stderr, /could not read nope:\/\/missing/)
  })
})
