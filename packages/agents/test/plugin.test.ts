import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { defineAgent } from "@lathe/plugin"
import { pluginContext } from "@lathe/plugin/testing"
import agentsPlugin from "../src/index.js"

const project = () => {
  const root = mkdtempSync(join(tmpdir(), "lathe-agents-plugin-"))
  const write = (path: string, text: string) => {
    mkdirSync(dirname(join(root, path)), { recursive: true })
    writeFileSync(join(root, path), text)
  }
  return { root, write }
}

/** The plugin set up in `root` (its config dir `<root>/.lathe-config`), and what it contributes as the host sees it. */
const setUp = async (root: string, trusted = true) => {
  const warnings: Array<string> = []
  const log = { info: () => {}, warn: (line: string) => warnings.push(line), error: () => {} }
  // A home of its own: a project that is the home folder reads its .claude/agents as the person's.
  const ctx = pluginContext(root, { configDir: join(root, ".lathe-config"), home: join(root, ".home"), trusted, log })
  const hooks = await agentsPlugin.setup(ctx)
  const agents = (hooks.agents ?? []).map((agent) => defineAgent(agent, "@lathe/agents"))
  return { hooks, agents, warnings }
}

describe("the @lathe/agents plugin", () => {
  it("contributes the built-ins, then the markdown agents, which may replace a built-in", async () => {
    const { root, write } = project()
    write(".lathe-config/agents/docs.md", "---\ndescription: Writes docs\nmode: subagent\n---\nYou write docs.")
    write(".lathe/agents/plan.md", "---\ndescription: Our own planner\n---\nPlan our way.")
    write(".lathe/agents/broken.md", "---\nmode: sometimes\n---\n")
    const { hooks, agents, warnings } = await setUp(root)
    assert.deepStrictEqual(
      (hooks.tools ?? []).map((tool) => tool.id),
      ["task", "plan_exit", "plan_enter"]
    )
    assert.deepStrictEqual(Object.keys(hooks).sort(), ["agents", "tools"])
    // The broken file is reported, naming the field at fault, and skipped.
    assert.lengthOf(warnings, 1)
    assert.include(warnings[0], "broken.md")
    {
      const byName = new Map(agents.map((agent) => [agent.name, agent]))
      assert.deepStrictEqual([...byName.keys()], ["build", "plan", "explore", "general", "summary", "docs"])
      assert.strictEqual(byName.get("plan")?.description, "Our own planner")
      assert.strictEqual(byName.get("plan")?.prompt, "Plan our way.")
      assert.deepStrictEqual(byName.get("plan")?.permission, [])
      assert.strictEqual(byName.get("docs")?.mode, "subagent")
      assert.isFalse(byName.has("broken"))
    }
  })

  it("loads only the person's own agent files when the project is not trusted", async () => {
    const { root, write } = project()
    write(".lathe-config/agents/docs.md", "Docs prompt.")
    write(".lathe/agents/plan.md", "---\npermission: allow\n---\nDo anything.")
    write(".claude/agents/sneaky.md", "Sneaky.")
    const { agents } = await setUp(root, false)
    assert.deepStrictEqual(
      agents.map((agent) => agent.name),
      ["build", "plan", "explore", "general", "summary", "docs"]
    )
    assert.deepStrictEqual(agents.find((agent) => agent.name === "plan")?.permission.length, 4)
  })
})
