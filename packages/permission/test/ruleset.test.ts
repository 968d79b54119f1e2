import { assert, describe, it } from "@effect/vitest"
import type { PermissionAction, Rule } from "@lathe/plugin"
import { evaluate } from "@lathe/plugin"
import { decide, isImplicit, wildcardMatch } from "@lathe/plugin/host"
import { defaults, fromConfig, merge } from "../src/ruleset.js"

const HOME = "/home/ada"
const r = (permission: string, pattern: string, action: PermissionAction): Rule => ({ permission, pattern, action })

const basic = [r("*", "*", "allow"), r("bash", "*", "ask"), r("bash", "git status", "allow"), r("bash", "rm *", "deny")]
const reads = defaults({ truncationDir: "/data/tool-output" })
const edits = [
  r("edit", "*", "ask"),
  r("edit", "src/*", "allow"),
  r("edit", "src/generated/*", "deny"),
  r("edit", "~/notes/*", "allow"),
  r("edit", "$HOME/.ssh/*", "deny")
]
const qmarks = [
  r("bash", "ls ?", "allow"),
  r("bash", "cat file?.txt", "allow"),
  r("webfetch", "https://*.example.com/*", "allow")
]
const literal = [r("bash", "echo (a|b) [x]+ $y.^", "allow"), r("bash", "grep a.c *", "deny")]
const shadowed = [r("bash", "git *", "deny"), r("bash", "git *", "allow"), r("bash", "git push *", "ask")]
const permissionWild = [r("mcp_*", "*", "deny"), r("mcp_github", "*", "allow"), r("*", ".git/*", "deny")]

// [description, ruleset, permission, pattern, expected action]
const table: ReadonlyArray<readonly [string, ReadonlyArray<Rule>, string, string, PermissionAction]> = [
  ["empty ruleset asks", [], "bash", "ls", "ask"],
  ["empty ruleset asks for unknown permission", [], "teleport", "anything", "ask"],
  ["unknown permission falls to the * rule", basic, "teleport", "x", "allow"],
  ["unknown permission with no * rule asks", edits, "teleport", "x", "ask"],
  ["last match wins: bash * ask over * allow", basic, "bash", "npm test", "ask"],
  ["exact literal allow", basic, "bash", "git status", "allow"],
  ["literal does not match a longer string", basic, "bash", "git status -s", "ask"],
  ["trailing ' *' matches with arguments", basic, "bash", "rm -rf /", "deny"],
  ["trailing ' *' matches the bare command", basic, "bash", "rm", "deny"],
  ["trailing ' *' never matches a longer word", basic, "bash", "rmdir x", "ask"],
  ["'ls *' never matches lstmeval", [r("bash", "ls *", "allow")], "bash", "lstmeval", "ask"],
  ["'ls *' matches ls", [r("bash", "ls *", "allow")], "bash", "ls", "allow"],
  ["'ls *' matches ls -la", [r("bash", "ls *", "allow")], "bash", "ls -la", "allow"],
  ["* crosses slashes", basic, "bash", "rm a/b/c", "deny"],
  ["* crosses spaces", [r("bash", "git * main", "allow")], "bash", "git push origin main", "allow"],
  ["* matches the empty run", [r("bash", "git*", "allow")], "bash", "git", "allow"],
  ["? is exactly one character", qmarks, "bash", "ls a", "allow"],
  ["? does not match two characters", qmarks, "bash", "ls ab", "ask"],
  ["? does not match zero characters", qmarks, "bash", "cat file.txt", "ask"],
  ["? inside a word", qmarks, "bash", "cat file1.txt", "allow"],
  ["? matches a slash", qmarks, "bash", "ls /", "allow"],
  ["* in a URL host", qmarks, "webfetch", "https://docs.example.com/a/b", "allow"],
  ["* in a URL host does not match another domain", qmarks, "webfetch", "https://example.org/a", "ask"],
  ["regex metacharacters are literal (match)", literal, "bash", "echo (a|b) [x]+ $y.^", "allow"],
  ["regex metacharacters are literal (no match)", literal, "bash", "echo a [x]+ $y.^", "ask"],
  [". is literal, not any character", literal, "bash", "grep abc file", "ask"],
  [". matches a dot", literal, "bash", "grep a.c file", "deny"],
  ["*.env matches .env (dot file)", reads, "read", ".env", "ask"],
  ["*.env matches prod.env", reads, "read", "prod.env", "ask"],
  ["*.env matches a nested .env", reads, "read", "/repo/app/.env", "ask"],
  ["*.env.* matches .env.local", reads, "read", ".env.local", "ask"],
  ["*.env.example is allowed (last rule)", reads, "read", ".env.example", "allow"],
  ["nested .env.example is allowed", reads, "read", "/repo/config/.env.example", "allow"],
  ["*.env does not match environment.ts", reads, "read", "src/environment.ts", "allow"],
  ["*.env does not match .envrc", reads, "read", ".envrc", "allow"],
  ["ordinary read allowed", reads, "read", "/repo/src/index.ts", "allow"],
  ["dot file read allowed", reads, "read", "/repo/.gitignore", "allow"],
  ["defaults: doom_loop asks", reads, "doom_loop", "bash", "ask"],
  ["defaults: question is denied", reads, "question", "*", "deny"],
  ["defaults: plan_enter is denied", reads, "plan_enter", "*", "deny"],
  ["defaults: external directory asks", reads, "external_directory", "/etc/passwd", "ask"],
  ["defaults: truncation dir is allowed", reads, "external_directory", "/data/tool-output/bash-1.txt", "allow"],
  ["defaults: a sibling of the truncation dir asks", reads, "external_directory", "/data/tool-outputs/x", "ask"],
  ["defaults: edit allowed", reads, "edit", "src/a.ts", "allow"],
  ["defaults: bash allowed", reads, "bash", "rm -rf /", "allow"],
  ["nested path: src/* allows deep files", edits, "edit", "src/a/b/c.ts", "allow"],
  ["nested path: deeper deny wins when later", edits, "edit", "src/generated/api.ts", "deny"],
  ["nested path: outside src asks", edits, "edit", "test/a.ts", "ask"],
  ["nested path: src prefix needs the slash", edits, "edit", "srcx/a.ts", "ask"],
  ["home: ~/ expands", edits, "edit", `${HOME}/notes/today.md`, "allow"],
  ["home: $HOME/ expands", edits, "edit", `${HOME}/.ssh/id_ed25519`, "deny"],
  ["home: ~/ is not literal", edits, "edit", "~/notes/today.md", "ask"],
  ["home: another user's notes ask", edits, "edit", "/home/bob/notes/today.md", "ask"],
  ["shadowed rules: the later duplicate wins", shadowed, "bash", "git status", "allow"],
  ["shadowed rules: the most specific last rule wins", shadowed, "bash", "git push origin", "ask"],
  ["permission wildcard: mcp_* matches mcp tools", permissionWild, "mcp_slack", "post", "deny"],
  ["permission wildcard: a later exact permission wins", permissionWild, "mcp_github", "issues", "allow"],
  ["permission wildcard: * permission with a path", permissionWild, "edit", ".git/config", "deny"],
  ["permission wildcard: .git/* for mcp_github too", permissionWild, "mcp_github", ".git/HEAD", "deny"],
  ["permission names are whole strings", [r("edit", "*", "deny")], "edits", "x", "ask"],
  ["empty pattern only matches * or empty", [r("bash", "", "deny")], "bash", "", "deny"],
  ["unicode is one character for ?", [r("read", "caf?", "allow")], "read", "café", "allow"],
  ["newlines are crossed by *", [r("bash", "echo *", "deny")], "bash", "echo a\nrm -rf /", "deny"]
]

