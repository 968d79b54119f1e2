import { Tool } from "@lathe/plugin"
import { z } from "zod"
import { loadDescription } from "./description.js"
import type { TodoItem, ToolState } from "./state.js"
import { toolSchema } from "./tool-schemas.js"

/** One todo item as the model writes it. */
export const TodoSchema = z.object({
  content: z.string().min(1).describe("What to do, as a short imperative sentence"),
  status: z.enum(["pending", "in_progress", "completed", "cancelled"]).describe("Where the item stands"),
  priority: z.enum(["high", "medium", "low"]).default("medium").describe("How important it is")
})

/** `todowrite` arguments: the whole new list. */
export const TodoWriteInput = z.object({
  todos: z.array(TodoSchema).describe("The complete updated list; it replaces the previous one")
})
/** `todowrite` arguments, parsed. */
export type TodoWriteInput = z.infer<typeof TodoWriteInput>

/** `todoread` takes no arguments. */
export const TodoReadInput = z.object({})

const MARKS: Readonly<Record<TodoItem["status"], string>> = {
  pending: "[ ]",
  in_progress: "[~]",
  completed: "[x]",
  cancelled: "[-]"
}

/** The list as the model reads it back: one line per item, with status mark and priority. */
export const formatTodos = (todos: ReadonlyArray<TodoItem>): string =>
  todos.length === 0
    ? "The todo list is empty."
    : todos.map((t, i) => `${i + 1}. ${MARKS[t.status]} ${t.content} (${t.priority})`).join("\n")

const remaining = (todos: ReadonlyArray<TodoItem>): number =>
  todos.filter((t) => t.status === "pending" || t.status === "in_progress").length

/** Builds `todowrite`: replaces the session's todo list; the CLI shows `metadata.todos`. */
export const createTodoWriteTool = (state: ToolState) =>
  Tool.define("todowrite", {
    jsonSchema: toolSchema("todowrite"),
    description: loadDescription("todowrite"),
    parameters: TodoWriteInput,
    mutates: false,
    // The model rereads and rewrites its list often; a subagent has none (the caller plans).
    prunable: false,
    repeats: true,
    subagents: false,
    execute: (args, ctx) => {
      state.setTodos(ctx.sessionID, args.todos)
      const todos = state.getTodos(ctx.sessionID)
      return {
        title: `${remaining(todos)} todos left`,
        output: formatTodos(todos),
        metadata: { todos }
      }
    }
  })

/** Builds `todoread`: the session's todo list. */
export const createTodoReadTool = (state: ToolState) =>
  Tool.define("todoread", {
    jsonSchema: toolSchema("todoread"),
    description: loadDescription("todoread"),
    parameters: TodoReadInput,
    mutates: false,
    // The model rereads and rewrites its list often; a subagent has none (the caller plans).
    prunable: false,
    repeats: true,
    subagents: false,
    execute: (_args, ctx) => {
      const todos = state.getTodos(ctx.sessionID)
      return { title: `${remaining(todos)} todos left`, output: formatTodos(todos), metadata: { todos } }
    }
  })
