/**
 * Bring your setup: the tools that read or change one file declare it (`paths`), so the loop can load the nested
 * `AGENTS.md` of its folder; the searches and the shell declare nothing (too broad).
 */
import { assert, describe, it } from "@effect/vitest"
import { createTools } from "../src/index.js"

const byId = new Map(createTools({ ripgrep: false }).map((tool) => [tool.id, tool]))
const pathsOf = (id: string, args: unknown) => byId.get(id)?.paths?.(args)

describe("setup-rules: tools declare the files they touch", () => {
  it("read, edit, multiedit and write name their filePath", () => {
    assert.deepStrictEqual(pathsOf("read", { filePath: "packages/api/src/x.ts" }), ["packages/api/src/x.ts"])
    assert.deepStrictEqual(pathsOf("edit", { filePath: "/abs/a.ts", oldString: "a", newString: "b" }), ["/abs/a.ts"])
    assert.deepStrictEqual(pathsOf("multiedit", { filePath: "b.ts", edits: [{ oldString: "a", newString: "b" }] }), [
      "b.ts"
    ])
    assert.deepStrictEqual(pathsOf("write", { filePath: "~/notes.md", content: "" }), ["~/notes.md"])
  })

  it("apply_patch names every file of the patch, a move's target too; a patch it cannot parse names none", () => {
    const patch = [
      "*** Begin Patch",
      "*** Add File: packages/api/new.ts",
      "+export {}",
      "*** Update File: packages/web/old.ts",
      "*** Move to: packages/web/moved.ts",
      "@@",
      "-a",
      "+b",
      "*** Delete File: gone.ts",
      "*** End Patch"
    ].join("\n")
    assert.deepStrictEqual(pathsOf("apply_patch", { patchText: patch }), [
      "packages/api/new.ts",
      "packages/web/old.ts",
      "packages/web/moved.ts",
      "gone.ts"
    ])
    assert.deepStrictEqual(pathsOf("apply_patch", { patchText: "not a patch" }), [])
  })

  it("arguments that do not fit the schema name nothing; searches and the shell declare no paths", () => {
    assert.deepStrictEqual(pathsOf("read", { path: "x.ts" }), [])
    for (const id of ["glob", "grep", "list", "bash", "webfetch"]) assert.isUndefined(byId.get(id)?.paths, id)
  })
})
