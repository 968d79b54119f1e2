import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { resolveAgents } from "@lathe/core"
import { Bus, Config, Paths, Plugins, SessionStore, testLayer } from "@lathe/core/testing"
import { Effect, Layer } from "effect"
import agentsPlugin, { PLAN_FILES } from "../src/index.js"

const project = () => {
  const root = mkdtempSync(join(tmpdir(), "lathe-agents-plugin-"))
  const write = (path: string, text: string) => {
    mkdirSync(dirname(join(root, path)), { recursive: true })
    writeFileSync(join(root, path), text)
  }
  return { root, write }
}

/** The host as `testLayer` builds it, but with an untrusted project config. */
const untrustedLayer = (root: string) => {
  const untrusted = Layer.effect(
    Config,
    Effect.gen(function* () {
      return Config.of({ ...(yield* Config), trusted: false })
    })
  ).pipe(Layer.provide(Config.layerTest({})))
  return Plugins.layer([agentsPlugin]).pipe(
    Layer.provideMerge(Layer.mergeAll(Paths.layerTest(root), untrusted, Bus.layer, SessionStore.memory))
  )
}

describe("the @lathe/agents plugin in the real host", () => {
  it.effect("contributes the built-ins, then the markdown agents, which may replace a built-in", () => {
    const { root, write } = project()
    // Paths.layerTest puts the config dir at <root>/.lathe-config.
    write(".lathe-config/agents/docs.md", "---\ndescription: Writes docs\nmode: subagent\n---\nYou write docs.")
    write(".lathe/agents/plan.md", "---\ndescription: Our own planner\n---\nPlan our way.")
    write(".lathe/agents/broken.md", "---\nmode: sometimes\n---\n")
    return Effect.gen(function* () {
      const plugins = yield* Plugins
      assert.deepStrictEqual(plugins.failed, [])
      assert.deepStrictEqual(plugins.list, [
        {
          name: "@lathe/agents",
          source: "@lathe/agents",
          tools: ["task"],
          agents: ["build", "plan", "explore", "general", "summary", "docs"],
          hooks: []
        }
      ])
      const byName = new Map(plugins.agents.map((agent) => [agent.name, agent]))
      assert.deepStrictEqual([...byName.keys()], ["build", "plan", "explore", "general", "summary", "docs"])
      assert.strictEqual(byName.get("plan")?.description, "Our own planner")
      assert.strictEqual(byName.get("plan")?.prompt, "Plan our way.")
      assert.deepStrictEqual(byName.get("plan")?.permission, [])
      assert.strictEqual(byName.get("docs")?.mode, "subagent")
      assert.isFalse(byName.has("broken"))
    }).pipe(Effect.provide(testLayer({ root, plugins: [agentsPlugin] })))
  })

  it.effect("resolves with core's agents and config overrides: built-ins replace core's build, config adjusts", () => {
    const { root } = project()
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
      assert.deepStrictEqual(build?.permission, [])
      assert.strictEqual(agents.get("explore")?.model, "local/small")
      assert.deepStrictEqual(agents.get("summary")?.tools, { "*": false })
      assert.deepStrictEqual(
        agents.get("plan")?.permission.map((r) => `${r.permission} ${r.pattern} ${r.action}`),
        ["edit * deny", "edit .lathe/plans allow", `edit ${PLAN_FILES} allow`, "bash * ask"]
      )
    }).pipe(Effect.provide(testLayer({ root, plugins: [agentsPlugin] })))
  })

  it.effect("loads only the person's own agent files when the project is not trusted", () => {
    const { root, write } = project()
    write(".lathe-config/agents/docs.md", "Docs prompt.")
    write(".lathe/agents/plan.md", "---\npermission: allow\n---\nDo anything.")
    write(".claude/agents/sneaky.md", "Sneaky.")
    return Effect.gen(function* () {
      const plugins = yield* Plugins
      assert.deepStrictEqual(
        plugins.agents.map((agent) => agent.name),
        ["build", "plan", "explore", "general", "summary", "docs"]
      )
      assert.deepStrictEqual(plugins.agents.find((agent) => agent.name === "plan")?.permission.length, 4)
    }).pipe(Effect.provide(untrustedLayer(root)))
  })
})
