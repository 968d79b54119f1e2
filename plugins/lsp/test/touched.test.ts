import { assert, describe, it } from "vitest"
import { editedPaths } from "../src/touched.js"

describe("editedPaths", () => {
  it("takes filePath from write, edit and multiedit, and nothing from other tools", () => {
    for (const tool of ["write", "edit", "multiedit"])
      assert.deepStrictEqual(editedPaths(tool, { filePath: "src/a.ts" }), ["src/a.ts"])
    assert.deepStrictEqual(editedPaths("read", { filePath: "src/a.ts" }), [])
    assert.deepStrictEqual(editedPaths("write", { filePath: 3 }), [])
  })

  it("takes the added, updated and moved-to files of an apply_patch patch, not deleted or moved-from ones", () => {
    const patchText = [
      "*** Begin Patch",
      "*** Add File: new.ts",
      "+export const x = 1",
      "*** Update File: old.ts",
      "*** Move to: moved.ts",
      "@@",
      "-a",
      "+b",
      "*** Delete File: gone.ts",
      "*** Update File: kept.py",
      "@@",
      " x",
      "*** End Patch"
    ].join("\n")
    assert.deepStrictEqual(editedPaths("apply_patch", { patchText }), ["new.ts", "moved.ts", "kept.py"])
  })
})
