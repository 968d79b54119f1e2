import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { AnyTool, ToolRunContext } from "@lathe/plugin"
import { createEditTool, createWriteTool, ToolState } from "@lathe/tools"
import { Effect } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { createStyle } from "../src/style.js"
import { diffCounts, renderDiff } from "../src/tui/diff.js"
import { displayWidth } from "../src/wrap.js"

const on = createStyle(true)
const off = createStyle(false)

const dirs: Array<string> = []
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

/** Runs a real tool in a temp project that allows everything, and returns the diff it put in its metadata. */
const toolDiff = async (tool: AnyTool, args: unknown, files: Record<string, string> = {}): Promise<string> => {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "lathe-tui-diff-")))
  dirs.push(root)
  for (const [path, content] of Object.entries(files)) writeFileSync(join(root, path), content)
  const ctx: ToolRunContext = {
    sessionID: "ses_test",
    messageID: "msg_1",
    callID: "call_1",
    agent: "build",
    directory: root,
    root,
    abort: new AbortController().signal,
    ask: async () => {},
    metadata: () => {}
  }
  const out = await Effect.runPromise(tool.run(args, ctx))
  const diff = out.metadata.diff
  if (typeof diff !== "string") throw new Error("the tool put no diff in its metadata")
  return diff
}

const SOURCE = Array.from({ length: 12 }, (_, i) => `line ${i + 1}`).join("\n")

// What apply_patch puts in metadata.diff for two files: one patch per file, joined with a newline.
const TWO_FILES = `Index: a.txt
===================================================================
--- a.txt
+++ a.txt
@@ -1,2 +1,2 @@
-old
+new
 same
\\ No newline at end of file

Index: b.txt
===================================================================
--- b.txt
+++ b.txt
@@ -0,0 +1,1 @@
+created
`

describe("renderDiff", () => {
  it("renders a real edit diff: one file header, the hunk header, numbered lines", async () => {
    const diff = await toolDiff(
      createEditTool(new ToolState()),
      { filePath: "f.txt", oldString: "line 8", newString: "line eight\nline 8.5" },
      { "f.txt": SOURCE }
    )
    expect(renderDiff(diff, 40, off)).toEqual([
      "f.txt",
      "@@ -5,7 +5,8 @@",
      " 5   line 5",
      " 6   line 6",
      " 7   line 7",
      " 8 - line 8",
      " 8 + line eight",
      " 9 + line 8.5",
      "10   line 9",
      "11   line 10",
      "12   line 11"
    ])
    expect(diffCounts(diff)).toEqual({ additions: 2, deletions: 1 })
  })

  it("colours file headers bold, hunks cyan, additions green, deletions red, context dim", async () => {
    const diff = await toolDiff(
      createEditTool(new ToolState()),
      { filePath: "f.txt", oldString: "line 2", newString: "two" },
      {
        "f.txt": SOURCE
      }
    )
    const lines = renderDiff(diff, 40, on)
    expect(lines[0]).toBe("\x1b[1mf.txt\x1b[22m")
    expect(lines[1]).toBe("\x1b[36m@@ -1,5 +1,5 @@\x1b[39m")
    expect(lines).toContain("\x1b[2m1\x1b[22m \x1b[2m \x1b[22m \x1b[2mline 1\x1b[22m")
    expect(lines).toContain("\x1b[2m2\x1b[22m \x1b[31m-\x1b[39m \x1b[31mline 2\x1b[39m")
    expect(lines).toContain("\x1b[2m2\x1b[22m \x1b[32m+\x1b[39m \x1b[32mtwo\x1b[39m")
    expect(renderDiff(diff, 40, off).join("\n")).not.toMatch(new RegExp(String.fromCharCode(27)))
  })

  it("renders a real write diff of a new file", async () => {
    const diff = await toolDiff(createWriteTool(new ToolState()), { filePath: "new.ts", content: "a\nb\n" })
    expect(renderDiff(diff, 30, off)).toEqual(["new.ts", "@@ -0,0 +1,2 @@", "1 + a", "2 + b"])
    expect(diffCounts(diff)).toEqual({ additions: 2, deletions: 0 })
  })

  it("renders several files as apply_patch joins them, a blank line between files", () => {
    expect(renderDiff(TWO_FILES, 30, off)).toEqual([
      "a.txt",
      "@@ -1,2 +1,2 @@",
      "1 - old",
      "1 + new",
      "2   same",
      "\\ No newline at end of file",
      "",
      "b.txt",
      "@@ -0,0 +1,1 @@",
      "1 + created"
    ])
    expect(diffCounts(TWO_FILES)).toEqual({ additions: 2, deletions: 1 })
  })

  it("wraps long lines under the text, never past the width", () => {
    const diff = "--- a\n+++ a\n@@ -1,1 +1,1 @@\n-short\n+a long added line that needs wrapping\n"
    expect(renderDiff(diff, 20, off)).toEqual([
      "a",
      "@@ -1,1 +1,1 @@",
      "1 - short",
      "1 + a long added lin",
      "    e that needs wra",
      "    pping"
    ])
    for (let width = 1; width <= 60; width++)
      for (const line of renderDiff(TWO_FILES + diff, width, on))
        expect(displayWidth(line)).toBeLessThanOrEqual(Math.max(10, width))
  })

  it("stops after maxLines with one line saying how many more", () => {
    expect(renderDiff(TWO_FILES, 30, off, { maxLines: 3 })).toEqual([
      "a.txt",
      "@@ -1,2 +1,2 @@",
      "1 - old",
      "… 7 more lines"
    ])
    expect(renderDiff(TWO_FILES, 30, off, { maxLines: 9 }).at(-1)).toBe("… 1 more line")
    expect(renderDiff(TWO_FILES, 30, off, { maxLines: 10 })).toHaveLength(10)
  })

  it("counts by the hunk header, so removed lines starting with -- are not file headers", () => {
    const diff = "--- a.md\n+++ a.md\n@@ -1,2 +1,1 @@\n--- a rule\n-++ plus\n"
    expect(diffCounts(diff)).toEqual({ additions: 0, deletions: 2 })
    expect(renderDiff(diff, 30, off)).toEqual(["a.md", "@@ -1,2 +1,1 @@", "1 - -- a rule", "2 - ++ plus"])
  })

  it("shows renames and deletions in the header, and git's a/ b/ prefixes are dropped", () => {
    const renamed =
      "diff --git a/x.ts b/y.ts\nindex 1234567..89abcde 100644\n--- a/x.ts\n+++ b/y.ts\n@@ -1 +1 @@\n-x\n+y\n"
    expect(renderDiff(renamed, 30, off)[0]).toBe("x.ts → y.ts")
    expect(renderDiff("--- gone.ts\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n", 30, off)[0]).toBe("gone.ts (deleted)")
  })
})
