import { describe, expect, it } from "@effect/vitest"
import { isPlugin } from "@lathe/plugin/host"
import { pluginContext } from "@lathe/plugin/testing"
import plugin, { createTools, ReadTool, TodoReadTool, TodoWriteTool, WriteTool } from "../src/index.js"
import { harness, run, runError } from "./helpers.js"

describe("the @lathe/tools plugin", () => {
  it("contributes every tool with a description and the right mutates flag", async () => {
    const h = harness()
    expect(isPlugin(plugin)).toBe(true)
    expect(plugin.name).toBe("@lathe/tools")
    const hooks = await plugin.setup(pluginContext(h.root))
    const tools = hooks.tools ?? []
    expect(tools.map((t) => t.id)).toEqual([
      "bash",
      "read",
      "list",
      "glob",
      "grep",
      "edit",
      "multiedit",
      "write",
      "apply_patch",
      "webfetch",
      "question",
      "todowrite",
      "todoread"
    ])
    expect(tools.filter((t) => t.mutates).map((t) => t.id)).toEqual([
      "bash",
      "edit",
      "multiedit",
      "write",
      "apply_patch"
    ])
    // Traits the loop reads instead of names: the file editors share the edit permission; the todo tools repeat, are
    // never pruned, and stay with the caller.
    expect(tools.filter((t) => t.edits).map((t) => t.id)).toEqual(["edit", "multiedit", "write", "apply_patch"])
    for (const tool of tools) {
      const todo = tool.id === "todowrite" || tool.id === "todoread"
      expect([tool.id, tool.prunable, tool.repeats, tool.subagents]).toEqual([tool.id, !todo, todo, !todo])
    }
    for (const tool of tools) {
      expect(tool.description.length).toBeGreaterThan(100)
      expect(tool.jsonSchema().type).toBe("object")
    }
  })

  it("keeps state per plugin instance and per session", async () => {
    const h = harness()
    h.write("a.txt", "x")
    const [first, second] = [createTools(), createTools()]
    const tool = (set: ReadonlyArray<(typeof first)[number]>, id: string) => set.find((t) => t.id === id)!
    await run(tool(first, "read"), { filePath: "a.txt" }, h.ctx())
    expect((await runError(tool(second, "write"), { filePath: "a.txt", content: "y" }, h.ctx()))._tag).toBe(
      "ToolExecutionError"
    )
    expect(
      (await runError(tool(first, "write"), { filePath: "a.txt", content: "y" }, h.ctx({ sessionID: "other" })))._tag
    ).toBe("ToolExecutionError")
    await run(tool(first, "write"), { filePath: "a.txt", content: "y" }, h.ctx())
  })

  it("the named exports share one state: ReadTool then WriteTool, TodoWriteTool then TodoReadTool", async () => {
    const h = harness("ses_named")
    h.write("b.txt", "x")
    await run(ReadTool, { filePath: "b.txt" }, h.ctx())
    expect((await run(WriteTool, { filePath: "b.txt", content: "z" }, h.ctx())).output).toBe(
      "Overwrote b.txt (1 lines)."
    )
    await run(TodoWriteTool, { todos: [{ content: "Ship it", status: "in_progress" }] }, h.ctx())
    expect((await run(TodoReadTool, {}, h.ctx())).output).toBe("1. [~] Ship it (medium)")
  })
})
