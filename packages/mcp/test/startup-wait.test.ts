// When a turn's first request waits for MCP servers still starting, how a package runner's first start is timed, and
// how tools that came later are announced. Pure decisions, plus the memory's real file in a temp dir.
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import type { Ruleset } from "@lathe/plugin"
import {
  commandKey,
  FIRST_START_TIMEOUT_MS,
  firstStartTimeout,
  isPackageRunner,
  openStartMemory,
  startMemoryFile
} from "../src/start-memory.js"
import { lateToolNotes, serverNeed, startupWaitMs } from "../src/startup-wait.js"
import { nodeServer, tempDir } from "./helpers.js"

const local = (command: string, args: ReadonlyArray<string>, timeout = 10_000) => ({
  ...nodeServer("x", []),
  command,
  args: [...args],
  timeout
})

describe("which server a turn needs before its first request", () => {
  const github = { name: "github", wait: false, rememberedTools: ["get_issue", "search", "printEnv"] }

  it("a prompt naming the server, one of its Lathe tool names, or a distinctive remembered tool", () => {
    expect(serverNeed(github, { text: "Use the GitHub server to read issue 7." })).toBe("prompt")
    expect(serverNeed(github, { text: "call github_get_issue for #7" })).toBe("prompt")
    expect(serverNeed(github, { text: "run get_issue on 7" })).toBe("prompt")
    expect(serverNeed(github, { text: "then printenv please" })).toBe("prompt")
  })

  it("not a prompt that names none of it, nor a common word that happens to be a tool's name", () => {
    expect(serverNeed(github, { text: "fix the failing test" })).toBeUndefined()
    expect(serverNeed(github, { text: "search the code for TODO" })).toBeUndefined()
    expect(serverNeed(github, { text: "the githubby thing" })).toBeUndefined()
  })

  it("an agent that switches its tools on or allows them; not one that denies them", () => {
    expect(serverNeed(github, { text: "go", agentTools: { "github_*": true } })).toBe("agent")
    expect(serverNeed(github, { text: "go", agentTools: { "github_*": false } })).toBeUndefined()
    const allow = [{ permission: "github_get_issue", action: "allow" }]
    expect(serverNeed(github, { text: "go", agentPermission: allow })).toBe("agent")
    const deny = [{ permission: "github_*", action: "deny" }]
    expect(serverNeed(github, { text: "go", agentPermission: deny })).toBeUndefined()
    // `*` names every tool, so no server in particular.
    expect(serverNeed(github, { text: "go", agentPermission: [{ permission: "*", action: "allow" }] })).toBeUndefined()
  })

  it("a server whose config says wait: true, whatever the prompt", () => {
    expect(serverNeed({ ...github, wait: true }, { text: "fix the failing test" })).toBe("config")
  })

  it("a server name with characters outside tool names is matched as its tools are named", () => {
    const dotted = { name: "my.server", wait: false, rememberedTools: [] }
    expect(serverNeed(dotted, { text: "use my.server now" })).toBe("prompt")
    expect(serverNeed(dotted, { text: "call my_server_list" })).toBe("prompt")
  })
})

describe("how long a turn waits for a server still starting", () => {
  const base = { startedAt: 1_000, startupWait: 10_000, cap: 29_000 }

  it("an unneeded one: what is left of the start-up wait, none once it is over", () => {
    expect(startupWaitMs({ ...base, need: undefined, now: 1_500 })).toBe(9_500)
    expect(startupWaitMs({ ...base, need: undefined, now: 20_000 })).toBe(0)
    expect(startupWaitMs({ ...base, startupWait: 0, need: undefined, now: 1_000 })).toBe(0)
  })

  it("a needed one: until it settles, within the hook's limit, even after the start-up wait", () => {
    expect(startupWaitMs({ ...base, need: "prompt", now: 20_000 })).toBe(29_000)
    expect(startupWaitMs({ ...base, cap: 4_000, need: "agent", now: 1_000 })).toBe(4_000)
  })
})

