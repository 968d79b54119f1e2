import { defineAgent } from "@lathe/core"
import { assert, describe, it } from "vitest"
import { parseAgentFile } from "../src/markdown.js"

const ok = (name: string, text: string) => {
  const parsed = parseAgentFile(name, text)
  if (!parsed.ok) assert.fail(`expected ${name} to parse, got: ${parsed.error}`)
  return parsed.agent
}

const error = (name: string, text: string): string => {
  const parsed = parseAgentFile(name, text)
  if (parsed.ok) assert.fail(`expected ${name} to be refused`)
  return parsed.error
}

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
    const agent = ok("claude", "---\nname: claude\ncolor: blue\nmodel: inherit\ntools: Read, Grep,Glob\n---\nHi")
    assert.deepStrictEqual(agent, {
      name: "claude",
      prompt: "Hi",
      tools: { "*": false, read: true, grep: true, glob: true }
    })
  })

  it("returns no agent for `disable: true`", () => {
    const parsed = parseAgentFile("off", "---\ndisable: true\n---\nPrompt")
    assert.deepStrictEqual(parsed, { ok: true, agent: undefined })
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

    it("an unknown field", () => {
      assert.strictEqual(error("typo", "---\ndescripton: x\n---\n"), 'front matter: Unrecognized key: "descripton"')
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

    it("a model without a provider", () => {
      assert.strictEqual(error("model", "---\nmodel: gpt-5\n---\n"), 'model: use "provider/model"')
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
