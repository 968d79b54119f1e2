import { describe, expect, it } from "@effect/vitest"
import { ToolState } from "../src/state.js"
import { createTodoReadTool, createTodoWriteTool } from "../src/todo.js"
import { harness, run, runError } from "./helpers.js"

describe("todowrite / todoread", () => {
  it("writes the session's list, reads it back, and keeps sessions apart", async () => {
    const state = new ToolState()
    const [write, read] = [createTodoWriteTool(state), createTodoReadTool(state)]
    const h = harness("ses_a")
    const todos = [
      { content: "Parse the input", status: "completed", priority: "high" },
      { content: "Write the tests", status: "in_progress" },
      { content: "Old idea", status: "cancelled", priority: "low" }
    ]
    const out = await run(write, { todos }, h.ctx())
    expect(out.title).toBe("1 todos left")
    expect(out.metadata.todos).toEqual([
      { content: "Parse the input", status: "completed", priority: "high" },
      { content: "Write the tests", status: "in_progress", priority: "medium" },
      { content: "Old idea", status: "cancelled", priority: "low" }
    ])
    expect((await run(read, {}, h.ctx())).output).toBe(
      "1. [x] Parse the input (high)\n2. [~] Write the tests (medium)\n3. [-] Old idea (low)"
    )
    expect((await run(read, {}, h.ctx({ sessionID: "ses_b" }))).output).toBe("The todo list is empty.")
    expect(write.mutates).toBe(false)
  })

  it("rejects an unknown status with the schema message", async () => {
    const h = harness()
    const error = await runError(
      createTodoWriteTool(new ToolState()),
      { todos: [{ content: "x", status: "done" }] },
      h.ctx()
    )
    expect(error.message).toBe(
      "The todowrite tool was called with invalid arguments:\n" +
        '- todos[0].status: Invalid option: expected one of "pending"|"in_progress"|"completed"|"cancelled"\n' +
        "Rewrite the input so it satisfies the tool's schema and call it again."
    )
  })
})
