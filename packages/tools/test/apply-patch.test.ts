import { existsSync, readFileSync } from "node:fs"
import { describe, expect, it } from "@effect/vitest"
import { createApplyPatchTool } from "../src/apply-patch.js"
import { ToolState } from "../src/state.js"
import { harness, run, runError } from "./helpers.js"

const tool = createApplyPatchTool(new ToolState())
const patch = (...body: Array<string>) => ["*** Begin Patch", ...body, "*** End Patch"].join("\n")

describe("apply_patch", () => {
  it("adds, updates, deletes and moves files in one call", async () => {
    const h = harness()
    h.write("src/app.ts", "function main() {\n  const x = load()\n  run(x)\n}\n\nfunction other() {\n  run(x)\n}\n")
    h.write("src/old.ts", "old\n")
    h.write("src/name.ts", 'const name = "old"\r\nexport {}\r\n')
    const text = patch(
      "*** Add File: src/new.ts",
      "+export const a = 1",
      "*** Update File: src/app.ts",
      "@@ function other() {",
      "-  run(x)",
      "+  run(x, { fast: true })",
      "*** Delete File: src/old.ts",
      "*** Update File: src/name.ts",
      "*** Move to: src/renamed.ts",
      "@@",
      '-const name = "old"',
      '+const name = "new"'
    )
    const out = await run(tool, { patchText: text }, h.ctx())
    expect(out.output).toBe(
      "Applied the patch:\nA src/new.ts\nM src/app.ts\nD src/old.ts\nD src/name.ts\nA src/renamed.ts"
    )
    expect(readFileSync(h.path("src/new.ts"), "utf8")).toBe("export const a = 1\n")
    expect(readFileSync(h.path("src/app.ts"), "utf8")).toBe(
      "function main() {\n  const x = load()\n  run(x)\n}\n\nfunction other() {\n  run(x, { fast: true })\n}\n"
    )
    expect(existsSync(h.path("src/old.ts"))).toBe(false)
    expect(existsSync(h.path("src/name.ts"))).toBe(false)
    expect(readFileSync(h.path("src/renamed.ts"), "utf8")).toBe('const name = "new"\r\nexport {}\r\n')
    expect(h.asks).toHaveLength(1)
    expect(h.asks[0]).toMatchObject({
      permission: "edit",
      patterns: ["src/new.ts", "src/app.ts", "src/old.ts", "src/name.ts", "src/renamed.ts"]
    })
  })

  it("tolerates trailing whitespace differences and anchors End of File chunks", async () => {
    const h = harness()
    h.write("a.txt", "x  \ny\nx\n")
    await run(tool, { patchText: patch("*** Update File: a.txt", "@@", "-x", "+z", "*** End of File") }, h.ctx())
    expect(readFileSync(h.path("a.txt"), "utf8")).toBe("x  \ny\nz\n")
  })

  it("is atomic: one chunk that does not fit changes nothing", async () => {
    const h = harness()
    h.write("a.txt", "one\n")
    h.write("b.txt", "two\n")
    const text = patch("*** Update File: a.txt", "-one", "+1", "*** Update File: b.txt", "-three", "+3")
    expect(await runError(tool, { patchText: text }, h.ctx())).toEqual({
      _tag: "ToolExecutionError",
      message: "Could not find these lines in b.txt:\nthree"
    })
    expect(readFileSync(h.path("a.txt"), "utf8")).toBe("one\n")
    expect(h.asks).toHaveLength(0)
  })

  it("rolls back files already written when a later write fails", async () => {
    const h = harness()
    h.write("a.txt", "one\n")
    h.write("blocker", "a file where a folder is needed")
    const text = patch("*** Update File: a.txt", "-one", "+1", "*** Add File: blocker/c.txt", "+new")
    const error = await runError(tool, { patchText: text }, h.ctx())
    expect(error.message).toMatch(
      /^Applying the patch failed \(.*\)\. Every file was restored to its state before the patch\.$/
    )
    expect(readFileSync(h.path("a.txt"), "utf8")).toBe("one\n")
    expect(h.asks).toHaveLength(1)
  })

  it("explains malformed patches and impossible operations", async () => {
    const h = harness()
    h.write("a.txt", "a\n")
    const cases: Array<[string, string]> = [
      ["*** Update File: a.txt\n-a\n+b", 'The patch must start with "*** Begin Patch" on its first line.'],
      [
        patch("*** Frobnicate: a.txt"),
        'Invalid patch at line 2: "*** Frobnicate: a.txt". Expected *** Add File:, *** Delete File: or *** Update File:.'
      ],
      [
        patch("*** Add File: n.txt", "oops"),
        'Invalid patch at line 3: "oops". Every line of an added file starts with +.'
      ],
      [patch("*** Add File: a.txt", "+x"), "Cannot add a.txt: it already exists. Use *** Update File."],
      [patch("*** Delete File: gone.txt"), "Cannot delete gone.txt: the file does not exist."],
      [patch("*** Update File: a.txt", "@@ nowhere", "-a", "+b"), 'Could not find the line "@@ nowhere" in a.txt.']
    ]
    for (const [patchText, message] of cases)
      expect((await runError(tool, { patchText }, h.ctx())).message).toBe(message)
  })

  it("a rejected edit writes nothing", async () => {
    const h = harness()
    h.mode = "reject"
    expect((await runError(tool, { patchText: patch("*** Add File: n.txt", "+x") }, h.ctx()))._tag).toBe(
      "PermissionRejected"
    )
    expect(existsSync(h.path("n.txt"))).toBe(false)
  })
})
