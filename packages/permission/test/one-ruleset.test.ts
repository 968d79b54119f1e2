import { execFileSync, spawnSync } from "node:child_process"
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { assembleRuleset } from "@lathe/core"
import { evaluate, type Rule, type Ruleset } from "@lathe/plugin"
import { loadBashParser } from "../src/bash.js"
import { checksOf, verdictOf } from "../src/checks.js"
import { defaults, merge } from "../src/ruleset.js"
import { type Decision, decide, project, rules } from "./decide.js"

// "Correct where real use goes": one ruleset for explain and the run, rules that meet programs by path, line
// continuations joined, and an agent's edit rules binding bash's write routes.

/** MCP's contributed default, as `@lathe/mcp` builds it (feature packages do not import each other). */
const mcpDefault: Rule = {
  permission: "*",
  pattern: "mcp:may-write",
  action: "ask",
  source: "defaults (MCP tools without readOnlyHint)",
  scoped: true
}

/** Runs `line` under plain bash in `cwd`, as a command would run without Lathe. */
const plainBash = (line: string, cwd: string) => execFileSync("bash", ["-c", line], { cwd, stdio: "pipe" })

describe("a contributed default is scoped to what it is for", () => {
  const unknown = ["python3 <<'PY'\nprint(1)\nPY", "python3 -c 'print(1)'", "node -e '1'"]
  const user = rules({ "*": "allow" })

  for (const line of unknown) {
    it(`MCP's default does not make ${JSON.stringify(line)} an ask; a bash deny rule still makes it a person's`, async () => {
      const parser = await loadBashParser()
      const context = project()
      const ruleset = merge(defaults(), [mcpDefault], user)
      assert.strictEqual(decide(parser, context, ruleset, line), "allow")
      const unscoped = merge(defaults(), [{ ...mcpDefault, scoped: false }], user)
      assert.strictEqual(decide(parser, context, unscoped, line), "ask", "the same rule unscoped reaches bash")
      const denying = merge(ruleset, rules({ bash: { "*": "allow", "rm *": "deny" } }))
      assert.strictEqual(decide(parser, context, denying, line), "person")
    })
  }

  it("still asks for MCP tools that may write", () => {
    const ruleset = merge(defaults(), [mcpDefault])
    assert.strictEqual(evaluate("github_create_issue", "mcp:may-write", ruleset).action, "ask")
    assert.strictEqual(evaluate("github_get_issue", "mcp:read-only", ruleset).action, "allow")
  })
})

describe("rules match programs however they are named", () => {
  const ruleset = rules({ bash: { "*": "allow", "/bin/rm *": "deny" } })
  const table: ReadonlyArray<readonly [string, Decision]> = [
    ["/usr/bin/rm -rf x", "deny"],
    ["/bin/rm x", "deny"],
    ["rm -rf x", "deny"],
    ["\\rm x", "deny"],
    ["sudo /usr/bin/rm x", "deny"],
    ["ls -la", "allow"],
    ["rmdir x", "allow"]
  ]

  it("without Lathe, /usr/bin/rm -rf deletes the folder a /bin/rm rule names", () => {
    const { root } = project()
    mkdirSync(join(root, "x"))
    plainBash("/usr/bin/rm -rf x", root)
    assert.isFalse(existsSync(join(root, "x")))
  })

  for (const [line, expected] of table) {
    it(`${expected}: ${JSON.stringify(line)} under "/bin/rm *": "deny"`, async () => {
      assert.strictEqual(decide(await loadBashParser(), project(), ruleset, line), expected)
    })
  }

  it("names the rule as written", async () => {
    const parser = await loadBashParser()
    const context = project()
    const request = { sessionID: "s", permission: "bash", patterns: ["rm -rf x"], ruleset }
    const [verdict] = checksOf(request, context, parser).map((check) => verdictOf(check, ruleset, [], context.home))
    assert.strictEqual(verdict?.rule.pattern, "/bin/rm *")
  })

  it("a path pattern that names no program does not widen to every command", async () => {
    const parser = await loadBashParser()
    const ruleset = rules({ bash: { "*": "ask", "/tmp/*": "allow", "/tmp/*/run.sh *": "deny" } })
    assert.strictEqual(decide(parser, project(), ruleset, "ls"), "ask")
    assert.strictEqual(decide(parser, project(), ruleset, "run.sh go"), "deny")
  })
})

describe("line continuations are joined as bash joins them", () => {
  it("without Lathe, r\\<newline>m -rf removes the folder; Lathe checks it as rm and denies it", async () => {
    const { root, directory, home } = project()
    mkdirSync(join(root, "dir"))
    const line = "r\\\nm -rf dir"
    plainBash(line, root)
    assert.isFalse(existsSync(join(root, "dir")))
    const ruleset = rules({ bash: { "*": "allow", "rm *": "deny" } })
    assert.strictEqual(decide(await loadBashParser(), { root, directory, home }, ruleset, line), "deny")
  })
})

