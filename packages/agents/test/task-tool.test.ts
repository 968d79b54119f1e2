import { assert, describe, it } from "@effect/vitest"
import type { PermissionRequest, SubagentResult } from "@lathe/plugin"
import { runTool } from "@lathe/plugin/testing"
import { createTaskTool } from "../src/task.js"

// The task tool alone: what it asks (and what an "always" reply would cover), and the prompt its subagent gets.
const task = createTaskTool([{ name: "general", description: "General work" }])

/** A context that records the asks and the subagent requests; commands expand from `commands`. */
const recorder = (commands: Record<string, (args: string) => string> = {}) => {
  const asks: Array<PermissionRequest> = []
  const prompts: Array<string> = []
  return {
    asks,
    prompts,
    options: {
      ask: async (request: PermissionRequest) => {
        asks.push(request)
      },
      subagent: async (request: { readonly prompt: string }): Promise<SubagentResult> => {
        prompts.push(request.prompt)
        return { sessionID: "ses_child", text: "done", calls: [], tokens: emptyTokens, cost: 0 }
      },
      command: async (name: string, args: string) => {
        const expand = commands[name]
        if (!expand) throw new Error(`No command "${name}". Available commands: ${Object.keys(commands).join(", ")}.`)
        return { text: expand(args) }
      }
    }
  }
}
const emptyTokens = { input: 0, output: 0, reasoning: 0, cache: { read: 0, write: 0 } }

describe("task tool", () => {
  it("asks `task` for the subagent type, and an always reply covers every subagent type", async () => {
    const r = recorder()
    await runTool(task, { description: "look", prompt: "find the parser", subagent_type: "general" }, r.options)
    assert.strictEqual(r.asks.length, 1)
    assert.strictEqual(r.asks[0]?.permission, "task")
    assert.deepStrictEqual(r.asks[0]?.patterns, ["general"])
    assert.deepStrictEqual(r.asks[0]?.always, ["*"])
    assert.deepStrictEqual(r.prompts, ["find the parser"])
  })

  it("`command` makes the custom command's expansion, with `prompt` as its arguments, the subagent's prompt", async () => {
    const r = recorder({ review: (args) => `Review ${args} for bugs.` })
    const out = await runTool(
      task,
      { description: "review", prompt: "src/a.ts", subagent_type: "general", command: "review" },
      r.options
    )
    assert.deepStrictEqual(r.prompts, ["Review src/a.ts for bugs."])
    assert.strictEqual(r.asks[0]?.metadata?.command, "review")
    assert.strictEqual(r.asks[0]?.metadata?.prompt, "Review src/a.ts for bugs.")
    assert.match(out.output, /^done/)
  })

  it("an unknown command fails with the host's message listing the commands, and runs no subagent", async () => {
    const r = recorder({ review: () => "x", fix: () => "y" })
    const error = await runTool(
      task,
      { description: "nope", prompt: "", subagent_type: "general", command: "deploy" },
      r.options
    ).then(
      () => undefined,
      (e: { message: string }) => e
    )
    assert.match(error?.message ?? "", /No command "deploy"\. Available commands: review, fix\./)
    assert.deepStrictEqual(r.prompts, [])
    assert.deepStrictEqual(r.asks, [])
  })

  it("an empty prompt without a command is refused", async () => {
    const r = recorder()
    const error = await runTool(task, { description: "x", prompt: " ", subagent_type: "general" }, r.options).then(
      () => undefined,
      (e: { message: string }) => e
    )
    assert.match(error?.message ?? "", /The prompt is empty/)
  })
})
