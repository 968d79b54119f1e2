import crypto from "node:crypto"
import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it, vi } from "@effect/vitest"
import { createEditTool } from "../src/edit.js"
import { createMultiEditTool } from "../src/multiedit.js"
import { ToolState } from "../src/state.js"
import { harness, run, runError } from "./helpers.js"

const setup = () => {
  const state = new ToolState()
  return { state, edit: createEditTool(state), multiedit: createMultiEditTool(state), h: harness() }
}

describe("edit", () => {
  it("edits a CRLF file with a BOM, keeps both, returns a diff and the changed range", async () => {
    const { state, edit, h } = setup()
    const file = h.write("src/a.ts", "\uFEFFconst a = 1\r\n    const b = 2\r\nexport {}\r\n")
    const out = await run(
      edit,
      { filePath: "src/a.ts", oldString: "const b = 2", newString: "const b = 3\nconst c = 4" },
      h.ctx()
    )
    expect(readFileSync(file, "utf8")).toBe("\uFEFFconst a = 1\r\n    const b = 3\r\nconst c = 4\r\nexport {}\r\n")
    expect(out.output.split("\n").slice(0, 2)).toEqual(["Edited src/a.ts: lines 2-3 changed.", ""])
    expect(out.output).toContain("-    const b = 2\n+    const b = 3\n+const c = 4")
    expect(out.metadata).toMatchObject({ startLine: 2, endLine: 3, matchers: ["exact"], additions: 2, deletions: 1 })
    expect(h.asks[0]).toMatchObject({ permission: "edit", patterns: ["src/a.ts"] })
    expect(state.lastRead("ses_test", file)?.mtimeMs).toBe(statSync(file).mtimeMs)
  })

  it("an empty oldString creates a new file", async () => {
    const { edit, h } = setup()
    await run(edit, { filePath: "new/file.md", oldString: "", newString: "# Title\n" }, h.ctx())
    expect(readFileSync(h.path("new/file.md"), "utf8")).toBe("# Title\n")
  })

  it("an empty oldString on a file with content is refused", async () => {
    const { edit, h } = setup()
    h.write("a.txt", "x")
    expect((await runError(edit, { filePath: "a.txt", oldString: "", newString: "y" }, h.ctx())).message).toBe(
      "oldString is empty, which creates a new file, but a.txt already has content. Put the text to replace in oldString, or use the write tool to replace the whole file."
    )
  })

  it("a missing file says how to create one", async () => {
    const { edit, h } = setup()
    expect(await runError(edit, { filePath: "nope.ts", oldString: "a", newString: "b" }, h.ctx())).toEqual({
      _tag: "ToolExecutionError",
      message:
        "File not found: nope.ts. To create a new file, call edit with an empty oldString, or use the write tool."
    })
  })

  it("oldString equal to newString is an error the model sees", async () => {
    const { edit, h } = setup()
    h.write("a.txt", "x")
    expect((await runError(edit, { filePath: "a.txt", oldString: "x", newString: "x" }, h.ctx())).message).toBe(
      "No changes to apply: oldString and newString are identical."
    )
  })

  it("identical oldString and newString are an error, both empty included, and nothing is written", async () => {
    const { edit, multiedit, h } = setup()
    const both =
      "No changes to apply: oldString and newString are both empty. Put the text to replace in oldString and its replacement in newString; to create an empty file, use the write tool."
    expect(await runError(edit, { filePath: "new.txt", oldString: "", newString: "" }, h.ctx())).toEqual({
      _tag: "ToolExecutionError",
      message: both
    })
    expect(existsSync(h.path("new.txt"))).toBe(false)
    const empty = h.write("empty.txt", "")
    expect((await runError(edit, { filePath: "empty.txt", oldString: "", newString: "" }, h.ctx())).message).toBe(both)
    const file = h.write("a.txt", "x\r\ny\r\n")
    const crlf = await runError(edit, { filePath: "a.txt", oldString: "x\r\ny", newString: "x\ny" }, h.ctx())
    expect(crlf.message).toBe("No changes to apply: oldString and newString are identical.")
    const second = [
      { oldString: "x", newString: "z" },
      { oldString: "y", newString: "y" }
    ]
    expect((await runError(multiedit, { filePath: "a.txt", edits: second }, h.ctx())).message).toBe(
      "Edit 2 of 2 failed: No changes to apply: oldString and newString are identical.\nNo edits were applied."
    )
    expect(readFileSync(file, "utf8")).toBe("x\r\ny\r\n")
    expect(readFileSync(empty, "utf8")).toBe("")
    expect(h.asks).toHaveLength(0)
  })

  it("edits that leave the file as it was are an error, not a success", async () => {
    const { edit, multiedit, h } = setup()
    const file = h.write("a.txt", "  spaced line\n")
    const tolerant = await runError(
      edit,
      { filePath: "a.txt", oldString: "spaced line ", newString: "spaced line" },
      h.ctx()
    )
    expect(tolerant.message).toBe(
      "No changes to apply: the edit leaves a.txt exactly as it was (the text that matched already reads as newString). Read the file to see its current content."
    )
    const undo = [
      { oldString: "spaced", newString: "SPACED" },
      { oldString: "SPACED", newString: "spaced" }
    ]
    expect((await runError(multiedit, { filePath: "a.txt", edits: undo }, h.ctx())).message).toMatch(
      /^No changes to apply/
    )
    expect(readFileSync(file, "utf8")).toBe("  spaced line\n")
    expect(h.asks).toHaveLength(0)
  })

  it("a denied edit writes nothing", async () => {
    const { edit, h } = setup()
    const file = h.write("a.txt", "x")
    h.mode = "deny"
    expect((await runError(edit, { filePath: "a.txt", oldString: "x", newString: "y" }, h.ctx()))._tag).toBe(
      "PermissionDenied"
    )
    expect(readFileSync(file, "utf8")).toBe("x")
  })

  // Texts up to 1 MiB are read and written with synchronous calls, larger ones through the thread pool: both keep the
  // file's mode, write whole files by rename, and leave no temp file behind.
  it.each([
    ["a small file (synchronous calls)", 10],
    ["a file over 1 MiB (thread pool)", 120_000]
  ])("edits %s: mode kept, no temp file left, new folders made", async (_, lines) => {
    const { state, edit, h } = setup()
    const body = Array.from({ length: lines }, (_, i) => `line ${i}`).join("\n")
    const file = h.write("bin/run.sh", `#!/bin/sh\n${body}\nend\n`)
    chmodSync(file, 0o750)
    await run(edit, { filePath: "bin/run.sh", oldString: "end", newString: "done" }, h.ctx())
    expect(readFileSync(file, "utf8")).toBe(`#!/bin/sh\n${body}\ndone\n`)
    expect(statSync(file).mode & 0o777).toBe(0o750)
    expect(readdirSync(h.path("bin"))).toEqual(["run.sh"])
    expect(state.lastRead("ses_test", file)?.size).toBe(statSync(file).size)
    await run(edit, { filePath: "new/deep/file.txt", oldString: "", newString: body }, h.ctx())
    expect(readFileSync(h.path("new/deep/file.txt"), "utf8")).toBe(body)
  })

  it("edits a file whose name is as long as the file system allows (the temp file's name stays within it)", async () => {
    const { edit, h } = setup()
    const name = `${"n".repeat(250)}.txt`
    const file = h.write(name, "x")
    await run(edit, { filePath: name, oldString: "x", newString: "y" }, h.ctx())
    expect(readFileSync(file, "utf8")).toBe("y")
    expect(readdirSync(h.root)).toEqual([name])
  })

  it.each([
    ["a small file (synchronous calls)", 10],
    ["a file over 1 MiB (thread pool)", 120_000]
  ])("never writes through a link placed at its temp file's name: %s", async (_, lines) => {
    const { edit, h } = setup()
    const body = `${Array.from({ length: lines }, (_, i) => `line ${i}`).join("\n")}\nend\n`
    const file = h.write("a.txt", body)
    const victim = h.write("victim.txt", "not to be written\n")
    // Someone who guessed the temp file's name (the random part made predictable here) placed a link there.
    const guessed = "00000000-0000-4000-8000-000000000000"
    const pick = vi.spyOn(crypto, "randomUUID").mockReturnValue(guessed)
    try {
      symlinkSync(victim, h.path(".a.txt.lathe-00000000.tmp"))
      const error = await runError(edit, { filePath: "a.txt", oldString: "end", newString: "done" }, h.ctx())
      expect(error.message).toMatch(/EEXIST/)
    } finally {
      pick.mockRestore()
    }
    expect(readFileSync(victim, "utf8")).toBe("not to be written\n")
    expect(readFileSync(file, "utf8")).toBe(body)
    // What was at that name is not the edit's to remove.
    expect(lstatSync(h.path(".a.txt.lathe-00000000.tmp")).isSymbolicLink()).toBe(true)
  })

  it("a folder in the way of a new file's folder is an error, nothing written", async () => {
    const { edit, h } = setup()
    h.write("taken", "a file where a folder would go")
    mkdirSync(h.path("other"))
    expect((await runError(edit, { filePath: "taken/x.txt", oldString: "", newString: "y" }, h.ctx())).message).toMatch(
      /ENOTDIR|EEXIST/
    )
    expect(existsSync(join(h.path("taken")))).toBe(true)
    expect(readFileSync(h.path("taken"), "utf8")).toBe("a file where a folder would go")
  })
})