describe("evaluate", () => {
  it("covers at least 60 cases", () => {
    assert.isAtLeast(table.length, 60)
  })

  for (const [name, ruleset, permission, pattern, expected] of table) {
    it(name, () => {
      assert.strictEqual(evaluate(permission, pattern, ruleset, { home: HOME }).action, expected)
    })
  }

  it("returns the deciding rule itself, or the implicit ask", () => {
    const decided = evaluate("bash", "rm x", basic)
    assert.strictEqual(decided, basic[3])
    const implicit = evaluate("bash", "x", [])
    assert.isTrue(isImplicit(implicit))
    assert.isFalse(isImplicit(decided))
  })
})

describe("decide", () => {
  it("any deny decides deny, all allow decide allow, else ask", () => {
    assert.strictEqual(decide("bash", ["git status", "rm x"], basic).action, "deny")
    assert.strictEqual(decide("bash", ["git status", "git status"], basic).action, "allow")
    assert.strictEqual(decide("bash", ["git status", "npm test"], basic).action, "ask")
    assert.deepStrictEqual(
      decide("bash", ["npm test", "rm x"], basic).verdicts.map((v) => v.rule.action),
      ["ask", "deny"]
    )
  })

  it("an ask with no pattern asks for *", () => {
    assert.deepStrictEqual(decide("question", [], reads).verdicts[0]?.pattern, "*")
  })
})

describe("fromConfig and merge", () => {
  it("expands the config form in key order, a string meaning pattern *", () => {
    const rules = fromConfig({ "*": "allow", read: { "*": "allow", "*.env": "ask" }, bash: "ask" }, "lathe.json")
    assert.deepStrictEqual(rules, [
      { permission: "*", pattern: "*", action: "allow", source: "lathe.json" },
      { permission: "read", pattern: "*", action: "allow", source: "lathe.json" },
      { permission: "read", pattern: "*.env", action: "ask", source: "lathe.json" },
      { permission: "bash", pattern: "*", action: "ask", source: "lathe.json" }
    ])
    assert.deepStrictEqual(fromConfig("deny"), [{ permission: "*", pattern: "*", action: "deny", source: "config" }])
    assert.deepStrictEqual(fromConfig(undefined), [])
  })

  it("merge concatenates, so later rulesets win", () => {
    const merged = merge(defaults(), fromConfig({ bash: { "git push *": "deny" } }))
    assert.strictEqual(merged.length, defaults().length + 1)
    assert.strictEqual(evaluate("bash", "git push origin", merged).action, "deny")
    assert.strictEqual(evaluate("bash", "git pull", merged).action, "allow")
  })

  it("wildcardMatch follows the same contract", () => {
    assert.isTrue(wildcardMatch("ls *", "ls"))
    assert.isFalse(wildcardMatch("ls *", "lsof"))
    assert.isTrue(wildcardMatch("~/x/*", "/h/x/y", "/h"))
    assert.isTrue(wildcardMatch("a*b?c", "a/ /b.c"))
  })
})
