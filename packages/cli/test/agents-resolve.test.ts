import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import agentsPlugin, { PLAN_FILES } from "@lathe/agents"
import { resolveAgents } from "@lathe/core"
import { Plugins, testLayer } from "@lathe/core/testing"
import { Effect } from "effect"

// @lathe/agents' agents as core's host resolves them with config: a test of the two together, so it lives with the
// CLI, the one package that knows both (a feature package's tests see the kit alone).
describe("the @lathe/agents plugin in core's host", () => {
  it.effect("resolves with core's agents and config overrides: built-ins replace core's build, config adjusts", () => {
    const root = mkdtempSync(join(tmpdir(), "lathe-agents-resolve-"))
    return Effect.gen(function* () {
      const plugins = yield* Plugins
      const agents = resolveAgents(plugins.agents, {
        general: { disable: true, permission: [] },
        explore: { model: "local/small", permission: [] }
      })
      assert.deepStrictEqual(
        [...agents.values()].map((a) => `${a.name}:${a.mode}${a.hidden ? ":hidden" : ""}`),
        [
          "build:primary",
          "compaction:primary:hidden",
          "title:primary:hidden",
          "plan:primary",
          "explore:subagent",
          "summary:primary:hidden"
        ]
      )
      const build = agents.get("build")
      assert.strictEqual(build?.source, "@lathe/agents")
      assert.include(build?.prompt ?? "", "You are the build agent")
      // build's own rule offers `plan_enter` (the defaults deny it), the ask only a person answers.
      assert.deepStrictEqual(
        build?.permission.map((r) => `${r.permission} ${r.pattern} ${r.action}`),
        ["plan_enter * ask"]
      )
      assert.strictEqual(agents.get("explore")?.model, "local/small")
      assert.deepStrictEqual(agents.get("summary")?.tools, { "*": false })
      assert.deepStrictEqual(
        agents.get("plan")?.permission.map((r) => `${r.permission} ${r.pattern} ${r.action}`),
        ["edit * deny", "edit .lathe/plans allow", `edit ${PLAN_FILES} allow`, "bash * ask"]
      )
    }).pipe(Effect.provide(testLayer({ root, plugins: [agentsPlugin] })))
  })
})
