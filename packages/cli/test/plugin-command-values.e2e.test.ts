import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { afterEach, assert, describe, it } from "vitest"
import { runLathe, sandbox } from "./helpers.js"

// A plugin in plain JavaScript, as an author's first try writes it: `run` returns a string, not a Promise; another
// command answers with something that is not a prompt at all.
let server: ScriptedServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

const counter = `export default {
  [Symbol.for("@lathe/core/Plugin")]: true,
  name: "counter",
  setup: () => ({
    commands: [
      { name: "wc", description: "Counts words", run: (args) => "Count these words: " + args.join(" ") },
      { name: "broken", description: "Answers with a number", run: () => 42 }
    ]
  })
}
`

/** A sandbox whose user config dir holds the counter plugin, and a model that answers "ok". */
const setup = async () => {
  server = await startScriptedServer((request) => ({
    steps: [{ text: JSON.stringify(request.body).includes("Write a title") ? "A title" : "Counted." }]
  }))
  const box = sandbox()
  const plugins = join(box.env.XDG_CONFIG_HOME ?? "", "lathe", "plugins")
  mkdirSync(plugins, { recursive: true })
  writeFileSync(join(plugins, "counter.mjs"), counter)
  return { ...box, env: { ...box.env, LATHE_BASE_URL: server.url, LATHE_MODEL: "m" }, server }
}

describe("plugin commands answering with a value, not a Promise (lathe run --command)", () => {
  it("a command whose run returns a plain string sends it as the prompt", { timeout: 60_000 }, async () => {
    const { project, env, server } = await setup()
    const run = await runLathe(["run", "--command", "wc", "one", "two", "three"], { cwd: project, env })
    assert.strictEqual(run.code, 0, run.stderr)
    assert.notInclude(run.stderr, "is not a function")
    assert.include(JSON.stringify(server.requests[0]?.body), "Count these words: one two three")
    assert.include(run.stdout, "Counted.")
  })

  it("a command that answers with something else is a plugin.error naming the plugin and the command", {
    timeout: 60_000
  }, async () => {
    const { project, env, server } = await setup()
    const run = await runLathe(["run", "--format", "json", "--command", "broken"], { cwd: project, env })
    assert.notStrictEqual(run.code, 0)
    assert.notInclude(run.stderr, "is not a function")
    const errors = run.stdout
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as { type?: string; plugin?: string; hook?: string; message?: string })
      .filter((event) => event.type === "plugin.error")
    assert.deepInclude(errors[0] ?? {}, { plugin: "counter", hook: "command /broken" })
    assert.include(errors[0]?.message ?? "", "it returned a number (42), not a prompt (text, or a list of parts)")
    assert.include(run.stderr, 'Plugin "counter" failed in command /broken')
    assert.strictEqual(server.requests.length, 0, "nothing was sent to the model")
  })
})
