import { describe, expect, it } from "@effect/vitest"
import { Config, type ConfigTestInput } from "@lathe/core"
import { pluginContext } from "@lathe/plugin/testing"
import { Effect } from "effect"
import plugin from "../src/index.js"
import { harness, run, runError } from "./helpers.js"

/** The merged config the host would give the plugin for `input` (validated and normalised as a lathe.json is). */
const hostConfig = (input: ConfigTestInput) =>
  Effect.runSync(
    Effect.gen(function* () {
      return (yield* Config).info
    }).pipe(Effect.provide(Config.layerTest(input)))
  )

/** The plugin set up over a real config built from `input`, with its warnings collected. */
const setup = async (root: string, input: ConfigTestInput) => {
  const warnings: Array<string> = []
  const ctx = pluginContext(root, {
    config: hostConfig(input),
    log: { info: () => {}, warn: (message) => warnings.push(message), error: () => {} }
  })
  const bash = (await plugin.setup(ctx)).tools?.find((tool) => tool.id === "bash")
  if (!bash) throw new Error("the plugin has no bash tool")
  return { bash, warnings }
}

describe("the plugin's bash takes the config's sandbox", () => {
  it('"off" runs commands outside any sandbox', async () => {
    const h = harness()
    const { bash } = await setup(h.root, { sandbox: "off" })
    const out = await run(bash, { command: "echo hi", description: "Hi" }, h.ctx())
    expect(out.metadata).toMatchObject({ sandbox: "off", exitCode: 0 })
  })

  it.runIf(process.platform === "linux")('"read-only" keeps the project read-only in bubblewrap', async () => {
    const h = harness()
    h.mode = (request) => (request.permission === "sandbox_escape" ? "reject" : "allow")
    const { bash, warnings } = await setup(h.root, { sandbox: "read-only" })
    const error = await runError(bash, { command: "touch x.txt", description: "Touch" }, h.ctx())
    expect(error.message).toContain("The command failed inside the bubblewrap sandbox (read-only")
    expect(h.asks.map((a) => a.permission)).toEqual(["bash", "sandbox_escape"])
    expect(warnings).toEqual([])
  })
})
