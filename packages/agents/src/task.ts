import { type AnyTool, Tool, type ToolContext } from "@lathe/plugin"
import { z } from "zod"
import { toolSchema } from "./tool-schemas.js"

/** `task` arguments. */
export const TaskInput = z.object({
  description: z.string().min(1).max(80).describe("A short (3-6 words) description of the task"),
  prompt: z
    .string()
    .describe("The full task for the subagent: what to do, what to return (with `command`: the command's arguments)"),
  subagent_type: z.string().min(1).describe("The subagent to run (see the list in this tool's description)"),
  session_id: z.string().optional().describe("Continue an earlier task's session (from its <task_metadata>)"),
  command: z
    .string()
    .optional()
    .describe("A custom command (its name, without the slash) whose expansion with `prompt` as arguments is the task")
})
/** `task` arguments, parsed. */
export type TaskInput = z.infer<typeof TaskInput>

/** A subagent as the task tool's description lists it. */
export interface SubagentListing {
  readonly name: string
  readonly description?: string
}

const describe = (subagents: ReadonlyArray<SubagentListing>): string =>
  `Runs a subagent on a task in its own session and returns its final answer. Use it for work that needs many
tool calls whose details you do not need (searching a large codebase, researching a question), or to run
independent pieces of work in parallel: several task calls in one step run at the same time.

- The subagent starts with no context: the prompt must say everything it needs, and what to return.
- The result is the subagent's last message plus <task_metadata> with its session_id; pass session_id to continue
  that same subagent later. The user does not see the subagent's answer: summarise it for them.
- With \`command\`, the subagent's prompt is that custom command expanded with \`prompt\` as its arguments, exactly as
  the user's \`/name arguments\` would be.
- A subagent can never do more than you may: it is offered only tools you have (fewer if its own setup switches
  some off), your permission rules bind it too, and it cannot start tasks of its own or use the todo list.

Subagents:
${subagents.map((s) => `- ${s.name}${s.description ? `: ${s.description}` : ""}`).join("\n")}`

/** The subagent's prompt: the text given, or the custom command `command` expanded with it as arguments. */
const taskPrompt = async (input: TaskInput, expand: ToolContext["command"]): Promise<string> => {
  if (input.command === undefined) {
    if (input.prompt.trim() === "") throw new Error("The prompt is empty: say what the subagent should do.")
    return input.prompt
  }
  if (!expand) throw new Error("This Lathe host cannot run commands; write the prompt out instead.")
  const expanded = await expand(input.command, input.prompt)
  if (expanded.text.trim() === "") throw new Error(`The command "${input.command}" expanded to an empty prompt.`)
  return expanded.text
}

/**
 * Builds the `task` tool: asks the `task` permission for the subagent, then runs it in a child session through the
 * host (`ctx.subagent`), whose tokens and cost roll up into the caller's message.
 */
export const createTaskTool = (subagents: ReadonlyArray<SubagentListing>): AnyTool =>
  Tool.define("task", {
    jsonSchema: toolSchema("task"),
    description: describe(subagents),
    parameters: TaskInput,
    // The subagent's own steps snapshot what they change; the call itself may run in parallel with others.
    mutates: false,
    // A subagent never starts another (no recursion).
    subagents: false,
    execute: async (input, ctx) => {
      if (!ctx.subagent) throw new Error("This Lathe host cannot run subagents; do the task yourself.")
      const prompt = await taskPrompt(input, ctx.command)
      await ctx.ask({
        permission: "task",
        patterns: [input.subagent_type],
        // "Always" approves running subagents, whichever type: a rule denying one type still holds (a deny rule
        // wins over a remembered approval), and a subagent can never do more than its caller.
        always: ["*"],
        metadata: {
          description: input.description,
          prompt,
          ...(input.command ? { command: input.command } : {})
        }
      })
      const result = await ctx.subagent({
        agent: input.subagent_type,
        description: input.description,
        prompt,
        ...(input.session_id ? { sessionID: input.session_id } : {})
      })
      const calls =
        result.calls.length === 0
          ? "The subagent made no tool calls."
          : `The subagent's tool calls: ${result.calls.map((c) => `${c.tool} ${c.title} (${c.status})`).join("; ")}.`
      return {
        title: `${input.description} (@${input.subagent_type})`,
        output: `${result.text || "(the subagent gave no final answer)"}\n\n${calls}\n\n<task_metadata>\nsession_id: ${result.sessionID}\n</task_metadata>`,
        metadata: {
          sessionID: result.sessionID,
          calls: result.calls.length,
          tokens: result.tokens,
          cost: result.cost
        }
      }
    }
  })
