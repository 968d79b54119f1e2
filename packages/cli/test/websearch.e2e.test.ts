/**
 * Web search end to end: the real CLI with the built-in `@lathe/websearch` plugin, a scripted model on 127.0.0.1 and a
 * local server speaking SearxNG's JSON API. No backend: no `websearch` or `codesearch` tool is offered. A backend in
 * the person's config: `websearch` is offered and asks its permission (refused without a terminal, nothing sent);
 * allowed in config, the search runs and its results reach the model. An untrusted project cannot point searches at
 * a server of its choosing.
 */
import { mkdirSync, writeFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import { type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { afterEach, assert, describe, it } from "vitest"
import { runLathe, sandbox } from "./helpers.js"

let model: ScriptedServer | undefined
let searx: { server: Server; queries: Array<string>; url: string } | undefined
afterEach(async () => {
  await model?.close()
  model = undefined
  if (searx) {
    searx.server.closeAllConnections()
    await new Promise<void>((resolve) => searx?.server.close(() => resolve()))
  }
  searx = undefined
})

/** A SearxNG instance on 127.0.0.1: `GET /search?q=…&format=json` answers one result and records the query. */
const startSearx = async () => {
  const queries: Array<string> = []
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1")
    queries.push(url.searchParams.get("q") ?? "")
    res.writeHead(200, { "content-type": "application/json" })
    res.end(
      JSON.stringify({
        results: [{ title: "Zod 4.6 release notes", url: "https://zod.dev/v4/changelog", content: "Adds z.codec." }]
      })
    )
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  searx = { server, queries, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }
  return searx
}

const setup = async (script: Parameters<typeof startScriptedServer>[0], config?: Record<string, unknown>) => {
  model = await startScriptedServer(script)
  const box = sandbox()
  if (config !== undefined) {
    const dir = join(box.env.XDG_CONFIG_HOME as string, "lathe")
    mkdirSync(dir, { recursive: true })
    writeFileSync(join(dir, "lathe.json"), JSON.stringify(config))
  }
  const env = { ...box.env, LATHE_BASE_URL: model.url, LATHE_MODEL: "test-model" }
  return { ...box, env, model }
}

const offered = (server: ScriptedServer, index = 0): Array<string> => {
  const body = server.requests[index]?.body as { tools?: Array<{ function?: { name?: string } }> } | undefined
  return (body?.tools ?? []).map((tool) => tool.function?.name ?? "")
}

const searchCall = { steps: [{ tool: "websearch", input: { query: "zod 4.6 changes" } }] }

describe("websearch and codesearch (end to end)", () => {
  it("no backend: neither tool is offered", async () => {
    const { project, env, model } = await setup([{ steps: [{ text: "No search here." }] }])
    const run = await runLathe(["run", "--format", "json", "what changed in zod?"], { cwd: project, env })
    assert.strictEqual(run.code, 0, run.stderr)
    const tools = offered(model)
    assert.include(tools, "read")
    assert.notInclude(tools, "websearch")
    assert.notInclude(tools, "codesearch")
  })

  it("a SearxNG backend offers websearch, which asks: refused without a terminal, the instance gets nothing", async () => {
    const instance = await startSearx()
    const { project, env, model } = await setup([searchCall, { steps: [{ text: "Could not search." }] }], {
      websearch: { backend: "searxng", url: instance.url }
    })
    const run = await runLathe(["run", "--format", "json", "what changed in zod?"], { cwd: project, env })
    assert.include(offered(model), "websearch")
    assert.deepStrictEqual(instance.queries, [])
    const failed = run.events.find((event) => event.type === "tool.error")
    assert.include(JSON.stringify(failed), "rejected this websearch request", run.stdout)
    assert.include(run.stderr, "rejected a websearch ask (zod 4.6 changes): no terminal to ask you")
  })

  it("allowed in config: the search runs and the next request carries its results", async () => {
    const instance = await startSearx()
    const { project, env, model } = await setup([searchCall, { steps: [{ text: "z.codec is new." }] }], {
      websearch: { backend: "searxng", url: instance.url },
      permission: { websearch: "allow" }
    })
    const run = await runLathe(["run", "--format", "json", "what changed in zod?"], { cwd: project, env })
    assert.strictEqual(run.code, 0, run.stderr)
    assert.deepStrictEqual(instance.queries, ["zod 4.6 changes"])
    const second = JSON.stringify(model.requests[1]?.body)
    assert.include(second, "Zod 4.6 release notes")
    assert.include(second, "https://zod.dev/v4/changelog")
    assert.include(second, "Adds z.codec.")
  })

  it("an untrusted project's websearch config cannot send searches to its own server", async () => {
    const instance = await startSearx()
    const { project, env, model } = await setup([searchCall, { steps: [{ text: "done" }] }])
    writeFileSync(
      join(project, "lathe.json"),
      JSON.stringify({ websearch: { backend: "searxng", url: instance.url }, permission: { websearch: "allow" } })
    )
    const run = await runLathe(["run", "--format", "json", "search please"], { cwd: project, env })
    // The notice names what the project asked for and did not get.
    assert.include(run.stderr, "websearch.url")
    assert.notInclude(offered(model), "websearch")
    assert.deepStrictEqual(instance.queries, [])
  })
})
