import type { Rule } from "@lathe/plugin"
import { evaluate } from "@lathe/plugin"
import { describe, expect, it } from "vitest"
import { translateClaudeRule } from "../src/config/config-claude.js"
import { translateOpencode } from "../src/config/config-opencode.js"

// The translation table of Claude Code permission rules, and OpenCode's keys, checked by what the rules decide.
const places = { root: "/work/proj", base: "/work/proj", home: "/home/me" }

const rules = (text: string, action: "allow" | "ask" | "deny" = "allow", at = places): Array<Rule> => {
  const translated = translateClaudeRule(text, action, at)
  if (typeof translated === "string") throw new Error(translated)
  return translated.map((t) => ({ ...t, action, source: "test" }))
}

/** What the translated rule decides for `permission` / `pattern` (ask when it does not match). */
const decides = (text: string, permission: string, pattern: string, at = places) =>
  evaluate(permission, pattern, rules(text, "allow", at), { home: places.home }).action

describe("Claude Code permission rules → Lathe rules", () => {
  it.each([
    ["Bash(npm run test:*)", [{ permission: "bash", pattern: "npm run test *" }]],
    ["Bash(git push)", [{ permission: "bash", pattern: "git push" }]],
    ["Bash", [{ permission: "bash", pattern: "*" }]],
    ["Bash(*)", [{ permission: "bash", pattern: "*" }]],
    ["Bash(git * main)", [{ permission: "bash", pattern: "git * main" }]],
    [
      "Read(./secrets/**)",
      [
        { permission: "read", pattern: "secrets/*" },
        { permission: "list", pattern: "secrets/*" }
      ]
    ],
    ["Edit(src/**)", [{ permission: "edit", pattern: "src/*" }]],
    [
      "Edit(/src/**/*.ts)",
      [
        { permission: "edit", pattern: "src/*.ts" },
        { permission: "edit", pattern: "src/*/*.ts" }
      ]
    ],
    ["Write(docs/**)", [{ permission: "edit", pattern: "docs/*" }]],
    [
      "Read(~/x)",
      [
        { permission: "read", pattern: "/home/me/x" },
        { permission: "list", pattern: "/home/me/x" }
      ]
    ],
    [
      "Read(//etc/passwd)",
      [
        { permission: "read", pattern: "/etc/passwd" },
        { permission: "list", pattern: "/etc/passwd" }
      ]
    ],
    [
      "Read(//work/proj/.env)",
      [
        { permission: "read", pattern: ".env" },
        { permission: "list", pattern: ".env" }
      ]
    ],
    [
      "WebFetch(domain:example.com)",
      [
        { permission: "webfetch", pattern: "https://example.com/*" },
        { permission: "webfetch", pattern: "http://example.com/*" }
      ]
    ],
    ["mcp__github__create_issue", [{ permission: "github_create_issue", pattern: "*" }]],
    ["mcp__github", [{ permission: "github_*", pattern: "*" }]],
    ["mcp__my-server__*", [{ permission: "my-server_*", pattern: "*" }]],
    ["mcp__docs.io__search", [{ permission: "docs_io_search", pattern: "*" }]],
    [
      "Read",
      [
        { permission: "read", pattern: "*" },
        { permission: "list", pattern: "*" },
        { permission: "glob", pattern: "*" },
        { permission: "grep", pattern: "*" }
      ]
    ]
  ])("%s", (text, expected) => {
    expect(translateClaudeRule(text, "allow", places)).toEqual(expected)
  })

  it("`:*` is a prefix at a word boundary; an exact rule is only that command", () => {
    expect(decides("Bash(npm run test:*)", "bash", "npm run test")).toBe("allow")
    expect(decides("Bash(npm run test:*)", "bash", "npm run test -- --watch")).toBe("allow")
    expect(decides("Bash(npm run test:*)", "bash", "npm run testx")).toBe("ask")
    expect(decides("Bash(npm run test:*)", "bash", "npm run build")).toBe("ask")
    expect(decides("Bash(git push)", "bash", "git push")).toBe("allow")
    expect(decides("Bash(git push)", "bash", "git push --force")).toBe("ask")
  })

  it("a bare name (no slash) matches at any depth, as in gitignore; a nested project's rules are anchored there", () => {
    expect(decides("Read(.env)", "read", ".env")).toBe("allow")
    expect(decides("Read(.env)", "read", "pkg/a/.env")).toBe("allow")
    expect(decides("Read(.env)", "read", "x.env")).toBe("ask")
    const nested = { ...places, base: "/work/proj/pkg" }
    expect(decides("Edit(src/**)", "edit", "pkg/src/a.ts", nested)).toBe("allow")
    expect(decides("Edit(src/**)", "edit", "src/a.ts", nested)).toBe("ask")
  })

  it("WebSearch is Lathe's websearch", () => {
    expect(translateClaudeRule("WebSearch", "allow", places)).toEqual([{ permission: "websearch", pattern: "*" }])
  })

  it("WebFetch(domain:…) matches that host only, never a lookalike or userinfo trick", () => {
    expect(decides("WebFetch(domain:example.com)", "webfetch", "https://example.com/a?b")).toBe("allow")
    expect(decides("WebFetch(domain:example.com)", "webfetch", "https://example.com.evil.io/")).toBe("ask")
    expect(decides("WebFetch(domain:example.com)", "webfetch", "https://example.com@evil.io/")).toBe("ask")
  })

  it("what has no Lathe meaning says why (a wildcard domain is only taken where it narrows)", () => {
    expect(translateClaudeRule("WebSearch(zod)", "allow", places)).toBeTypeOf("string")
    expect(translateClaudeRule("Task(review)", "deny", places)).toBeTypeOf("string")
    expect(translateClaudeRule("WebFetch(https://x.io)", "deny", places)).toBeTypeOf("string")
    expect(translateClaudeRule("WebFetch(domain:*.x.io)", "allow", places)).toBeTypeOf("string")
    expect(translateClaudeRule("WebFetch(domain:*.x.io)", "deny", places)).toEqual([
      { permission: "webfetch", pattern: "https://*.x.io/*" },
      { permission: "webfetch", pattern: "http://*.x.io/*" }
    ])
  })
})

