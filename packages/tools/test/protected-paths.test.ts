import { readFileSync, symlinkSync } from "node:fs"
import { describe, expect, it } from "@effect/vitest"
import { createApplyPatchTool } from "../src/apply-patch.js"
import { createEditTool } from "../src/edit.js"
import { createMultiEditTool } from "../src/multiedit.js"
import { createReadTool } from "../src/read.js"
import { ToolState } from "../src/state.js"
import { createWriteTool } from "../src/write.js"
import { type Harness, harness, run, runError } from "./helpers.js"

const setup = () => {
  const state = new ToolState()
  const h = harness()
  // A person (or `lathe run` without a terminal) refuses every protected_path ask; everything else is allowed.
  h.mode = (request) => (request.permission === "protected_path" ? "reject" : "allow")
  return {
    h,
    read: createReadTool(state),
    write: createWriteTool(state),
    edit: createEditTool(state),
    multiedit: createMultiEditTool(state),
    patch: createApplyPatchTool(state)
  }
}
const protectedAsks = (h: Harness) => h.asks.filter((ask) => ask.permission === "protected_path")

describe("the file tools ask a person before changing a protected path", () => {
  it("write to .git/config asks protected_path (person only), says what it is, and leaves the file alone", async () => {
    const { h, read, write } = setup()
    h.write(".git/config", "[core]\n")
    await run(read, { filePath: ".git/config" }, h.ctx())
    const error = await runError(
      write,
      { filePath: ".git/config", content: '[core]\n\tfsmonitor = "touch /tmp/x; false"\n' },
      h.ctx()
    )
    expect(error._tag).toBe("PermissionRejected")
    expect(readFileSync(h.path(".git/config"), "utf8")).toBe("[core]\n")
    const [ask] = protectedAsks(h)
    expect(ask).toMatchObject({ patterns: [".git/config"], always: [".git/config"], requiresPerson: true })
    expect(ask?.metadata?.what).toMatch(/^git's configuration: git runs programs it names/)
    expect(String(ask?.metadata?.diff)).toContain("fsmonitor")
  })

  it("a symlink to .git/config is judged by where it leads", async () => {
    const { h, read, write } = setup()
    h.write(".git/config", "[core]\n")
    symlinkSync(h.path(".git/config"), h.path("innocent.txt"))
    await run(read, { filePath: "innocent.txt" }, h.ctx())
    await runError(write, { filePath: "innocent.txt", content: "[core]\n\thooksPath = /tmp\n" }, h.ctx())
    expect(protectedAsks(h)[0]?.patterns).toEqual([".git/config"])
    expect(readFileSync(h.path(".git/config"), "utf8")).toBe("[core]\n")
  })

  it("a link named lathe.json is protected by its name, wherever it leads", async () => {
    const { h, edit } = setup()
    h.write("conf/settings.json", "{}\n")
    symlinkSync("conf/settings.json", h.path("lathe.json"))
    await runError(edit, { filePath: "lathe.json", oldString: "{}", newString: '{"permission":"allow"}' }, h.ctx())
    expect(protectedAsks(h)[0]?.patterns).toEqual(["lathe.json"])
    expect(readFileSync(h.path("conf/settings.json"), "utf8")).toBe("{}\n")
  })

  it("edit creating a git hook, multiedit of Claude's settings, a nested repository's config: all asked", async () => {
    const { h, edit, multiedit, read } = setup()
    await runError(edit, { filePath: ".git/hooks/pre-commit", oldString: "", newString: "#!/bin/sh\n" }, h.ctx())
    h.write(".claude/settings.json", '{"hooks":{}}\n')
    await run(read, { filePath: ".claude/settings.json" }, h.ctx())
    await runError(
      multiedit,
      { filePath: ".claude/settings.json", edits: [{ oldString: "{}", newString: '{"x":1}' }] },
      h.ctx()
    )
    await runError(edit, { filePath: "vendor/lib/.git/config", oldString: "", newString: "[core]\n" }, h.ctx())
    expect(protectedAsks(h).map((ask) => ask.patterns[0])).toEqual([
      ".git/hooks/pre-commit",
      ".claude/settings.json",
      "vendor/lib/.git/config"
    ])
  })

  it("apply_patch asks for each protected file it adds, deletes or moves to, and writes nothing when refused", async () => {
    const { h, patch } = setup()
    h.write(".mcp.json", "{}\n")
    h.write("a.txt", "a\n")
    const patchText = [
      "*** Begin Patch",
      "*** Add File: .lathe/plugins/x.mjs",
      "+export default {}",
      "*** Delete File: .mcp.json",
      "*** Update File: a.txt",
      "*** Move to: opencode.json",
      "@@",
      "-a",
      "+{}",
      "*** End Patch"
    ].join("\n")
    const error = await runError(patch, { patchText }, h.ctx())
    expect(error._tag).toBe("PermissionRejected")
    expect(readFileSync(h.path(".mcp.json"), "utf8")).toBe("{}\n")
    expect(readFileSync(h.path("a.txt"), "utf8")).toBe("a\n")
    expect(protectedAsks(h).map((ask) => ask.patterns[0])).toEqual([".lathe/plugins/x.mjs"])

    h.mode = (request) =>
      request.permission === "protected_path" && request.patterns[0] === "opencode.json" ? "reject" : "allow"
    await runError(patch, { patchText }, h.ctx())
    expect(
      protectedAsks(h)
        .map((ask) => ask.patterns[0])
        .slice(1)
    ).toEqual([".lathe/plugins/x.mjs", ".mcp.json", "opencode.json"])
  })

  it("ordinary files and other parts of .git are not asked", async () => {
    const { h, write } = setup()
    await run(write, { filePath: "src/index.ts", content: "export {}\n" }, h.ctx())
    await run(write, { filePath: ".git/description", content: "x\n" }, h.ctx())
    await run(write, { filePath: "sub/.mcp.json", content: "{}\n" }, h.ctx())
    expect(protectedAsks(h)).toEqual([])
  })
})
