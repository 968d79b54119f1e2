/**
 * "Permissions judge the real path": every file tool asks on where a path really is (symlinks resolved, relative to
 * the root) and, when the path as given differs, on that too. The asks here are decided by the rule evaluation the
 * host's permission service runs (the kit's `decide`: any deny denies, an ask without a person is refused), so the
 * strictest verdict wins exactly as there. Real files and real symlinks in temp dirs.
 */
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { denied, type PermissionConfig, type PermissionRequest, rejected } from "@lathe/plugin"
import { decide, permissionRules } from "@lathe/plugin/host"
import { createApplyPatchTool } from "../src/apply-patch.js"
import { createEditTool } from "../src/edit.js"
import { createGrepTool } from "../src/grep.js"
import { createListTool } from "../src/list.js"
import { createMultiEditTool } from "../src/multiedit.js"
import { createReadTool } from "../src/read.js"
import { ToolState } from "../src/state.js"
import { createWriteTool } from "../src/write.js"
import { harness, run, runError } from "./helpers.js"

/** The plan agent's edit rules (as `@lathe/agents` declares them) on top of allow-all. */
const PLAN: PermissionConfig = {
  "*": "allow",
  edit: { "*": "deny", ".lathe/plans": "allow", ".lathe/plans/*.md": "allow" }
}
/** Lathe's default read rules: `.env` files are asked. */
const DEFAULT_READ: PermissionConfig = {
  "*": "allow",
  read: { "*": "allow", "*.env": "ask", "*.env.example": "allow" }
}

/** A harness whose asks are decided by `config`'s rules: deny throws the denial, ask is refused (no person). */
const ruled = (config: PermissionConfig) => {
  const h = harness()
  const rules = permissionRules(config, "test")
  const ctx = h.ctx({
    ask: async (request: PermissionRequest) => {
      h.asks.push(request)
      const decision = decide(request.permission, request.patterns, rules, { home: h.root })
      const deny = decision.verdicts.find((verdict) => verdict.rule.action === "deny")
      if (deny) throw denied(request.permission, deny.pattern)
      if (decision.action === "ask") throw rejected(request.permission, request.patterns)
    }
  })
  return { h, ctx, state: new ToolState() }
}

