import { readFileSync, utimesSync, writeFileSync } from "node:fs"
import { describe, expect, it } from "@effect/vitest"
import { createReadTool } from "../src/read.js"
import { ToolState } from "../src/state.js"
import { createWriteTool } from "../src/write.js"
import { harness, run, runError } from "./helpers.js"

const setup = (sessionID?: string) => {
  const state = new ToolState()
  return { state, read: createReadTool(state), write: createWriteTool(state), h: harness(sessionID) }
}

describe("write", () => {
  it("creates a file and its folders, asking edit with a diff", async () => {
    const { write, h } = setup()
    const out = await run(write, { filePath: "a/b/new.txt", content: "hello\nworld\n" }, h.ctx())
    expect(out.output).toBe("Created a/b/new.txt (2 lines).")
    expect(readFileSync(h.path("a/b/new.txt"), "utf8")).toBe("hello\nworld\n")
    expect(h.asks[0]?.permission).toBe("edit")
    expect(h.asks[0]?.patterns).toEqual(["a/b/new.txt"])
    expect(String(h.asks[0]?.metadata?.diff)).toContain("+hello\n+world")
    expect(write.mutates).toBe(true)
  })

  it("refuses to overwrite a file this session has not read", async () => {
    const { write, h } = setup()
    h.write("x.txt", "old")
    expect(await runError(write, { filePath: "x.txt", content: "new" }, h.ctx())).toEqual({
      _tag: "ToolExecutionError",
      message:
        "x.txt already exists and you have not read it in this session. Read it with the read tool first, then write it."
    })
    expect(readFileSync(h.path("x.txt"), "utf8")).toBe("old")
  })

  it("overwrites after a read, and again after its own write", async () => {
    const { read, write, h } = setup()
    h.write("x.txt", "old")
    await run(read, { filePath: "x.txt" }, h.ctx())
    expect((await run(write, { filePath: "x.txt", content: "new" }, h.ctx())).output).toBe("Overwrote x.txt (1 lines).")
    await run(write, { filePath: "x.txt", content: "newer" }, h.ctx())
    expect(readFileSync(h.path("x.txt"), "utf8")).toBe("newer")
  })

  it("refuses when the file changed on disk since the read", async () => {
    const { read, write, h } = setup()
    const file = h.write("x.txt", "old")
    await run(read, { filePath: "x.txt" }, h.ctx())
    writeFileSync(file, "changed by someone else")
    utimesSync(file, new Date(), new Date(Date.now() + 5000))
    expect((await runError(write, { filePath: "x.txt", content: "new" }, h.ctx())).message).toBe(
      "x.txt has changed on disk since you last read it. Read it again to see the current content before overwriting it."
    )
  })

  it("a read in another session does not count", async () => {
    const { state, write, h } = setup("ses_b")
    const file = h.write("x.txt", "old")
    state.recordRead("ses_a", file, { mtimeMs: 0, size: 3 })
    expect((await runError(write, { filePath: "x.txt", content: "new" }, h.ctx()))._tag).toBe("ToolExecutionError")
  })

  it("a rejected edit permission leaves the file alone", async () => {
    const { write, h } = setup()
    h.mode = "reject"
    expect(await runError(write, { filePath: "n.txt", content: "x" }, h.ctx())).toEqual({
      _tag: "PermissionRejected",
      message: "The user rejected this edit request. Stop and wait for the user's next instruction."
    })
    expect(() => readFileSync(h.path("n.txt"))).toThrow()
  })
})
