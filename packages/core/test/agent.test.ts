import { assert, describe, it } from "@effect/vitest"
import { defineAgent } from "@lathe/plugin"
import { agentAllowsTool, coreAgents, resolveAgents } from "../src/plugin-host/agent.js"

describe("agents", () => {
  const plugin = defineAgent(
    { name: "review", description: "Reviews", mode: "subagent", permission: { edit: "deny" }, tools: { bash: false } },
    "@acme/agents"
  )

  it("core, then plugins, then config: config adjusts field by field, appends rules, and can disable", () => {
    const agents = resolveAgents([plugin], {
      review: {
        temperature: 0.1,
        permission: [{ permission: "bash", pattern: "*", action: "deny", source: "config" }]
      },
      build: { disable: true, permission: [] },
      helper: { mode: "subagent", description: "Helps", permission: [] }
    })
    assert.isFalse(agents.has("build"))
    const review = agents.get("review")
    assert.strictEqual(review?.temperature, 0.1)
    assert.strictEqual(review?.description, "Reviews")
    assert.strictEqual(review?.source, "@acme/agents")
    assert.deepStrictEqual(
      review?.permission.map((r) => `${r.permission}:${r.action}`),
      ["edit:deny", "bash:deny"]
    )
    assert.strictEqual(agents.get("helper")?.mode, "subagent")
    assert.strictEqual(agents.get("helper")?.source, "config")
    assert.deepStrictEqual(
      coreAgents.filter((a) => a.hidden).map((a) => a.name),
      ["compaction", "title"]
    )
  })

  it("tools switches: wildcards, the last matching key wins, default on", () => {
    const agent = { ...plugin, tools: { "*": false, read: true, "mcp_*": true, mcp_danger: false } }
    assert.deepStrictEqual(
      ["read", "edit", "mcp_search", "mcp_danger"].map((tool) => agentAllowsTool(agent, tool)),
      [true, false, true, false]
    )
    assert.isTrue(agentAllowsTool({ ...plugin, tools: {} }, "anything"))
  })

  it("a malformed definition names the agent and the field", () => {
    assert.throws(
      () => defineAgent({ name: "Bad Name" }, "x"),
      /Invalid agent "Bad Name" from x: name: use lowercase letters/
    )
    assert.throws(() => defineAgent({ name: "ok", temperature: 5 }, "x"), /temperature/)
  })
})