describe("file tools judge the real path", () => {
  it("without Lathe, a write to .lathe/plans/x.md through a linked plans folder lands in src/", () => {
    const { h } = ruled(PLAN)
    mkdirSync(h.path("src"))
    mkdirSync(h.path(".lathe"))
    symlinkSync("../src", h.path(".lathe/plans"))
    writeFileSync(h.path(".lathe/plans/x.md"), "payload")
    expect(readFileSync(h.path("src/x.md"), "utf8")).toBe("payload")
  })

  it("plan agent: write, edit, multiedit and apply_patch to .lathe/plans/x.md via a link to src/ are denied", async () => {
    const { h, ctx, state } = ruled(PLAN)
    mkdirSync(h.path("src"))
    mkdirSync(h.path(".lathe"))
    symlinkSync("../src", h.path(".lathe/plans"))
    const calls = [
      [createWriteTool(state), { filePath: ".lathe/plans/x.md", content: "payload" }],
      [createEditTool(state), { filePath: ".lathe/plans/x.md", oldString: "", newString: "payload" }],
      [createMultiEditTool(state), { filePath: ".lathe/plans/x.md", edits: [{ oldString: "", newString: "payload" }] }],
      [
        createApplyPatchTool(state),
        { patchText: "*** Begin Patch\n*** Add File: .lathe/plans/x.md\n+payload\n*** End Patch" }
      ]
    ] as const
    for (const [tool, args] of calls) {
      const error = await runError(tool, args, ctx)
      expect(error.message).toContain('Permission "edit" is denied for "src/x.md"')
      expect(h.asks.at(-1)?.patterns).toEqual(["src/x.md", ".lathe/plans/x.md"])
    }
    expect(existsSync(h.path("src/x.md"))).toBe(false)
  })

  it("plan agent: a real .lathe/plans folder is still writable, with one pattern", async () => {
    const { h, ctx, state } = ruled(PLAN)
    mkdirSync(h.path(".lathe/plans"), { recursive: true })
    await run(createWriteTool(state), { filePath: ".lathe/plans/x.md", content: "plan" }, ctx)
    expect(readFileSync(h.path(".lathe/plans/x.md"), "utf8")).toBe("plan")
    expect(h.asks.map((ask) => ask.patterns)).toEqual([[".lathe/plans/x.md"]])
  })

  it("an edit deny on secrets/* holds through notes -> secrets, and through a dangling link into secrets/", async () => {
    const { h, ctx, state } = ruled({ "*": "allow", edit: { "*": "allow", "secrets/*": "deny" } })
    const key = h.write("secrets/key.txt", "KEY")
    symlinkSync("secrets", h.path("notes"))
    symlinkSync("secrets/new.txt", h.path("fresh.txt"))
    await run(createReadTool(state), { filePath: "notes/key.txt" }, ctx)
    const edit = await runError(
      createEditTool(state),
      { filePath: "notes/key.txt", oldString: "KEY", newString: "x" },
      ctx
    )
    expect(edit.message).toContain('Permission "edit" is denied for "secrets/key.txt"')
    const write = await runError(createWriteTool(state), { filePath: "fresh.txt", content: "x" }, ctx)
    expect(write.message).toContain('Permission "edit" is denied for "secrets/new.txt"')
    expect(readFileSync(key, "utf8")).toBe("KEY")
    expect(existsSync(h.path("secrets/new.txt"))).toBe(false)
  })

  it("a deny on the name as given holds too: the strictest of the two wins", async () => {
    const { h, ctx, state } = ruled({ "*": "allow", edit: { "*": "allow", "notes/*": "deny" } })
    mkdirSync(h.path("docs"))
    symlinkSync("docs", h.path("notes"))
    const error = await runError(createWriteTool(state), { filePath: "notes/a.md", content: "x" }, ctx)
    expect(error.message).toContain('Permission "edit" is denied for "notes/a.md"')
    expect(existsSync(h.path("docs/a.md"))).toBe(false)
  })

  it("read settings.txt -> .env is asked as .env, and so is grep on it; read .env.example stays allowed", async () => {
    const { h, ctx, state } = ruled(DEFAULT_READ)
    h.write(".env", "PASSWORD=hunter2\n")
    h.write(".env.example", "PASSWORD=\n")
    symlinkSync(".env", h.path("settings.txt"))
    const read = await runError(createReadTool(state), { filePath: "settings.txt" }, ctx)
    expect(read._tag).toBe("PermissionRejected")
    expect(h.asks.at(-1)).toMatchObject({ permission: "read", patterns: [".env", "settings.txt"] })
    const grep = await runError(createGrepTool({ ripgrep: false }), { pattern: "PASS", path: "settings.txt" }, ctx)
    expect(grep._tag).toBe("PermissionRejected")
    expect(grep.message).not.toContain("hunter2")
    const example = await run(createReadTool(state), { filePath: ".env.example" }, ctx)
    expect(example.output).toContain("PASSWORD=")
  })

  it("list judges a linked folder by its real name", async () => {
    const { h, ctx } = ruled({ "*": "allow", list: { "*": "allow", secrets: "deny" } })
    h.write("secrets/key.txt", "KEY")
    symlinkSync("secrets", h.path("notes"))
    const error = await runError(createListTool(), { path: "notes" }, ctx)
    expect(error.message).toContain('Permission "list" is denied for "secrets"')
  })

  it("a link to .git/config is a protected path under its real name", async () => {
    const h = harness()
    const state = new ToolState()
    h.write(".git/config", "[core]\n")
    symlinkSync(".git", h.path("meta"))
    await run(createReadTool(state), { filePath: "meta/config" }, h.ctx())
    await run(createWriteTool(state), { filePath: "meta/config", content: "[core]\n\tbare = false\n" }, h.ctx())
    const asked = h.asks.find((ask) => ask.permission === "protected_path")
    expect(asked).toMatchObject({ patterns: [".git/config"], requiresPerson: true })
    expect(h.asks.find((ask) => ask.permission === "edit")?.patterns).toEqual([".git/config", "meta/config"])
  })

  it("a link named lathe.json to .git/config is asked under both protected names", async () => {
    const h = harness()
    const state = new ToolState()
    h.write(".git/config", "[core]\n")
    symlinkSync(".git/config", h.path("lathe.json"))
    await run(createReadTool(state), { filePath: "lathe.json" }, h.ctx())
    await run(createWriteTool(state), { filePath: "lathe.json", content: "{}" }, h.ctx())
    const asked = h.asks.find((ask) => ask.permission === "protected_path")
    expect(asked).toMatchObject({ patterns: [".git/config", "lathe.json"], requiresPerson: true })
  })

  it("a path without links asks once, under its own name", async () => {
    const h = harness()
    const state = new ToolState()
    h.write("src/a.ts", "a\n")
    await run(createReadTool(state), { filePath: join(h.root, "src/a.ts") }, h.ctx())
    await run(createEditTool(state), { filePath: "src/a.ts", oldString: "a", newString: "b" }, h.ctx())
    expect(h.asks.map((ask) => ask.patterns)).toEqual([["src/a.ts"], ["src/a.ts"]])
  })
})