describe("an agent's edit rules bind every write route", () => {
  // The plan agent's rules (packages/agents/src/builtin.ts) after the defaults.
  const plan: Ruleset = merge(
    defaults(),
    rules({ edit: { "*": "deny", ".lathe/plans": "allow", ".lathe/plans/*.md": "allow" }, bash: "ask" })
  )
  const routes = [
    "echo x > a.txt",
    "echo x >> a.txt",
    "echo x | tee a.txt",
    "cp sub/b.txt a.txt",
    "mv sub/b.txt a.txt",
    "install sub/b.txt a.txt",
    "ln -sf sub/b.txt a.txt",
    "rsync sub/b.txt a.txt",
    "sed -i s/a/b/ a.txt",
    "dd if=sub/b.txt of=a.txt",
    "truncate -s 0 a.txt",
    "touch a.txt",
    "rm a.txt",
    "mkdir new",
    "cd sub && echo x > ../a.txt",
    "echo x > /tmp/elsewhere"
  ]

  it("without Lathe, each route changes the project", () => {
    const installed = (line: string) => {
      const program = line.split(" ")[0] === "cd" ? "cd" : (line.split(" ")[0] as string)
      return program === "echo" || program === "cd" || spawnSync("which", [program]).status === 0
    }
    for (const line of routes.filter((route) => !route.includes("/tmp/") && installed(route))) {
      const { root } = project()
      writeFileSync(join(root, "sub", "b.txt"), "b\n")
      const before = readFileSync(join(root, "a.txt"), "utf8")
      plainBash(line, root)
      const after = existsSync(join(root, "a.txt")) ? readFileSync(join(root, "a.txt"), "utf8") : "(removed)"
      const changed = after !== before || existsSync(join(root, "new")) || line.startsWith("touch")
      assert.isTrue(changed, line)
    }
  })

  for (const line of routes) {
    it(`deny under plan's edit rules, whatever bash allows: ${JSON.stringify(line)}`, async () => {
      assert.strictEqual(decide(await loadBashParser(), project(), plan, line), "deny")
      // Even when the bash rules allow everything.
      const allowBash = merge(plan, rules({ bash: "allow" }))
      assert.strictEqual(decide(await loadBashParser(), project(), allowBash, line), "deny")
    })
  }

  it("plan still writes its plans and runs read-only commands (bash asks, as plan's rules say)", async () => {
    const parser = await loadBashParser()
    const context = project()
    assert.strictEqual(decide(parser, context, plan, "echo plan > .lathe/plans/p.md"), "ask")
    assert.strictEqual(decide(parser, context, plan, "mkdir -p .lathe/plans"), "ask")
    assert.strictEqual(decide(parser, context, plan, "cat a.txt | grep a > /dev/null"), "ask")
    const allowBash = merge(plan, rules({ bash: "allow" }))
    assert.strictEqual(decide(parser, context, allowBash, "echo plan > .lathe/plans/p.md"), "allow")
    assert.strictEqual(decide(parser, context, allowBash, "git log --oneline"), "allow")
  })

  it("an unknown write target is an ask only a person may approve unless edit allows every path", async () => {
    const parser = await loadBashParser()
    const context = project()
    const allowBash = merge(plan, rules({ bash: "allow" }))
    assert.strictEqual(decide(parser, context, allowBash, 'echo x > "$OUT"'), "person")
    assert.strictEqual(decide(parser, context, allowBash, "ls | xargs rm"), "person")
    // With edit allowing everything, an unknown target is what it was: an external_directory ask.
    const build = merge(defaults(), rules({ bash: "allow" }))
    assert.strictEqual(decide(parser, context, build, 'echo x > "$OUT"'), "ask")
    // The person's own config can lift the agent's rules, as for the edit tools.
    const lifted = merge(allowBash, rules({ edit: "allow" }))
    assert.strictEqual(decide(parser, context, lifted, "echo x > a.txt"), "allow")
  })

  it("edit rules that only ask leave known writes to the bash rules", async () => {
    const parser = await loadBashParser()
    const ruleset = merge(defaults(), rules({ edit: "ask", bash: "allow" }))
    assert.strictEqual(decide(parser, project(), ruleset, "echo x > a.txt"), "allow")
  })
})

describe("every agent can read the truncation folder", () => {
  it("an agent asking external_directory still reads Lathe's saved tool output", () => {
    const explore = rules({ "*": "deny", read: "allow", external_directory: "ask" })
    const ruleset = assembleRuleset({
      defaults: defaults({ truncationDir: "/data/tool-output" }),
      agent: explore,
      config: [],
      truncationDir: "/data/tool-output"
    })
    assert.strictEqual(evaluate("external_directory", "/data/tool-output/*", ruleset).action, "allow")
    assert.strictEqual(evaluate("external_directory", "/etc/*", ruleset).action, "ask")
    // The person's config still decides last.
    const denied = assembleRuleset({
      defaults: [],
      agent: explore,
      config: rules({ external_directory: "deny" }),
      truncationDir: "/data/tool-output"
    })
    assert.strictEqual(evaluate("external_directory", "/data/tool-output/*", denied).action, "deny")
  })
})
