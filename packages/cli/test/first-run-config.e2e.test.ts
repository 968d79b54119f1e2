/**
 * The first ten minutes, configuring a model, through the real CLI: the README's provider block in an untrusted
 * project's lathe.json fails with ONE message that names the ignored keys and `lathe trust` (not the generic guide,
 * not "set the baseURL" again); the same block in the person's own config works; and in the interactive UI with no
 * model, a typed prompt is kept, `/connect` writes the person's config and the kept prompt is answered.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { type RecordedRequest, type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { parse } from "jsonc-parser"
import { afterEach, assert, describe, it } from "vitest"
import { runLathe, sandbox } from "./helpers.js"
import { closeAll, quit, spawnTerminal } from "./pty.js"

const bin = fileURLToPath(new URL("../src/bin.ts", import.meta.url))
const tsx = import.meta.resolve("tsx")

const servers: Array<ScriptedServer> = []
afterEach(async () => {
  await closeAll()
  for (const server of servers.splice(0)) await server.close()
})

const isTitle = (request: RecordedRequest) => JSON.stringify(request.body).includes("Write a title for this")

/** A scripted model that answers every prompt with `answer` (and titles with a title). */
const model = async (answer: string) => {
  const server = await startScriptedServer((request) =>
    isTitle(request) ? { steps: [{ text: "A title" }] } : { steps: [{ text: answer }] }
  )
  servers.push(server)
  return server
}

/** README option 3's block, pointing at `url`. */
const providerBlock = (url: string) => ({
  model: "local/qwen3-coder",
  provider: { local: { type: "openai-compatible", baseURL: url } }
})

const count = (text: string, part: string) => text.split(part).length - 1

describe("configuring a model (end to end)", () => {
  it("a provider block in an untrusted project's lathe.json fails with one message naming the ignored keys and `lathe trust`", {
    timeout: 60_000
  }, async () => {
    const server = await model("should not be asked")
    const box = sandbox()
    const file = join(box.project, "lathe.json")
    writeFileSync(file, JSON.stringify(providerBlock(server.url)))
    const run = await runLathe(["run", "hi"], { cwd: box.project, env: box.env })
    assert.strictEqual(run.code, 1, run.stderr)
    const lines = run.stderr.split("\n").filter((line) => line.startsWith("lathe:"))
    assert.lengthOf(lines, 1, run.stderr)
    assert.include(run.stderr, "model, provider.local.type, provider.local.baseURL")
    assert.include(run.stderr, "lathe.json sets")
    assert.include(run.stderr, "this folder is not trusted")
    assert.strictEqual(count(run.stderr, "`lathe trust`"), 1, run.stderr)
    // Not the generic guide, not "set the baseURL" they did set, not the separate notice.
    assert.notInclude(run.stderr, "Lathe needs one model")
    assert.notInclude(run.stderr, "has no baseURL")
    assert.notInclude(run.stderr, "Ignored from untrusted")
    assert.lengthOf(server.requests, 0)

    // What the message says works: after `lathe trust` the same file runs.
    const trust = await runLathe(["trust"], { cwd: box.project, env: box.env })
    assert.strictEqual(trust.code, 0, trust.stderr)
    const trusted = await runLathe(["run", "hi"], { cwd: box.project, env: box.env })
    assert.strictEqual(trusted.code, 0, trusted.stderr)
    assert.include(trusted.stdout, "should not be asked")
  })

  it("the untrusted project's notice still shows, once, when the run goes on with the person's own model", {
    timeout: 60_000
  }, async () => {
    const own = await model("answered by your own model")
    const box = sandbox()
    mkdirSync(join(box.dir, "config", "lathe"), { recursive: true })
    writeFileSync(
      join(box.dir, "config", "lathe", "lathe.json"),
      JSON.stringify({ model: "mine/m", provider: { mine: { type: "openai-compatible", baseURL: own.url } } })
    )
    writeFileSync(join(box.project, "lathe.json"), JSON.stringify(providerBlock("http://127.0.0.1:9/v1")))
    const run = await runLathe(["run", "hi"], { cwd: box.project, env: box.env })
    assert.strictEqual(run.code, 0, run.stderr)
    assert.include(run.stdout, "answered by your own model")
    assert.strictEqual(count(run.stderr, "Ignored from untrusted"), 1, run.stderr)
  })

  it("the same provider block in the person's own config works in a fresh untrusted folder", {
    timeout: 60_000
  }, async () => {
    const server = await model("hello from the local model")
    const box = sandbox()
    mkdirSync(join(box.dir, "config", "lathe"), { recursive: true })
    writeFileSync(join(box.dir, "config", "lathe", "lathe.json"), JSON.stringify(providerBlock(server.url)))
    const run = await runLathe(["run", "hi"], { cwd: box.project, env: box.env })
    assert.strictEqual(run.code, 0, run.stderr)
    assert.include(run.stdout, "hello from the local model")
    assert.notInclude(run.stderr, "Ignored")
    assert.isAbove(server.requests.length, 0)
  })

  it("with no model, the UI keeps a typed prompt; /connect writes the person's config and the prompt is answered", {
    timeout: 90_000
  }, async () => {
    const server = await model("connected and answering")
    const box = sandbox()
    const term = spawnTerminal({
      command: process.execPath,
      args: ["--conditions=@lathe/source", "--import", tsx, bin],
      cwd: box.project,
      env: box.env,
      cols: 120,
      rows: 40
    })
    await term.waitFor("no model", 30_000)
    await term.waitFor("/connect")
    await term.type("what is two plus two")
    term.press("enter")
    await term.waitFor("queued: what is two plus two")
    assert.lengthOf(server.requests, 0)

    await term.type("/connect")
    await term.waitFor("Set up a model provider")
    term.press("enter")
    await term.waitFor("Which provider?")
    await term.type("compat")
    await term.waitFor("openai-compatible")
    term.press("enter")
    await term.waitFor("Base URL of the server")
    await term.type(server.url)
    term.press("enter")
    await term.waitFor("Model id the server serves")
    await term.type("test-model")
    term.press("enter")
    await term.waitFor("API key or the variable")
    term.press("enter")

    await term.waitFor("connected and answering", 30_000)
    await term.waitFor("local/test-model")
    const file = join(box.dir, "config", "lathe", "lathe.json")
    assert.isTrue(existsSync(file))
    assert.deepStrictEqual(parse(readFileSync(file, "utf8")), {
      model: "local/test-model",
      provider: { local: { type: "openai-compatible", baseURL: server.url, models: { "test-model": {} } } }
    })
    assert.isFalse(existsSync(join(box.project, "lathe.json")), "never the project's file")
    const asked = server.requests.filter((r) => !isTitle(r)).map((r) => JSON.stringify(r.body))
    assert.isTrue(asked.some((body) => body.includes("what is two plus two")))
    assert.strictEqual(await quit(term), 0)
  })
})
