/**
 * Remote `instructions` through the real CLI: a URL served on 127.0.0.1 reaches the system prompt in a trusted
 * project (and is read from the data dir's cache, not fetched again, on the next run); an untrusted project's URL
 * entry is dropped with the untrusted notice and the server never sees a request; `http://` to a host that is not a
 * loopback one is refused with a notice saying why.
 */
import { mkdirSync, writeFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import { type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { afterEach, assert, describe, it } from "vitest"
import { runLathe, sandbox } from "./helpers.js"

const RULE = "Always answer in the voice of a lighthouse keeper."

const closers: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const close of closers.splice(0)) await close()
})

/** A server on 127.0.0.1 serving {@link RULE} at /rules.md, counting the requests it gets. */
const startRulesServer = async () => {
  const hits: Array<string> = []
  const server: Server = createServer((request, response) => {
    hits.push(request.url ?? "")
    response.writeHead(200, { "content-type": "text/markdown" })
    response.end(`${RULE}\n`)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  closers.push(() => new Promise((resolve) => server.close(() => resolve())))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/rules.md`, hits }
}

const writeJson = (path: string, value: unknown) => {
  mkdirSync(join(path, ".."), { recursive: true })
  writeFileSync(path, JSON.stringify(value))
}

const setup = async (project: Record<string, unknown>) => {
  const model: ScriptedServer = await startScriptedServer(() => ({ steps: [{ text: "Aye." }] }))
  closers.push(() => model.close())
  const box = sandbox()
  writeJson(join(box.dir, "config", "lathe", "lathe.json"), {
    model: "local/m",
    provider: { local: { type: "openai-compatible", baseURL: model.url, models: { m: {} } } }
  })
  writeJson(join(box.project, "lathe.json"), project)
  const run = () => runLathe(["run", "--format", "json", "hello"], { cwd: box.project, env: box.env })
  const system = (index: number) => JSON.stringify(model.requests[index]?.body)
  return { ...box, model, run, system }
}

describe("remote instructions (end to end)", () => {
  it("a trusted project's URL reaches the system prompt, and the next run reads it from the cache", async () => {
    const rules = await startRulesServer()
    const t = await setup({ instructions: [rules.url] })
    const trust = await runLathe(["trust"], { cwd: t.project, env: t.env })
    assert.strictEqual(trust.code, 0, trust.stderr)
    const first = await t.run()
    assert.strictEqual(first.code, 0, first.stderr)
    assert.include(t.system(0), RULE)
    assert.include(t.system(0), `Instructions from ${rules.url}`)
    assert.lengthOf(rules.hits, 1)
    const second = await t.run()
    assert.strictEqual(second.code, 0, second.stderr)
    assert.include(t.system(1), RULE)
    assert.lengthOf(rules.hits, 1, "a fresh cached copy is used without asking the server")
  }, 60_000)

  it("an untrusted project's URL is dropped with the untrusted notice, and never fetched", async () => {
    const rules = await startRulesServer()
    const t = await setup({ instructions: [rules.url] })
    const result = await t.run()
    assert.strictEqual(result.code, 0, result.stderr)
    assert.notInclude(t.system(0), RULE)
    assert.lengthOf(rules.hits, 0)
    assert.match(
      result.stderr,
      /Ignored from untrusted .*lathe\.json: instructions "http:\/\/127\.0\.0\.1:\d+\/rules\.md"/
    )
    assert.include(result.stderr, "Run `lathe trust` in")
  }, 60_000)

  it("http:// to a host that is not a loopback one is refused, with a notice saying why", async () => {
    const t = await setup({})
    writeJson(join(t.dir, "config", "lathe", "lathe.json"), {
      model: "local/m",
      provider: { local: { type: "openai-compatible", baseURL: t.model.url, models: { m: {} } } },
      instructions: ["http://example.com/rules.md"]
    })
    const result = await t.run()
    assert.strictEqual(result.code, 0, result.stderr)
    // In json format a notice is an event on stdout (text format prints it on stderr).
    const notices = result.events.flatMap((event) => (event.type === "notice" ? [event.message] : []))
    assert.include(
      notices,
      "Instructions http://example.com/rules.md refused: http:// is allowed only for loopback hosts (127.0.0.1, ::1, localhost), not example.com; use https://."
    )
    assert.notInclude(t.system(0), "example.com/rules.md")
  }, 60_000)
})
