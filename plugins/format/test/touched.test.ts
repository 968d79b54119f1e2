import { describe, expect, it } from "@effect/vitest"
import { patchPaths, touchedPaths } from "../src/touched.js"

const patch = [
  "*** Begin Patch",
  "*** Add File: src/new.ts",
  "+*** Update File: not-a-header.ts",
  "+export const a = 1",
  "*** Update File: src/old.ts",
  "*** Move to: src/moved.ts",
  "@@",
  "-a",
  "+b",
  "*** Delete File: src/gone.ts",
  "*** Update File: src/kept.py",
  "@@ def f():",
  "-    pass",
  "+    return 1",
  "*** End of File",
  "*** End Patch"
].join("\n")

describe("patchPaths", () => {
  it("lists added and updated files, a move's destination instead of its source, and no deleted file", () => {
    expect(patchPaths(patch)).toEqual(["src/new.ts", "src/moved.ts", "src/kept.py"])
  })

  it("tolerates CRLF, indentation and garbage, and lists each path once", () => {
    expect(patchPaths("  *** Add File: a.ts\r\n*** Update File: a.ts\r\nnonsense\r\n*** Move to: b.ts")).toEqual([
      "a.ts",
      "b.ts"
    ])
    expect(patchPaths("not a patch")).toEqual([])
  })
})

describe("touchedPaths", () => {
  it("reads filePath for write, edit and multiedit", () => {
    for (const tool of ["write", "edit", "multiedit"])
      expect(touchedPaths(tool, { filePath: "a.ts" })).toEqual(["a.ts"])
  })

  it("reads the patch of apply_patch", () => {
    expect(touchedPaths("apply_patch", { patchText: patch })).toHaveLength(3)
  })

  it("finds nothing for other tools or arguments of the wrong shape", () => {
    expect(touchedPaths("read", { filePath: "a.ts" })).toEqual([])
    expect(touchedPaths("write", { filePath: 42 })).toEqual([])
    expect(touchedPaths("apply_patch", { patch: "x" })).toEqual([])
  })
})
