import { assert, describe, it } from "vitest"
import { applyUpdatedInput, claudeInput, claudeToolName, compileMatcher } from "../src/tool-names.js"

const matcher = (text: string | undefined) => {
  const compiled = compileMatcher(text)
  if (typeof compiled === "string") throw new Error(compiled)
  return compiled
}

describe("Claude Code tool names", () => {
  it("names Lathe's tools as Claude Code does, MCP tools as mcp__server__tool, others as they are", () => {
    const names = [
      "bash",
      "read",
      "edit",
      "write",
      "glob",
      "grep",
      "webfetch",
      "task",
      "todowrite",
      "multiedit",
      "list"
    ]
    assert.deepStrictEqual(
      names.map((name) => claudeToolName(name)),
      ["Bash", "Read", "Edit", "Write", "Glob", "Grep", "WebFetch", "Task", "TodoWrite", "MultiEdit", "LS"]
    )
    const servers = ["github", "git hub", "my_db", "my"]
    assert.strictEqual(claudeToolName("github_create_issue", servers), "mcp__github__create_issue")
    assert.strictEqual(claudeToolName("git_hub_list", servers), "mcp__git_hub__list")
    // The longest configured server that prefixes the id wins.
    assert.strictEqual(claudeToolName("my_db_query", servers), "mcp__my_db__query")
    assert.strictEqual(claudeToolName("my_tool", servers), "mcp__my__tool")
    assert.strictEqual(claudeToolName("lint_fix", servers), "lint_fix")
  })

  it("gives inputs Claude's snake_case keys and maps an updatedInput back to the tool's own", () => {
    const edit = { filePath: "/p/a.ts", oldString: "a", newString: "b", replaceAll: true }
    assert.deepStrictEqual(claudeInput("edit", edit), {
      file_path: "/p/a.ts",
      old_string: "a",
      new_string: "b",
      replace_all: true
    })
    assert.deepStrictEqual(claudeInput("grep", { pattern: "x", include: "*.ts" }), { pattern: "x", glob: "*.ts" })
    // Paths are absolute, as Claude Code's tools send them, when the working directory is given.
    assert.deepStrictEqual(claudeInput("read", { filePath: "src/a.ts", offset: 2 }, "/p"), {
      file_path: "/p/src/a.ts",
      offset: 2
    })
    assert.deepStrictEqual(claudeInput("glob", { pattern: "*.ts", path: "src" }, "/p"), {
      pattern: "*.ts",
      path: "/p/src"
    })
    assert.deepStrictEqual(claudeInput("read", { filePath: "/etc/hosts" }, "/p"), { file_path: "/etc/hosts" })
    assert.deepStrictEqual(claudeInput("bash", { command: "ls", description: "list" }), {
      command: "ls",
      description: "list"
    })
    assert.deepStrictEqual(applyUpdatedInput("edit", edit, { file_path: "/p/b.ts", new_string: "c" }), {
      ...edit,
      filePath: "/p/b.ts",
      newString: "c"
    })
    assert.deepStrictEqual(applyUpdatedInput("grep", { pattern: "x" }, { glob: "*.md" }), {
      pattern: "x",
      include: "*.md"
    })
    assert.deepStrictEqual(applyUpdatedInput("bash", { command: "ls" }, { command: "ls -la", timeout: 5 }), {
      command: "ls -la",
      timeout: 5
    })
  })
})

describe("matchers", () => {
  it("match everything when empty or *, names exactly, and anything else as a regular expression", () => {
    for (const all of [undefined, "", "*"]) assert.isTrue(matcher(all)("Anything"))
    assert.isTrue(matcher("Bash")("Bash"))
    assert.isFalse(matcher("Bash")("BashOutput"))
    assert.isTrue(matcher("Edit|Write")("Write"))
    assert.isFalse(matcher("Edit|Write")("MultiEdit"))
    assert.isTrue(matcher("mcp__github__.*")("mcp__github__create_issue"))
    assert.isFalse(matcher("mcp__github__.*")("mcp__gitlab__create_issue"))
    assert.isTrue(matcher("^Notebook")("NotebookEdit"))
    assert.isTrue(matcher(".*Edit")("MultiEdit"))
  })

  it("explains an invalid regular expression instead of throwing", () => {
    assert.typeOf(compileMatcher("Edit(|"), "string")
  })
})
