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

describe("apply_patch accepts what models send", () => {
  const body = ["*** Begin Patch", "*** Update File: a.txt", "@@", "-one", "+1", "*** End Patch"]

  it("unwraps a patch sent inside a here-document, with or without cat, whatever the quoting", async () => {
    const wrappers: Array<[string, string]> = [
      ["<<'EOF'", "EOF"],
      ['<<"EOF"', "EOF"],
      ["<<EOF", "EOF"],
      ["cat <<'EOF'", "EOF"],
      ['cat << "PATCH"', "PATCH"],
      ["cat <<-\\EOF", "EOF"],
      ["apply_patch <<'E\"O\"F'", "EOF"]
    ]
    for (const [start, end] of wrappers) {
      const h = harness()
      h.write("a.txt", "one\ntwo\n")
      const out = await run(tool, { patchText: [start, ...body, end, ""].join("\n") }, h.ctx())
      expect(out.output, start).toBe("Applied the patch:\nM a.txt")
      expect(readFileSync(h.path("a.txt"), "utf8"), start).toBe("1\ntwo\n")
    }
  })

  it("a wrapper whose closing delimiter does not match is still refused", async () => {
    const h = harness()
    h.write("a.txt", "one\n")
    const patchText = ["cat <<'EOF'", ...body, "END"].join("\n")
    expect((await runError(tool, { patchText }, h.ctx())).message).toBe(
      'The patch must start with "*** Begin Patch" on its first line.'
    )
    expect(readFileSync(h.path("a.txt"), "utf8")).toBe("one\n")
  })

  it("ignores blank space around the *** lines", async () => {
    const h = harness()
    h.write("a.txt", "one\n")
    h.write("b.txt", "gone\n")
    const patchText = [
      "  *** Begin Patch  ",
      "   *** Update File:   a.txt   ",
      "@@",
      "-one",
      "+1",
      "\t*** Delete File: b.txt ",
      "  *** Add File: c.txt\t",
      "+new",
      " *** End Patch "
    ].join("\n")
    const out = await run(tool, { patchText }, h.ctx())
    expect(out.output).toBe("Applied the patch:\nM a.txt\nD b.txt\nA c.txt")
    expect(readFileSync(h.path("a.txt"), "utf8")).toBe("1\n")
    expect(existsSync(h.path("b.txt"))).toBe(false)
    expect(readFileSync(h.path("c.txt"), "utf8")).toBe("new\n")
  })

  it("inside an update, a line of one space and header-like text stays a context line", async () => {
    const h = harness()
    h.write("notes.md", "*** Add File: x\nold\n")
    const text = patch("*** Update File: notes.md", "@@", " *** Add File: x", "-old", "+new")
    await run(tool, { patchText: text }, h.ctx())
    expect(readFileSync(h.path("notes.md"), "utf8")).toBe("*** Add File: x\nnew\n")
    expect(existsSync(h.path("x"))).toBe(false)
  })

  it("Add over an existing file overwrites it, says so, and shows the old content in the diff", async () => {
    const h = harness()
    h.write("a.txt", "old\n")
    const out = await run(tool, { patchText: patch("*** Add File: a.txt", "+fresh") }, h.ctx())
    expect(out.output).toBe("Applied the patch:\nA a.txt (overwrote the existing file)")
    expect(readFileSync(h.path("a.txt"), "utf8")).toBe("fresh\n")
    expect(String(out.metadata?.diff)).toContain("-old\n+fresh")
    expect(out.metadata?.files).toEqual([{ path: h.path("a.txt"), status: "A", overwrote: true }])
  })

  it("Move over an existing destination overwrites it; a move onto itself is an update", async () => {
    const h = harness()
    h.write("src.txt", "one\n")
    h.write("dest.txt", "in the way\n")
    const out = await run(
      tool,
      { patchText: patch("*** Update File: src.txt", "*** Move to: dest.txt", "@@", "-one", "+1") },
      h.ctx()
    )
    expect(out.output).toBe("Applied the patch:\nD src.txt\nA dest.txt (overwrote the existing file)")
    expect(existsSync(h.path("src.txt"))).toBe(false)
    expect(readFileSync(h.path("dest.txt"), "utf8")).toBe("1\n")

    const same = await run(
      tool,
      { patchText: patch("*** Update File: dest.txt", "*** Move to: ./dest.txt", "@@", "-1", "+2") },
      h.ctx()
    )
    expect(same.output).toBe("Applied the patch:\nM dest.txt")
    expect(readFileSync(h.path("dest.txt"), "utf8")).toBe("2\n")
  })

  it("an overwrite that fails later is rolled back to the old content", async () => {
    const h = harness()
    h.write("a.txt", "old\n")
    h.write("blocker", "a file where a folder is needed")
    const text = patch("*** Add File: a.txt", "+fresh", "*** Add File: blocker/c.txt", "+new")
    expect((await runError(tool, { patchText: text }, h.ctx())).message).toMatch(/^Applying the patch failed/)
    expect(readFileSync(h.path("a.txt"), "utf8")).toBe("old\n")
  })

  it("an empty patch, or one that changes nothing, is an error that says nothing was changed", async () => {
    const h = harness()
    h.write("a.txt", "a\n")
    const empty = await runError(tool, { patchText: "*** Begin Patch\n*** End Patch" }, h.ctx())
    expect(empty).toEqual({
      _tag: "ToolExecutionError",
      message:
        'The patch is empty: there is no *** Add File:, *** Delete File: or *** Update File: section between "*** Begin Patch" and "*** End Patch", so nothing was changed. Send the changes to make.'
    })
    const wrapped = await runError(tool, { patchText: "<<'EOF'\n*** Begin Patch\n*** End Patch\nEOF" }, h.ctx())
    expect(wrapped.message).toMatch(/^The patch is empty/)
    const noop = await runError(tool, { patchText: patch("*** Update File: a.txt", "@@", " a") }, h.ctx())
    expect(noop.message).toBe(
      "The patch changes nothing: every file it names already has the content it describes, so nothing was written. Read the files to see their current content."
    )
    expect(h.asks).toHaveLength(0)
  })

  it("an updated file ends with a newline, as the reference implementation writes it", async () => {
    const h = harness()
    h.write("plain.txt", "one\ntwo")
    h.write("crlf.txt", "one\r\ntwo")
    h.write("kept.txt", "one\ntwo\n")
    for (const name of ["plain.txt", "crlf.txt", "kept.txt"])
      await run(tool, { patchText: patch(`*** Update File: ${name}`, "@@", "-one", "+1") }, h.ctx())
    expect(readFileSync(h.path("plain.txt"), "utf8")).toBe("1\ntwo\n")
    expect(readFileSync(h.path("crlf.txt"), "utf8")).toBe("1\r\ntwo\r\n")
    expect(readFileSync(h.path("kept.txt"), "utf8")).toBe("1\ntwo\n")
    await run(tool, { patchText: patch("*** Update File: plain.txt", "@@", "-two", "+2", "*** End of File") }, h.ctx())
    expect(readFileSync(h.path("plain.txt"), "utf8")).toBe("1\n2\n")
  })
})
