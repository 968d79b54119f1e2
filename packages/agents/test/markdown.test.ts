import { type CatalogProvider, defineAgent } from "@lathe/plugin"
import { assert, describe, it } from "vitest"
import { claudeModels } from "../src/compat.js"
import { type AgentFileOptions, parseAgentFile } from "../src/markdown.js"

const parsed = (name: string, text: string, options: AgentFileOptions = {}) => {
  const result = parseAgentFile(name, text, options)
  if (!result.ok) assert.fail(`expected ${name} to parse, got: ${result.error}`)
  return result
}
const ok = (name: string, text: string) => parsed(name, text).agent

const error = (name: string, text: string): string => {
  const parsed = parseAgentFile(name, text)
  if (parsed.ok) assert.fail(`expected ${name} to be refused`)
  return parsed.error
}

/** A catalogue's newest model of a Claude family: what an alias with no configured model of that family becomes. */
const newest = (family: string) => `claude-${family}-9-newest`

/** A host catalogue (`ctx.catalog`) of these providers, whose newest model of a family is {@link newest}'s. */
const catalog = (...providers: ReadonlyArray<Partial<CatalogProvider> & { readonly id: string }>) => ({
  providers: () => providers.map((provider) => ({ type: provider.id, ready: true, models: [], ...provider })),
  newestModel: (providerID: string, prefix: string) => (providerID === "anthropic" ? `${prefix}-9-newest` : undefined)
})

