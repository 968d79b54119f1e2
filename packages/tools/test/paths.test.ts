/**
 * Write routes of the file tools against real folders and symlinks: every way a path can leave the project
 * (`..`, `~`, absolute paths, a sibling folder sharing the project's name as a prefix, symlinks to files and
 * folders outside, dangling symlinks) is an `external_directory` ask, and a refused ask writes nothing.
 */
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync
} from "node:fs"
import { homedir } from "node:os"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "@effect/vitest"
import type { PermissionRequest } from "@lathe/plugin"
import { createApplyPatchTool } from "../src/apply-patch.js"
import { createEditTool } from "../src/edit.js"
import { createGlobTool } from "../src/glob.js"
import { createListTool } from "../src/list.js"
import { createMultiEditTool } from "../src/multiedit.js"
import { isWithin, realPathOf, resolvePath } from "../src/paths.js"
import { ToolState } from "../src/state.js"
import { createWriteTool } from "../src/write.js"
import { harness, run, runError, tempDir } from "./helpers.js"

const extra: Array<string> = []
afterEach(() => {
  for (const dir of extra.splice(0)) rmSync(dir, { recursive: true, force: true })
})

/** A project harness whose external asks are refused (and recorded), and a folder outside it. */
const setup = () => {
  const state = new ToolState()
  const h = harness()
  h.mode = (request: PermissionRequest) => (request.permission === "external_directory" ? "reject" : "allow")
  const outside = tempDir("lathe-outside-")
  return {
    h,
    outside,
    write: createWriteTool(state),
    edit: createEditTool(state),
    multiedit: createMultiEditTool(state),
    patch: createApplyPatchTool(state),
    external: () => h.asks.filter((ask) => ask.permission === "external_directory").map((ask) => ask.patterns[0])
  }
}

const REJECTED = "PermissionRejected"