describe("OpenCode config → Lathe config", () => {
  it("maps permission, agent, mcp, provider and instructions, and names what it does not understand", () => {
    const { config, unknown } = translateOpencode({
      $schema: "https://opencode.ai/config.json",
      theme: "tokyonight",
      model: "anthropic/claude-sonnet-4-5",
      permission: { edit: "ask", bash: { "git push": "deny", "*": "ask" }, webfetch: "allow" },
      instructions: ["docs/rules/*.md"],
      agent: { review: { description: "Reviews", mode: "subagent", steps: 5, permission: { edit: "deny" }, top_k: 3 } },
      mcp: {
        local: { type: "local", command: ["node", "srv.js"], environment: { A: "1" }, enabled: true },
        remote: { type: "remote", url: "https://mcp.example.com/mcp", headers: { X: "1" } }
      },
      provider: {
        vllm: {
          npm: "@ai-sdk/openai-compatible",
          name: "vLLM",
          options: { baseURL: "http://localhost:8000/v1", apiKey: "{env:VLLM_KEY}" },
          models: { qwen: { name: "Qwen", limit: { context: 32000, output: 4096 } } }
        },
        anthropic: { options: { apiKey: "k" } },
        odd: { npm: "some-provider-package" }
      },
      command: { hello: { template: "say hello" } },
      plugin: ["opencode-x"]
    })
    expect(config).toEqual({
      model: "anthropic/claude-sonnet-4-5",
      permission: { edit: "ask", bash: { "git push": "deny", "*": "ask" }, webfetch: "allow" },
      instructions: ["docs/rules/*.md"],
      agent: { review: { description: "Reviews", mode: "subagent", max_steps: 5, permission: { edit: "deny" } } },
      mcp: {
        local: { type: "local", command: ["node", "srv.js"], env: { A: "1" }, enabled: true },
        remote: { type: "remote", url: "https://mcp.example.com/mcp", headers: { X: "1" } }
      },
      provider: {
        vllm: {
          type: "openai-compatible",
          name: "vLLM",
          baseURL: "http://localhost:8000/v1",
          apiKey: "{env:VLLM_KEY}",
          models: { qwen: { name: "Qwen", context: 32000, output: 4096 } }
        },
        anthropic: { apiKey: "k" }
      }
    })
    expect(unknown).toEqual([
      "theme",
      "agent.review.top_k",
      'provider.odd.npm "some-provider-package"',
      "provider.odd",
      "plugin"
    ])
  })
})
