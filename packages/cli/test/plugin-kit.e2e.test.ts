import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { afterEach, assert, describe, it } from "vitest"
import { runLathe, sandbox } from "./helpers.js"

// A plugin written against the author kit, in a folder with no node_modules: `@lathe/plugin` resolves to the CLI's own
// copy, as `@lathe/core` does, so its tool and hook are the host's kind.
let server: ScriptedServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

const marker = `import { definePlugin, Tool } from "@lathe/plugin"
import { z } from "zod"

export default definePlugin({
  name: "marker",
  setup: async () => ({
    tools: [
      Tool.define("mark", {
        description: "Marks a text",
        parameters: z.object({ text: z.string() }),
        mutates: false,
        execute: async ({ text }) => ({ title: "mark", output: "<" + text + ">" })
      })
    ],
    "tool.after": async (input, output) => {
      if (input.tool === "mark") output.output += " (seen by the kit's hook)"
    }
  })
})
`

describe("@lathe/plugin in a plugin file", () => {
  it("loads from the config dir's plugins/ with no node_modules; its tool and tool.after hook reach the model", async () => {
    server = await startScriptedServer([
      { steps: [{ tool: "mark", input: { text: "hi" } }] },
      { steps: [{ text: "Done." }] }
    ])
    const box = sandbox()
    const plugins = join(box.env.XDG_CONFIG_HOME ?? "", "lathe", "plugins")
    mkdirSync(plugins, { recursive: true })
    writeFileSync(join(plugins, "marker.mjs"), marker)
    const env = { ...box.env, LATHE_BASE_URL: server.url, LATHE_MODEL: "m" }

    const run = await runLathe(["run", "mark hi"], { cwd: box.project, env })
    assert.strictEqual(run.code, 0, run.stderr)
    assert.include(JSON.stringify(server.requests[0]?.body), '"mark"')
    assert.include(JSON.stringify(server.requests[1]?.body), "<hi> (seen by the kit's hook)")
  })
})
