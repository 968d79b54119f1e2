import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { afterEach, assert, describe, it } from "vitest"
import { runLathe, sandbox } from "./helpers.js"

// Plugins written by an outside author, in a project outside the monorepo with no node_modules of its own:
// `@lathe/core` and `zod` resolve to the CLI's own copies.
let server: ScriptedServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

const shout = `import { definePlugin, Tool } from "@lathe/plugin"
import { z } from "zod"

export default definePlugin({
  name: "shout",
  setup: async () => ({
    "system.transform": async (_input, output) => {
      output.system.push("SHOUT-PLUGIN-ACTIVE")
    },
    tools: [
      Tool.define("shout", {
        description: "Upper-cases a text",
        parameters: z.object({ text: z.string() }),
        mutates: false,
        execute: async ({ text }) => ({ title: "shout", output: text.toUpperCase() + "!" })
      })
    ]
  })
})
`

const hint = `import { definePlugin, type PluginContext } from "@lathe/plugin"

const line = (ctx: PluginContext): string => \`hint: \${String(ctx.options.word)}\`

export default definePlugin(async (ctx) => ({
  "system.transform": async (_input, output) => {
    output.system.push(line(ctx))
  }
}))
`

const project = async () => {
  server = await startScriptedServer([
    { steps: [{ tool: "shout", input: { text: "hi" } }] },
    { steps: [{ text: "Done." }] }
  ])
  const box = sandbox()
  mkdirSync(join(box.project, ".lathe", "plugins"), { recursive: true })
  mkdirSync(join(box.project, "plugins"), { recursive: true })
  writeFileSync(join(box.project, ".lathe", "plugins", "shout.mjs"), shout)
  writeFileSync(join(box.project, "plugins", "hint.ts"), hint)
  writeFileSync(
    join(box.project, "lathe.json"),
    JSON.stringify({ plugin: [["./plugins/hint.ts", { word: "banana" }]] })
  )
  return { ...box, env: { ...box.env, LATHE_BASE_URL: server.url, LATHE_MODEL: "m" }, server }
}

const systemOf = (body: unknown): string =>
  JSON.stringify((body as { messages?: ReadonlyArray<unknown> } | undefined)?.messages?.[0])

describe("outside plugins", () => {
  it("a trusted project's .mjs and .ts plugins add a tool and system text that reach the model", async () => {
    const { project: cwd, env, server } = await project()
    assert.strictEqual((await runLathe(["trust"], { cwd, env })).code, 0)
    const run = await runLathe(["run", "--format", "json", "shout hi"], { cwd, env })
    assert.strictEqual(run.code, 0, run.stderr)
    const system = JSON.stringify((server.requests[0]?.body as { messages?: unknown } | undefined)?.messages)
    assert.include(system, "SHOUT-PLUGIN-ACTIVE")
    assert.include(system, "hint: banana")
    assert.include(JSON.stringify(server.requests[1]?.body), "HI!")
    const list = await runLathe(["plugin", "list"], { cwd, env })
    assert.strictEqual(list.code, 0, list.stderr)
    assert.match(list.stdout, /shout {2}\(.*shout\.mjs\)\n {2}hooks: {2}system\.transform\n {2}tools: {2}shout/)
    assert.include(list.stdout, "hint  (./plugins/hint.ts)")
  })

  it("an untrusted project's plugins are not loaded, with a notice saying how to trust", async () => {
    const { project: cwd, env, server } = await project()
    server.requests.length
    const run = await runLathe(["run", "--format", "json", "hello"], { cwd, env })
    assert.include(run.stderr, "not trusted")
    assert.include(run.stderr, "lathe trust")
    assert.notInclude(systemOf(server.requests[0]?.body), "SHOUT-PLUGIN-ACTIVE")
    assert.notInclude(systemOf(server.requests[0]?.body), "hint: banana")
  })

  it("a broken plugin and a missing package are reported with a fix; the session completes", async () => {
    server = await startScriptedServer([{ steps: [{ text: "Fine." }] }])
    const box = sandbox()
    const globalPlugins = join(box.dir, "config", "lathe", "plugins")
    mkdirSync(globalPlugins, { recursive: true })
    writeFileSync(join(globalPlugins, "broken.mjs"), "export default {\n  setup: async () => ({ oops: ) })\n}\n")
    writeFileSync(join(box.dir, "config", "lathe", "lathe.json"), JSON.stringify({ plugin: ["@acme/not-installed"] }))
    const env = { ...box.env, LATHE_BASE_URL: server.url, LATHE_MODEL: "m" }
    const run = await runLathe(["run", "--format", "json", "hello"], { cwd: box.project, env })
    assert.strictEqual(run.code, 0, run.stderr)
    // A plugin the global config names installs beside that config, never in the project.
    assert.include(run.stderr, `cd ${join(box.dir, "config", "lathe")} && npm i @acme/not-installed`)
    assert.match(run.stderr, /broken\.mjs:2/)
    const errors = run.events.filter((e) => e.type === "plugin.error")
    assert.strictEqual(errors.length, 2)
    const list = await runLathe(["plugin", "list"], { cwd: box.project, env })
    assert.strictEqual(list.code, 1)
    assert.include(list.stdout, '✗ Plugin "@acme/not-installed"')
  })

  it("a built-in plugin can be turned off in config", async () => {
    const box = sandbox()
    mkdirSync(join(box.dir, "config", "lathe"), { recursive: true })
    const before = await runLathe(["plugin", "list"], { cwd: box.project, env: box.env })
    assert.include(before.stdout, "@lathe/tools  (@lathe/tools)")
    writeFileSync(
      join(box.dir, "config", "lathe", "lathe.json"),
      JSON.stringify({ disabled_plugins: ["@lathe/tools"] })
    )
    const after = await runLathe(["plugin", "list"], { cwd: box.project, env: box.env })
    assert.strictEqual(after.code, 0, after.stderr)
    assert.notInclude(after.stdout, "@lathe/tools")
  })

  it("lathe plugin init scaffolds a package with a plugin, a test and a README", async () => {
    const box = sandbox()
    const run = await runLathe(["plugin", "init", "lathe-plugin-demo"], { cwd: box.dir, env: box.env })
    assert.strictEqual(run.code, 0, run.stderr)
    assert.include(run.stdout, "src/index.ts, test/index.test.ts, README.md")
    const again = await runLathe(["plugin", "init", "lathe-plugin-demo"], { cwd: box.dir, env: box.env })
    assert.strictEqual(again.code, 1)
    // The scaffold's plugin loads as it is: reference it from a trusted project and list what it adds.
    writeFileSync(
      join(box.project, "lathe.json"),
      JSON.stringify({ plugin: [join(box.dir, "lathe-plugin-demo", "src", "index.ts")] })
    )
    assert.strictEqual((await runLathe(["trust"], { cwd: box.project, env: box.env })).code, 0)
    const list = await runLathe(["plugin", "list"], { cwd: box.project, env: box.env })
    assert.strictEqual(list.code, 0, list.stdout + list.stderr)
    assert.match(list.stdout, /lathe-plugin-demo .*\n {2}hooks: {2}system\.transform\n {2}tools: {2}word_count/)
  })
})