describe("parseAgentFile", () => {
  it("maps every front-matter field and takes the body as the prompt", () => {
    const agent = ok(
      "reviewer",
      [
        "---",
        "description: Reviews the current diff",
        "mode: subagent",
        "model: anthropic/claude-sonnet-4-5",
        "temperature: 0.2",
        "top_p: 0.9",
        "max_steps: 12",
        "tools:",
        "  bash: false",
        "permission:",
        "  edit: deny",
        "  bash:",
        '    "*": ask',
        '    "git diff *": allow',
        "---",
        "",
        "You review diffs.",
        "Be specific.",
        ""
      ].join("\n")
    )
    assert.deepStrictEqual(agent, {
      name: "reviewer",
      description: "Reviews the current diff",
      mode: "subagent",
      prompt: "You review diffs.\nBe specific.",
      permission: { edit: "deny", bash: { "*": "ask", "git diff *": "allow" } },
      model: "anthropic/claude-sonnet-4-5",
      temperature: 0.2,
      topP: 0.9,
      maxSteps: 12,
      tools: { bash: false }
    })
    // The core normaliser accepts it and keeps the rule order.
    const info = defineAgent(agent ?? { name: "x" }, "test")
    assert.deepStrictEqual(
      info.permission.map((rule) => `${rule.permission} ${rule.pattern} ${rule.action}`),
      ["edit * deny", "bash * ask", "bash git diff * allow"]
    )
  })

  it("accepts a file without front matter (all prompt), CRLF line ends and a BOM", () => {
    assert.deepStrictEqual(ok("plain", "Just a prompt.\n"), { name: "plain", prompt: "Just a prompt." })
    assert.deepStrictEqual(ok("crlf", "\uFEFF---\r\ndescription: d\r\n---\r\nBody\r\n"), {
      name: "crlf",
      description: "d",
      prompt: "Body"
    })
    assert.deepStrictEqual(ok("empty", "---\n---\n"), { name: "empty" })
  })

  it("reads Claude Code agent files: a tools list becomes a whitelist, `model: inherit` the session's model", () => {
    const agent = ok("claude", "---\nname: claude\nmodel: inherit\ntools: Read, Grep,Glob\n---\nHi")
    assert.deepStrictEqual(agent, {
      name: "claude",
      prompt: "Hi",
      tools: { "*": false, read: true, grep: true, glob: true }
    })
  })

  it("returns no agent for `disable: true`", () => {
    assert.deepStrictEqual(parseAgentFile("off", "---\ndisable: true\n---\nPrompt"), {
      ok: true,
      agent: undefined,
      notices: []
    })
  })

  describe("Claude Code's shape", () => {
    // The shape Claude Code's docs and its /agents command write.
    const reviewer = [
      "---",
      "name: code-reviewer",
      "description: Expert code review specialist. Use immediately after writing or modifying code.",
      "tools: Read, Grep, Glob, Bash(git diff:*), Bash(git log:*), WebSearch, NotebookEdit, mcp__github__get_issue",
      "model: sonnet",
      "color: blue",
      "---",
      "You are a senior code reviewer."
    ].join("\n")
    const anthropic = claudeModels(undefined, catalog({ id: "anthropic" }))

    it("maps the tools list to an allow-list: bash only for the listed commands, MCP names Lathe's way", () => {
      const { agent, notices } = parsed("reviewer", reviewer, { claudeModel: anthropic })
      assert.deepStrictEqual(agent?.tools, {
        "*": false,
        read: true,
        grep: true,
        glob: true,
        bash: true,
        websearch: true,
        github_get_issue: true
      })
      assert.deepStrictEqual(agent?.permission, { bash: { "*": "deny", "git diff *": "allow", "git log *": "allow" } })
      assert.strictEqual(agent?.model, `anthropic/${newest("sonnet")}`)
      // One notice per file, naming every key Lathe does not use, the name it does not take, the missing tool.
      assert.deepStrictEqual(notices, [
        "ignored color (Lathe does not use it)",
        'name: the agent is called "reviewer" after its file, not "code-reviewer"',
        "tools: Lathe has no NotebookEdit tool; it is left out"
      ])
      const info = defineAgent(agent ?? { name: "x" }, "test")
      assert.deepStrictEqual(
        info.permission.map((rule) => `${rule.permission} ${rule.pattern} ${rule.action}`),
        ["bash * deny", "bash git diff * allow", "bash git log * allow"]
      )
    })

    it("model aliases go to the configured Anthropic-family provider, its own models first", () => {
      const model = (text: string, resolver = anthropic) =>
        parsed("a", `---\nmodel: ${text}\n---\n`, { claudeModel: resolver }).agent?.model
      assert.strictEqual(model("opus"), `anthropic/${newest("opus")}`)
      assert.strictEqual(model("haiku"), `anthropic/${newest("haiku")}`)
      assert.strictEqual(model("claude-opus-4-1"), "anthropic/claude-opus-4-1")
      const proxy = claudeModels(
        "corp/claude-sonnet-4-5-20250929",
        catalog(
          { id: "other", type: "anthropic" },
          { id: "corp", type: "anthropic", models: ["claude-opus-4-1-20250805"] }
        )
      )
      assert.strictEqual(model("sonnet", proxy), "corp/claude-sonnet-4-5-20250929")
      assert.strictEqual(model("opus", proxy), "corp/claude-opus-4-1-20250805")
      // The host lists `anthropic` when its key is in the environment (core's configuredProviders).
      const fromKey = claudeModels(undefined, catalog({ id: "anthropic" }))
      assert.strictEqual(model("haiku", fromKey), `anthropic/${newest("haiku")}`)
    })

    it("with no Anthropic-family provider an alias inherits, with a notice; so does a model that is not provider/model", () => {
      const none = claudeModels(undefined, catalog({ id: "local", type: "openai-compatible" }))
      const alias = parsed("a", "---\nmodel: sonnet\n---\n", { claudeModel: none })
      assert.isUndefined(alias.agent?.model)
      assert.deepStrictEqual(alias.notices, [
        'model: "sonnet" is a Claude model and no Anthropic provider is configured; ' +
          "the agent runs on the model of the turn that runs it"
      ])
      const bare = parsed("b", "---\nmodel: gpt-5\n---\n")
      assert.isUndefined(bare.agent?.model)
      assert.match(bare.notices[0] ?? "", /^model: "gpt-5" is not "provider\/model" or a Claude alias/)
    })

    it("a tool pattern Lathe cannot translate leaves that tool out; file patterns and webfetch domains translate", () => {
      const { agent, notices } = parsed(
        "w",
        "---\ntools:\n  - Read(./src/**)\n  - Edit(docs/**/*.md)\n  - WebFetch(domain:example.com)\n  - Grep(TODO)\n---\n"
      )
      assert.deepStrictEqual(agent?.tools, { "*": false, read: true, edit: true, webfetch: true })
      assert.deepStrictEqual(agent?.permission, {
        read: { "*": "deny", "src/*": "allow" },
        edit: { "*": "deny", "docs/*/*.md": "allow" },
        webfetch: { "*": "deny", "https://example.com/*": "allow", "http://example.com/*": "allow" }
      })
      assert.deepStrictEqual(notices, [
        "tools: Grep(TODO) cannot be narrowed that way in Lathe; Grep is left out (use permission rules)"
      ])
    })

    it("a tool listed whole wins over its patterns; the file's own permission comes after the implied rules", () => {
      const { agent } = parsed(
        "m",
        "---\ntools: Bash(git status), Bash, Read(src/*)\npermission:\n  read:\n    src/secret.ts: deny\n---\n"
      )
      assert.deepStrictEqual(agent?.permission, { read: { "*": "deny", "src/*": "allow", "src/secret.ts": "deny" } })
    })
  })

  it("reads OpenCode's shape: mode, a tools map, permission, maxSteps", () => {
    const { agent, notices } = parsed(
      "docs-writer",
      [
        "---",
        "description: Writes and maintains project documentation",
        "mode: subagent",
        "model: anthropic/claude-sonnet-4-20250514",
        "temperature: 0.1",
        "maxSteps: 8",
        "tools:",
        "  write: false",
        "  bash: false",
        "permission:",
        "  edit: deny",
        "  webfetch: ask",
        "---",
        "You are a technical writer."
      ].join("\n")
    )
    assert.deepStrictEqual(agent, {
      name: "docs-writer",
      description: "Writes and maintains project documentation",
      mode: "subagent",
      prompt: "You are a technical writer.",
      permission: { edit: "deny", webfetch: "ask" },
      model: "anthropic/claude-sonnet-4-20250514",
      temperature: 0.1,
      maxSteps: 8,
      tools: { write: false, bash: false }
    })
    assert.deepStrictEqual(notices, [])
  })

  describe("malformed files name the field or line at fault", () => {
    it("front matter that is never closed", () => {
      assert.strictEqual(
        error("open", "---\ndescription: x\nbody"),
        'the front matter opened with "---" is never closed: add a line "---" after it'
      )
    })

    it("YAML that does not parse, with the file's line number", () => {
      assert.strictEqual(
        error("bad", "---\nmode: primary\ndescription: a: b\n---\nBody"),
        "front matter line 3, column 14: Nested mappings are not allowed in compact mappings"
      )
    })

    it("a duplicate key", () => {
      assert.match(
        error("dup", "---\nmode: primary\nmode: subagent\n---\n"),
        /^front matter line 3, column 1: Map keys must be unique/
      )
    })

    it("front matter that is not a mapping", () => {
      assert.strictEqual(
        error("list", "---\n- a\n- b\n---\n"),
        "front matter: expected `key: value` lines (a YAML mapping)"
      )
    })

    it("an unknown field is not an error: the agent loads and the notice names it", () => {
      const typo = parsed("typo", "---\ndescripton: x\nskills: [a]\n---\n")
      assert.deepStrictEqual(typo.agent, { name: "typo" })
      assert.deepStrictEqual(typo.notices, ["ignored descripton, skills (Lathe does not use them)"])
    })

    it("a bad mode", () => {
      assert.strictEqual(
        error("mode", "---\nmode: helper\n---\n"),
        'mode: Invalid option: expected one of "primary"|"subagent"|"all"'
      )
    })

    it("a wrong type", () => {
      assert.strictEqual(
        error("temp", "---\ntemperature: hot\n---\n"),
        "temperature: Invalid input: expected number, received string"
      )
    })

    it("an out-of-range value, named as written (top_p, max_steps)", () => {
      assert.strictEqual(error("topp", "---\ntop_p: 3\n---\n"), "top_p: Too big: expected number to be <=1")
      assert.strictEqual(
        error("steps", "---\nmax_steps: 1.5\n---\n"),
        "max_steps: Invalid input: expected int, received number"
      )
    })

    it("a bad permission action", () => {
      assert.strictEqual(
        error("perm", "---\npermission:\n  edit: maybe\n---\n"),
        'permission: "allow", "deny" or "ask", or an object of permission: action'
      )
    })

    it("a file name that is not a valid agent name", () => {
      assert.strictEqual(
        error("My Agent", "Prompt"),
        "the file name (the agent's name): use lowercase letters, digits, '-' and '_', starting with a letter"
      )
    })
  })
})