describe("multiedit", () => {
  it("applies edits in order, each on the result of the previous", async () => {
    const { multiedit, h } = setup()
    const file = h.write("a.ts", "let a = 1\nlet b = 2\n")
    const edits = [
      { oldString: "let a = 1", newString: "let a = 10" },
      { oldString: "a = 10", newString: "a = 11" },
      { oldString: "let", newString: "const", replaceAll: true }
    ]
    await run(multiedit, { filePath: "a.ts", edits }, h.ctx())
    expect(readFileSync(file, "utf8")).toBe("const a = 11\nconst b = 2\n")
    expect(h.asks).toHaveLength(1)
  })

  it("is all or nothing, and names the failing edit", async () => {
    const { multiedit, h } = setup()
    const file = h.write("a.ts", "one\ntwo\n")
    const edits = [
      { oldString: "one", newString: "1" },
      { oldString: "three", newString: "3" }
    ]
    expect((await runError(multiedit, { filePath: "a.ts", edits }, h.ctx())).message).toBe(
      "Edit 2 of 2 failed: Could not find oldString in a.ts. Differences in whitespace, indentation, line endings and escaping were tolerated and still nothing matched.\n" +
        "Nothing in the file resembles it; read the file to see its current contents.\nNo edits were applied."
    )
    expect(readFileSync(file, "utf8")).toBe("one\ntwo\n")
    expect(h.asks).toHaveLength(0)
  })

  it("needs at least one edit", async () => {
    const { multiedit, h } = setup()
    expect((await runError(multiedit, { filePath: "a.ts", edits: [] }, h.ctx())).message).toBe(
      "The multiedit tool was called with invalid arguments:\n- edits: Too small: expected array to have >=1 items\nRewrite the input so it satisfies the tool's schema and call it again."
    )
  })
})
