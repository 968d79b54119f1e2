import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { definePlugin, type LatheEvent, Tool, type ToolPart } from "@lathe/plugin"
import { runPluginTurn } from "@lathe/plugin/testing"
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
    expect(turn.requests[0]?.tools).toContain("shout")
    expect(turn.toolResults).toEqual([
      {
        tool: "shout",
        callID: "c1",
        input: { text: "hi" },
        status: "completed",
        output: "HI (checked)",
        title: "shout hi",
        metadata: { truncated: false }
      }
    ])

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

  it("sends a plugin command's prompt, as lathe run --command does (a plain string from run works)", () =>
    runPluginTurn({
      plugins: [
        definePlugin({
          name: "wc",
          setup: () => ({
            commands: [
              {
                name: "wc",
                description: "Counts words",
                run: (args: ReadonlyArray<string>) => `Count: ${args.join(" ")}`
              }
            ]
          })
        })
      ],
      command: { name: "wc", args: ["one", "two"] },
      steps: [{ steps: [{ text: "Two words." }] }]
    }).then((turn) => {
      expect(turn.text).toBe("Two words.")
      const prompt = turn.messages[0]?.parts.flatMap((part) => (part.type === "text" ? [part.text] : []))
      expect(prompt).toEqual(["Count: one two"])
    }))

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
    expect(turn.toolResults.map((result) => result.output)).toEqual(["HI (checked)"])
    expect(turn.text).toBe("Still done.")
  })

  it("gives the plugin the home and config folders asked for, and returns what it logged (setup included)", async () => {
    const home = mkdtempSync(join(tmpdir(), "lathe-home-"))
    const configDir = mkdtempSync(join(tmpdir(), "lathe-config-"))
    const seer = definePlugin({
      name: "seer",
      setup: async (ctx) => {
        ctx.log.info(`home ${ctx.home === home}, config ${ctx.configDir === configDir}`)
        return { "system.transform": async () => ctx.log.warn("a step") }
      }
    })
    const turn = await runPluginTurn({ plugins: [seer], home, configDir, steps: [{ steps: [{ text: "ok" }] }] })
    const lines = turn.logs.filter((line) => line.plugin === "seer")
    expect(lines).toEqual([
      { level: "info", plugin: "seer", message: "home true, config true" },
      { level: "warn", plugin: "seer", message: "a step" }
    ])
  })

  it("runs git through the host, with the hook time limit the config sets", async () => {
    const root = mkdtempSync(join(tmpdir(), "lathe-git-"))
    const seen: Array<string> = []
    const gitty = definePlugin({
      name: "gitty",
      setup: async (ctx) => {
        const init = await ctx.git(["init", "-q", "-b", "trunk"])
        const branch = await ctx.git(["symbolic-ref", "--short", "HEAD"])
        seen.push(`${init.exitCode} ${branch.stdout.trim()} ${ctx.hookTimeoutMs}`)
        return {}
      }
    })
    await runPluginTurn({
      root,
      plugins: [gitty],
      config: { plugin_timeout_ms: 4321 },
      steps: [{ steps: [{ text: "ok" }] }]
    })
    expect(seen).toEqual(["0 trunk 4321"])
  })

  it("rejects with the model's error when the script runs out", async () => {
    await expect(runPluginTurn({ plugins: [shouter], steps: [] })).rejects.toThrow(
      "The scripted model has no step for call 1"
    )
  })
})
