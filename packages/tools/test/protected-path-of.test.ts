import { describe, expect, it } from "@effect/vitest"
import { protectedPathOf } from "../src/protected-paths.js"

const root = "/work/project"
const of = (path: string) => protectedPathOf(root, path.startsWith("/") ? path : `${root}/${path}`)?.path

describe("protectedPathOf", () => {
  it.each([
    [".git", ".git"],
    [".git/config", ".git/config"],
    [".git/config.worktree", ".git/config.worktree"],
    [".git/commondir", ".git/commondir"],
    [".git/hooks", ".git/hooks"],
    [".git/hooks/pre-commit", ".git/hooks"],
    [".git/info/attributes", ".git/info"],
    [".GIT/Config", ".git/config"],
    ["vendor/lib/.git/config", ".git/config"],
    [".git/modules/sub/config", ".git/config"],
    [".git/modules/a/b/hooks/post-checkout", ".git/hooks"],
    [".git/worktrees/wt/commondir", ".git/commondir"],
    ["/elsewhere/repo/.git/hooks/x", ".git/hooks"],
    [".lathe", ".lathe"],
    [".lathe/plugins/x.mjs", ".lathe"],
    [".lathe/plans", ".lathe"],
    [".lathe/plansx/a.md", ".lathe"],
    ["lathe.json", "lathe.json"],
    ["packages/tools/lathe.jsonc", "lathe.jsonc"],
    ["packages/.lathe/agents/a.md", ".lathe"],
    [".mcp.json", ".mcp.json"],
    [".claude/settings.json", ".claude/settings.json"],
    [".claude/settings.local.json", ".claude/settings.local.json"],
    ["opencode.json", "opencode.json"],
    ["opencode.jsonc", "opencode.jsonc"]
  ])("%s is protected as %s", (path, entry) => {
    expect(of(path)).toBe(entry)
  })

  it.each([
    "src/index.ts",
    ".git/HEAD",
    ".git/objects/ab/cdef",
    ".git/index",
    ".git/modules/sub",
    ".gitignore",
    "sub/.mcp.json",
    "sub/opencode.json",
    ".claude/commands/x.md",
    "/elsewhere/lathe.json",
    // The plan agent's plans: data Lathe writes and never loads.
    ".lathe/plans/refactor.md",
    ".lathe/plans/sub/step.md"
  ])("%s is not protected", (path) => {
    expect(of(path)).toBeUndefined()
  })

  it("each entry says what it is, for the person asked", () => {
    expect(protectedPathOf(root, `${root}/.git/config`)?.what).toMatch(
      /^git's configuration: git runs programs it names/
    )
  })
})