describe("a package runner's first start", () => {
  it("recognises npx, bunx, pnpm dlx, uvx and friends; not a plain program", () => {
    expect(isPackageRunner(local("npx", ["-y", "@modelcontextprotocol/server-everything"]))).toBe(true)
    expect(isPackageRunner(local("/usr/local/bin/bunx", ["some-server"]))).toBe(true)
    expect(isPackageRunner(local("pnpm", ["dlx", "some-server"]))).toBe(true)
    expect(isPackageRunner(local("uvx", ["mcp-server-git"]))).toBe(true)
    expect(isPackageRunner(local("npx.cmd", ["-y", "x"]))).toBe(true)
    expect(isPackageRunner(local("pnpm", ["run", "server"]))).toBe(false)
    expect(isPackageRunner(local("node", ["server.js"]))).toBe(false)
  })

  it("gets the longer timeout until its command has started here once, then its own", () => {
    const server = local("npx", ["-y", "@modelcontextprotocol/server-everything"])
    expect(firstStartTimeout(server, { startedBefore: () => false })).toBe(FIRST_START_TIMEOUT_MS)
    expect(firstStartTimeout(server, { startedBefore: () => true })).toBe(10_000)
    // A timeout set longer than the first-start one is kept.
    expect(firstStartTimeout({ ...server, timeout: 90_000 }, { startedBefore: () => false })).toBe(90_000)
    // A plain program's first start is like every other.
    expect(firstStartTimeout(local("node", ["server.js"]), { startedBefore: () => false })).toBe(10_000)
  })

  it("remembers a started command in the data dir (hashed, no argument in clear) with its tools", async () => {
    const dataDir = join(tempDir(), "data")
    const server = local("npx", ["-y", "pkg", "--token", "sekret-123"])
    const first = await openStartMemory(dataDir)
    expect(first.startedBefore(server)).toBe(false)
    await first.remember(server, ["echo", "get_sum"])
    const text = readFileSync(startMemoryFile(dataDir), "utf8")
    expect(text).not.toContain("sekret-123")
    expect(text).toContain(commandKey(server))
    const again = await openStartMemory(dataDir)
    expect(again.startedBefore(server)).toBe(true)
    expect(again.tools(server)).toEqual(["echo", "get_sum"])
    expect(firstStartTimeout(server, again)).toBe(10_000)
    // Another command (other arguments) is a first start again.
    expect(again.startedBefore(local("npx", ["-y", "pkg@2"]))).toBe(false)
  })

  it("a broken memory file is an empty memory, replaced at the next start", async () => {
    const dataDir = tempDir()
    writeFileSync(startMemoryFile(dataDir), "{ not json")
    const memory = await openStartMemory(dataDir)
    const server = local("uvx", ["mcp-server-git"])
    expect(memory.startedBefore(server)).toBe(false)
    await memory.remember(server, ["git_status"])
    expect(existsSync(startMemoryFile(dataDir))).toBe(true)
    expect((await openStartMemory(dataDir)).tools(server)).toEqual(["git_status"])
  })
})

describe("tools that arrive after a session's first request", () => {
  const allow: Ruleset = [{ permission: "*", pattern: "*", action: "allow" }]

  it("are announced from the next step on, once per server, and only those that came later", () => {
    const notes = lateToolNotes()
    const early = [{ name: "fast_ping", server: "fast" }]
    expect(notes({ sessionID: "s1", permission: allow, tools: early, search: false })).toEqual([])
    expect(notes({ sessionID: "s1", permission: allow, tools: early, search: false })).toEqual([])
    const later = [...early, { name: "slow_ping", server: "slow" }, { name: "slow_env", server: "slow" }]
    const said = notes({ sessionID: "s1", permission: allow, tools: later, search: false })
    expect(said).toEqual([
      'Tools now available from MCP server "slow" (it finished starting after this session\'s first request): slow_ping, slow_env.'
    ])
    // It stays in the next steps (the system prompt changes once per arrival).
    expect(notes({ sessionID: "s1", permission: allow, tools: later, search: false })).toEqual(said)
    // A session whose first step saw them hears nothing.
    expect(notes({ sessionID: "s2", permission: allow, tools: later, search: false })).toEqual([])
  })

  it("leaves out tools the rules deny outright, and points to mcp_search when the tools go through it", () => {
    const notes = lateToolNotes()
    notes({ sessionID: "s1", permission: allow, tools: [], search: true })
    const rules: Ruleset = [...allow, { permission: "slow_env", pattern: "*", action: "deny" }]
    const tools = [
      { name: "slow_ping", server: "slow" },
      { name: "slow_env", server: "slow" }
    ]
    const [note] = notes({ sessionID: "s1", permission: rules, tools, search: true })
    expect(note).toContain("slow_ping.")
    expect(note).not.toContain("slow_env")
    expect(note).toContain("Find them with mcp_search")
  })
})
