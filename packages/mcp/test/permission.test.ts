import { describe, expect, it } from "@effect/vitest"
import { evaluate, type Rule } from "@lathe/plugin"
import { MCP_MAY_WRITE, MCP_READ_ONLY, withMcpDefaults } from "../src/permission.js"

// The shape of @lathe/permission's `defaults`: everything allowed, then a few denies.
const hostDefaults: Array<Rule> = [
  { permission: "*", pattern: "*", action: "allow", source: "defaults" },
  { permission: "question", pattern: "*", action: "deny", source: "defaults" }
]
const ruleset = withMcpDefaults(hostDefaults)
const action = (tool: string, pattern: string, user: Array<Rule> = []) =>
  evaluate(tool, pattern, [...ruleset, ...user]).action

describe("MCP default permission rule", () => {
  it("allows tools the server marks readOnlyHint and asks for the others", () => {
    expect(action("github_get_issue", MCP_READ_ONLY)).toBe("allow")
    expect(action("github_create_issue", MCP_MAY_WRITE)).toBe("ask")
  })

  it("the person's rules by Lathe tool name win: github_* ask, allow, deny", () => {
    const rule = (a: Rule["action"]): Array<Rule> => [{ permission: "github_*", pattern: "*", action: a }]
    expect(action("github_get_issue", MCP_READ_ONLY, rule("ask"))).toBe("ask")
    expect(action("github_create_issue", MCP_MAY_WRITE, rule("allow"))).toBe("allow")
    expect(action("github_create_issue", MCP_MAY_WRITE, rule("deny"))).toBe("deny")
    expect(action("jira_create", MCP_MAY_WRITE, rule("allow"))).toBe("ask")
  })

  it("touches no built-in permission, and the defaults' denies stay the last word for their tools", () => {
    expect(action("bash", "git status")).toBe("allow")
    expect(action("edit", "src/a.ts")).toBe("allow")
    expect(action("question", "*")).toBe("deny")
    // What leaves a tool out of a step: the last rule naming its permission (see offeredTools in @lathe/core).
    expect(ruleset.findLast((rule) => rule.permission === "*" || rule.permission === "question")?.action).toBe("deny")
    expect(withMcpDefaults([]).length).toBe(1)
  })
})
