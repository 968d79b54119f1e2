import { definePlugin, type LatheEvent, Tool, type ToolPart } from "@lathe/plugin"
import { chunks, runPluginTurn } from "@lathe/plugin/testing"
import { describe, expect, it } from "vitest"
import { z } from "zod"

/** A plugin with one tool (`shout`) and a `tool.after` hook that marks every result it saw. */
const shouter = definePlugin({
  name: "shouter",
  setup: async () => ({
    tools: [
      Tool.define("shout", {
        description: "Shouts the text back",
        parameters: z.object({ text: z.string() }),
        mutates: false,
        execute: async ({ text }) => ({ title: `shout ${text}`, output: text.toUpperCase() })
      })
    ],
    "tool.after": async (input, output) => {
      if (input.tool === "shout") output.output = `${output.output} (checked)`
    }
  })
})

const toolEvents = (events: ReadonlyArray<LatheEvent>) =>
  events.filter((event) => event.type.startsWith("tool.")).map((event) => event.type)

describe("runPluginTurn", () => {
  it("runs a real turn: the model calls the plugin's tool, the hook changes its result, the model reads it", async () => {
    const turn = await runPluginTurn({
      plugins: [shouter],
      prompt: "Shout hi.",
      steps: [{ steps: [{ tool: "shout", input: { text: "hi" }, id: "c1" }] }, { steps: [{ text: "Done." }] }]
    })

    expect(turn.text).toBe("Done.")
    expect(turn.requests).toHaveLength(2)
    expect(Object.keys(turn.requests[0]?.tools ?? {})).toContain("shout")
    expect(JSON.stringify(turn.requests[1]?.messages)).toContain("HI (checked)")

    const [call] = turn.messages.flatMap((m) => m.parts).filter((part): part is ToolPart => part.type === "tool")
    expect(call?.tool).toBe("shout")
    expect(call?.state.status).toBe("completed")
    expect(call?.state.status === "completed" ? call.state.output : undefined).toBe("HI (checked)")
    expect(turn.messages.map((m) => m.info.role)).toEqual(["user", "assistant", "assistant"])

    expect(toolEvents(turn.events)).toContain("tool.running")
    expect(toolEvents(turn.events).at(-1)).toBe("tool.completed")
    expect(turn.events.at(-1)).toEqual({ type: "session.idle", sessionID: turn.sessionID })
    expect(turn.events.some((event) => event.type === "plugin.error")).toBe(false)
  })

  it("takes ScriptedLLM's chunks as steps too", async () => {
    const turn = await runPluginTurn({
      plugins: [shouter],
      steps: [
        [chunks.toolCall("c1", "shout", { text: "yo" }), chunks.finish({ input: 10, output: 5 }, "tool-calls")],
        [chunks.text("All done."), chunks.finish({ input: 20, output: 2 })]
      ]
    })
    expect(turn.text).toBe("All done.")
    expect(JSON.stringify(turn.requests[1]?.messages)).toContain("YO (checked)")
  })

  it("reports a hook that throws as plugin.error with the plugin's name, and the turn goes on", async () => {
    const broken = definePlugin({
      name: "broken",
      setup: async () => ({
        "tool.before": async () => {
          throw new Error("the hook broke")
        }
      })
    })
    const turn = await runPluginTurn({
      plugins: [shouter, broken],
      steps: [{ steps: [{ tool: "shout", input: { text: "hi" } }] }, { steps: [{ text: "Still done." }] }]
    })

    const errors = turn.events.filter((event) => event.type === "plugin.error")
    expect(errors).toHaveLength(1)
    expect(errors[0]).toMatchObject({ plugin: "broken", hook: "tool.before" })
    expect(errors[0]?.type === "plugin.error" ? errors[0].message : "").toContain("the hook broke")
    // The call still ran (shouter's tool and hook), and the model got its result.
    expect(JSON.stringify(turn.requests[1]?.messages)).toContain("HI (checked)")
    expect(turn.text).toBe("Still done.")
  })

  it("rejects with the model's error when the script runs out", async () => {
    await expect(runPluginTurn({ plugins: [shouter], steps: [] })).rejects.toThrow(
      "The scripted model has no step for call 1"
    )
  })
})
