import { buildAgent, exploreAgent, generalAgent, planAgent, summaryAgent } from "@lathe/agents"
import { defaults } from "@lathe/permission"
import { type AgentDefinition, defineAgent, evaluate } from "@lathe/plugin"
import type { PermissionActionConfig } from "@lathe/plugin/host"
import { assert, describe, it } from "vitest"

// Each built-in agent's EFFECTIVE ruleset: the defaults, then the agent's own rules (the user's config comes after
// and is not part of this table). Last matching rule wins.
const effective = (definition: AgentDefinition) => [...defaults(), ...defineAgent(definition, "test").permission]

type Row = readonly [permission: string, pattern: string, action: PermissionActionConfig]

const table: ReadonlyArray<readonly [AgentDefinition, ReadonlyArray<Row>]> = [
  [
    buildAgent,
    [
      ["edit", "src/app.ts", "allow"],
      ["bash", "rm -rf dist", "allow"],
      ["read", "src/app.ts", "allow"],
      ["read", ".env", "ask"],
      ["read", ".env.example", "allow"],
      ["task", "explore", "allow"],
      ["webfetch", "https://example.com/", "allow"],
      ["external_directory", "/etc/*", "ask"],
      ["doom_loop", "edit", "ask"],
      ["question", "*", "deny"],
      // Offered to build, and asked: only a person answers it (see plan-tools).
      ["plan_enter", "*", "ask"]
    ]
  ],
  [
    planAgent,
    [
      ["edit", ".lathe/plans/add-retry.md", "allow"],
      ["edit", ".lathe/plans/auth/login.md", "allow"],
      ["edit", "src/app.ts", "deny"],
      ["edit", "README.md", "deny"],
      ["edit", ".lathe/plans/notes.txt", "deny"],
      ["edit", ".lathe/agents/plan.md", "deny"],
      ["edit", "/tmp/.lathe/plans/x.md", "deny"],
      ["bash", "git status", "ask"],
      ["bash", "rm -rf src", "ask"],
      ["read", "src/app.ts", "allow"],
      ["read", ".env", "ask"],
      ["glob", "**/*.ts", "allow"],
      ["task", "explore", "allow"],
      ["external_directory", "/etc/*", "ask"]
    ]
  ],
  [
    exploreAgent,
    [
      ["edit", "src/app.ts", "deny"],
      ["write", "src/new.ts", "deny"],
      ["edit", ".lathe/plans/x.md", "deny"],
      ["read", "src/app.ts", "allow"],
      ["read", ".env", "ask"],
      ["read", "config/.env.local", "ask"],
      ["read", ".env.example", "allow"],
      ["glob", "**/*.ts", "allow"],
      ["grep", "TODO", "allow"],
      ["list", "src", "allow"],
      ["webfetch", "https://example.com/docs", "allow"],
      ["bash", "ls -la src", "ask"],
      ["bash", "ls", "ask"],
      ["bash", "rg -n TODO src", "ask"],
      ["bash", "git log --oneline -5", "ask"],
      ["bash", "git status", "ask"],
      ["bash", "git diff HEAD~1", "ask"],
      ["bash", "find . -name '*.ts'", "ask"],
      ["bash", "find . -name '*.tmp' -delete", "deny"],
      ["bash", "rg --pre ./run.sh TODO", "deny"],
      ["bash", "git diff --output=patch.diff", "deny"],
      ["bash", "rm -rf src", "deny"],
      ["bash", "npm install", "deny"],
      ["bash", "git commit -m x", "deny"],
      ["bash", "git push origin main", "deny"],
      ["task", "general", "deny"],
      ["todowrite", "*", "deny"],
      ["skill", "release", "deny"],
      ["mcp_github_create_issue", "*", "deny"],
      ["external_directory", "/etc/*", "ask"],
      ["doom_loop", "read", "ask"]
    ]
  ],
  [
    generalAgent,
    [
      ["edit", "src/app.ts", "allow"],
      ["bash", "npm test", "allow"],
      ["read", ".env", "ask"],
      ["task", "explore", "allow"],
      ["question", "*", "deny"]
    ]
  ],
  [
    summaryAgent,
    [
      ["read", "src/app.ts", "deny"],
      ["edit", "src/app.ts", "deny"],
      ["bash", "ls", "deny"],
      ["task", "explore", "deny"],
      ["webfetch", "https://example.com/", "deny"]
    ]
  ]
]

describe("the built-in agents' effective rulesets", () => {
  for (const [agent, rows] of table) {
    describe(agent.name, () => {
      const ruleset = effective(agent)
      it.each(rows)("%s %s → %s", (permission, pattern, action) => {
        const rule = evaluate(permission, pattern, ruleset)
        assert.strictEqual(
          rule.action,
          action,
          `${agent.name}: ${permission} ${pattern} was decided by ${rule.permission} ${rule.pattern} (${rule.source})`
        )
      })
    })
  }

  it("switches the todo tools off for the subagents, and every tool off for summary", () => {
    assert.deepStrictEqual(defineAgent(generalAgent).tools, { todowrite: false, todoread: false })
    assert.deepStrictEqual(defineAgent(exploreAgent).tools, { todowrite: false, todoread: false, task: false })
    assert.deepStrictEqual(defineAgent(summaryAgent).tools, { "*": false })
    assert.isTrue(defineAgent(summaryAgent).hidden)
    assert.deepStrictEqual(
      [buildAgent, planAgent, exploreAgent, generalAgent].map((a) => defineAgent(a).mode),
      ["primary", "primary", "subagent", "subagent"]
    )
  })
})
