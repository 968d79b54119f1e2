import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import type { PluginConfig } from "@lathe/plugin"
import { pluginContext } from "@lathe/plugin/testing"
import plugin from "../src/index.js"
import { harness, run, runError, tempDir } from "./helpers.js"

/**
 * The plugin set up over `config` (the merged config as the host gives it: core's schema turns `"sandbox": "off"`
 * into `{ mode: "off" }`, see its config tests), with its warnings collected.
 */
const setup = async (root: string, config: PluginConfig, truncationDir?: string) => {
  const warnings: Array<string> = []
  const ctx = pluginContext(root, {
    config,
    ...(truncationDir === undefined ? {} : { truncationDir }),
    log: { info: () => {}, warn: (message) => warnings.push(message), error: () => {} }
  })
  const bash = (await plugin.setup(ctx)).tools?.find((tool) => tool.id === "bash")
  if (!bash) throw new Error("the plugin has no bash tool")
  return { bash, warnings }
}

describe("the plugin's bash takes the config's sandbox", () => {
  it('"off" runs commands outside any sandbox', async () => {
    const h = harness()
    const { bash } = await setup(h.root, { sandbox: { mode: "off" } })
    const out = await run(bash, { command: "echo hi", description: "Hi" }, h.ctx())
    expect(out.metadata).toMatchObject({ sandbox: "off", exitCode: 0 })
  })

  it.runIf(process.platform === "linux")('"read-only" keeps the project read-only in bubblewrap', async () => {
    const h = harness()
    h.mode = (request) => (request.permission === "sandbox_escape" ? "reject" : "allow")
    const { bash, warnings } = await setup(h.root, { sandbox: { mode: "read-only" } })
    const error = await runError(bash, { command: "touch x.txt", description: "Touch" }, h.ctx())
    expect(error.message).toContain("The command failed inside the bubblewrap sandbox (read-only")
    expect(h.asks.map((a) => a.permission)).toEqual(["bash", "sandbox_escape"])
    expect(warnings).toEqual([])
  })

  it.runIf(process.platform === "linux")(
    "workspace-write leaves the host's truncation dir (ctx.truncationDir) writable",
    async () => {
      const h = harness()
      h.mode = (request) => (request.permission === "sandbox_escape" ? "reject" : "allow")
      const truncation = join(tempDir("lathe-plugin-trunc-"), "tool-output")
      const { bash } = await setup(h.root, { sandbox: { mode: "workspace-write" } }, truncation)
      const error = await runError(bash, { command: "touch /usr/lathe-x", description: "Touch" }, h.ctx())
      expect(error.message).toContain("The command failed inside the bubblewrap sandbox (workspace-write")
      expect(error.message).toContain(truncation)
    }
  )
})
