import { describe, expect, it } from "@effect/vitest"
import { parseStatus } from "../src/git-status.js"
import { isGitContextBlock, renderGitContext } from "../src/render.js"

const porcelain = [
  "# branch.oid 0123456789abcdef0123456789abcdef01234567",
  "# branch.head feature/x",
  "# branch.upstream origin/feature/x",
  "# branch.ab +3 -0",
  "1 .M N... 100644 100644 100644 aaaa aaaa src/a file.ts",
  "2 R. N... 100644 100644 100644 aaaa aaaa R100 new.ts",
  "old.ts",
  "u UU N... 100644 100644 100644 100644 aaaa bbbb cccc conflict.ts",
  "? notes.md",
  ""
].join("\0")

describe("parseStatus", () => {
  it("reads branch, upstream counts and every kind of dirty record, paths with spaces included", () => {
    expect(parseStatus(porcelain)).toEqual({
      branch: "feature/x",
      commit: "0123456",
      upstream: { name: "origin/feature/x", ahead: 3, behind: 0 },
      dirty: [
        { status: "M", path: "src/a file.ts" },
        { status: "R", path: "new.ts" },
        { status: "UU", path: "conflict.ts" },
        { status: "??", path: "notes.md" }
      ]
    })
  })

  it("reads a detached HEAD, a repository before its first commit, and an upstream that is gone", () => {
    expect(parseStatus("# branch.oid abcdef0123\0# branch.head (detached)\0")).toMatchObject({
      branch: undefined,
      commit: "abcdef0"
    })
    expect(parseStatus("# branch.oid (initial)\0# branch.head main\0")).toMatchObject({ commit: undefined })
    expect(parseStatus("# branch.head main\0# branch.upstream origin/main\0").upstream).toEqual({ name: "origin/main" })
  })
})

describe("renderGitContext", () => {
  it("renders the block the model reads", () => {
    expect(renderGitContext(parseStatus(porcelain))).toBe(
      [
        "<git-context>",
        "Branch: feature/x",
        "Upstream: origin/feature/x (3 ahead, 0 behind)",
        "Uncommitted changes (4 files):",
        "M  src/a file.ts",
        "R  new.ts",
        "UU conflict.ts",
        "?? notes.md",
        "</git-context>"
      ].join("\n")
    )
  })

  it("lists at most 50 dirty files and counts the rest; says when the tree is clean", () => {
    const dirty = Array.from({ length: 60 }, (_, i) => ({ status: "??", path: `f${i}` }))
    const lines = renderGitContext({ branch: "main", commit: "abc", upstream: undefined, dirty }).split("\n")
    expect(lines.filter((line) => line.startsWith("?? "))).toHaveLength(50)
    expect(lines.at(-2)).toBe("…and 10 more")
    expect(renderGitContext({ branch: undefined, commit: "abc1234", upstream: undefined, dirty: [] })).toBe(
      "<git-context>\nDetached HEAD at abc1234\nUpstream: none\nWorking tree clean.\n</git-context>"
    )
  })

  it("recognises exactly a block, nothing more", () => {
    expect(isGitContextBlock("\n<git-context>\nBranch: main\n</git-context>\n")).toBe(true)
    expect(isGitContextBlock("see <git-context>x</git-context> above")).toBe(false)
    expect(isGitContextBlock("<git-context>unterminated")).toBe(false)
  })
})