describe("file tool paths: every route out of the project asks external_directory", () => {
  it("a `..` escape is outside, and a refusal writes nothing", async () => {
    const { h, write, external } = setup()
    const name = `lathe-escape-${Date.now()}.txt`
    const args = { filePath: `sub/../../${name}`, content: "x" }
    expect((await runError(write, args, h.ctx()))._tag).toBe(REJECTED)
    expect(external()).toEqual([join(realpathSync(join(h.root, "..")), "*")])
    expect(existsSync(join(h.root, "..", name))).toBe(false)
  })

  it("an absolute path outside is outside", async () => {
    const { h, outside, write, external } = setup()
    expect((await runError(write, { filePath: join(outside, "a.txt"), content: "x" }, h.ctx()))._tag).toBe(REJECTED)
    expect(external()).toEqual([join(outside, "*")])
    expect(existsSync(join(outside, "a.txt"))).toBe(false)
  })

  it("a sibling folder whose name starts with the project's name is outside", async () => {
    const { h, write, external } = setup()
    const sibling = `${h.root}-evil`
    mkdirSync(sibling)
    extra.push(sibling)
    expect(
      (await runError(write, { filePath: `../${sibling.split("/").pop()}/x.txt`, content: "x" }, h.ctx()))._tag
    ).toBe(REJECTED)
    expect((await runError(write, { filePath: join(sibling, "y.txt"), content: "x" }, h.ctx()))._tag).toBe(REJECTED)
    expect(external()).toEqual([join(sibling, "*"), join(sibling, "*")])
    expect(existsSync(join(sibling, "x.txt")) || existsSync(join(sibling, "y.txt"))).toBe(false)
  })

  it("`~` is the home folder, as in a shell, not a folder named ~ in the project", async () => {
    const { h, write, external } = setup()
    const name = `lathe-never-written-${Date.now()}.txt`
    expect((await runError(write, { filePath: `~/${name}`, content: "x" }, h.ctx()))._tag).toBe(REJECTED)
    expect(external()).toEqual([join(realpathSync(homedir()), "*")])
    expect(existsSync(join(homedir(), name))).toBe(false)
    expect(existsSync(h.path("~"))).toBe(false)
    expect(resolvePath({ directory: "/p" }, "~", "/home/u")).toBe("/home/u")
    expect(resolvePath({ directory: "/p" }, "~user/x", "/home/u")).toBe("/p/~user/x")
  })

  it("a symlink inside pointing at a file outside is outside (edit and multiedit)", async () => {
    const { h, outside, edit, multiedit, external } = setup()
    const secret = join(outside, "secret.txt")
    writeFileSync(secret, "token = 1\n")
    symlinkSync(secret, h.path("notes.txt"))
    const args = { filePath: "notes.txt", oldString: "token = 1", newString: "token = 2" }
    expect((await runError(edit, args, h.ctx()))._tag).toBe(REJECTED)
    const many = { filePath: "notes.txt", edits: [{ oldString: "token = 1", newString: "token = 3" }] }
    expect((await runError(multiedit, many, h.ctx()))._tag).toBe(REJECTED)
    expect(external()).toEqual([join(outside, "*"), join(outside, "*")])
    expect(readFileSync(secret, "utf8")).toBe("token = 1\n")
  })

  it("a symlinked folder pointing outside is outside; once allowed, the file lands at the real place", async () => {
    const { h, outside, write, external } = setup()
    symlinkSync(outside, h.path("vendor"))
    expect((await runError(write, { filePath: "vendor/deep/new.txt", content: "x" }, h.ctx()))._tag).toBe(REJECTED)
    expect(external()).toEqual([join(outside, "deep", "*")])
    expect(existsSync(join(outside, "deep"))).toBe(false)
    h.mode = "allow"
    await run(write, { filePath: "vendor/deep/new.txt", content: "y" }, h.ctx())
    expect(readFileSync(join(outside, "deep", "new.txt"), "utf8")).toBe("y")
  })

  it("a dangling symlink is followed to where its target would be created", async () => {
    const { h, outside, write, external } = setup()
    const target = join(outside, "later", "created.txt")
    symlinkSync(target, h.path("dangling.txt"))
    symlinkSync(join(outside, "nodir"), h.path("danglingdir"))
    expect((await runError(write, { filePath: "dangling.txt", content: "x" }, h.ctx()))._tag).toBe(REJECTED)
    expect((await runError(write, { filePath: "danglingdir/a/b.txt", content: "x" }, h.ctx()))._tag).toBe(REJECTED)
    expect(external()).toEqual([join(outside, "later", "*"), join(outside, "nodir", "a", "*")])
    expect(existsSync(target)).toBe(false)
    expect(lstatSync(h.path("dangling.txt")).isSymbolicLink()).toBe(true)
    expect(await realPathOf(h.path("danglingdir/a/b.txt"))).toBe(join(outside, "nodir", "a", "b.txt"))
  })

  it("a relative symlink that climbs out with `..` is outside", async () => {
    const { h, outside, write, external } = setup()
    mkdirSync(h.path("a/b"), { recursive: true })
    const rel = join("..", "..", "..", outside.split("/").pop() as string)
    symlinkSync(rel, h.path("a/b/up"))
    expect(realpathSync(h.path("a/b/up"))).toBe(outside)
    expect((await runError(write, { filePath: "a/b/up/x.txt", content: "x" }, h.ctx()))._tag).toBe(REJECTED)
    expect(external()).toEqual([join(outside, "*")])
  })

  it("symlinks that stay inside, and a project reached through a symlink, ask nothing", async () => {
    const { h, write, external } = setup()
    mkdirSync(h.path("real"))
    symlinkSync("real", h.path("alias"))
    await run(write, { filePath: "alias/in.txt", content: "x" }, h.ctx())
    expect(readFileSync(h.path("real/in.txt"), "utf8")).toBe("x")
    const link = join(tempDir("lathe-link-"), "project")
    symlinkSync(h.root, link)
    await run(write, { filePath: "via-link.txt", content: "y" }, h.ctx({ root: link, directory: link }))
    expect(readFileSync(h.path("via-link.txt"), "utf8")).toBe("y")
    expect(external()).toEqual([])
  })

  it("`..` after a symlinked folder is folded before resolving, so the write lands where it was checked", async () => {
    const { h, outside, write, external } = setup()
    symlinkSync(join(outside), h.path("out"))
    await run(write, { filePath: "out/../folded.txt", content: "x" }, h.ctx())
    expect(external()).toEqual([])
    expect(readFileSync(h.path("folded.txt"), "utf8")).toBe("x")
    expect(existsSync(join(outside, "..", "folded.txt"))).toBe(false)
  })

  it("apply_patch: an add through a symlinked folder and a move out of the project are outside", async () => {
    const { h, outside, patch, external } = setup()
    symlinkSync(outside, h.path("ext"))
    h.write("src/a.ts", "a\n")
    const add = ["*** Begin Patch", "*** Add File: ext/new.ts", "+x", "*** End Patch"].join("\n")
    expect((await runError(patch, { patchText: add }, h.ctx()))._tag).toBe(REJECTED)
    const move = [
      "*** Begin Patch",
      "*** Update File: src/a.ts",
      `*** Move to: ${join(outside, "a.ts")}`,
      "@@",
      "-a",
      "+b",
      "*** End Patch"
    ]
    expect((await runError(patch, { patchText: move.join("\n") }, h.ctx()))._tag).toBe(REJECTED)
    expect(external()).toEqual([join(outside, "*"), join(outside, "*")])
    expect(existsSync(join(outside, "new.ts")) || existsSync(join(outside, "a.ts"))).toBe(false)
    expect(readFileSync(h.path("src/a.ts"), "utf8")).toBe("a\n")
  })

  it("list and glob on a folder outside (by `..` or a symlink) ask for that folder", async () => {
    const { h, outside } = setup()
    symlinkSync(outside, h.path("elsewhere"))
    const list = createListTool()
    const glob = createGlobTool({ ripgrep: false })
    expect((await runError(list, { path: "elsewhere" }, h.ctx()))._tag).toBe(REJECTED)
    expect((await runError(glob, { pattern: "*", path: ".." }, h.ctx()))._tag).toBe(REJECTED)
    expect(h.asks.filter((a) => a.permission === "external_directory").map((a) => a.patterns[0])).toEqual([
      join(outside, "*"),
      join(realpathSync(join(h.root, "..")), "*")
    ])
  })

  it("a symlink loop neither hangs nor escapes", async () => {
    const { h, write, external } = setup()
    symlinkSync("loop", h.path("loop"))
    const real = await realPathOf(h.path("loop/x.txt"))
    expect(isWithin(h.root, real)).toBe(true)
    expect((await runError(write, { filePath: "loop/x.txt", content: "x" }, h.ctx()))._tag).toBe("ToolExecutionError")
    expect(external()).toEqual([])
  })
})
