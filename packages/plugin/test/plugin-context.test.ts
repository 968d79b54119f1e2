import { mkdtempSync, readFileSync } from "node:fs"
import { writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { definePlugin, type PluginContext, Tool, type ToolError } from "@lathe/plugin"
import { pluginContext, runTool } from "@lathe/plugin/testing"
import { describe, expect, it } from "vitest"
import { z } from "zod"

/** A plugin whose tool writes a note into the project, in the case its options ask for. */
const notes = definePlugin({
  name: "notes",
  setup: async (ctx: PluginContext) => ({
    tools: [
      Tool.define("note", {
        description: "Writes a note",
        parameters: z.object({ text: z.string() }),
        execute: async ({ text }, tool) => {
          await tool.ask({ permission: "edit", patterns: ["NOTES.md"] })
          const line = ctx.options.upper === true ? text.toUpperCase() : text
          await writeFile(join(tool.root, "NOTES.md"), `${line}\n`)
          return { title: "NOTES.md", output: `Noted in ${ctx.config.model ?? "no model"}.` }
        }
      })
    ]
  })
})

const tempRoot = () => mkdtempSync(join(tmpdir(), "lathe-plugin-test-"))

describe("pluginContext and runTool", () => {
  it("set a plugin up with its options and config, and run its tool for real", async () => {
    const root = tempRoot()
    const hooks = await notes.setup(pluginContext(root, { options: { upper: true }, config: { model: "acme/m1" } }))
    const tool = hooks.tools?.find((t) => t.id === "note")
    if (!tool) throw new Error("the plugin has no note tool")

    const asked: Array<string> = []
    const out = await runTool(tool, { text: "buy milk" }, { root, ask: async (r) => void asked.push(r.permission) })
    expect(out.output).toBe("Noted in acme/m1.")
    expect(readFileSync(join(root, "NOTES.md"), "utf8")).toBe("BUY MILK\n")
    expect(asked).toEqual(["edit"])
  })

  it("rejects with the error the model would read: bad arguments, a refused ask", async () => {
    const root = tempRoot()
    const [tool] = (await notes.setup(pluginContext(root))).tools ?? []
    if (!tool) throw new Error("the plugin has no tool")
    const invalid: ToolError = await runTool(tool, { text: 3 }, { root }).then(
      () => Promise.reject(new Error("expected a failure")),
      (error: ToolError) => error
    )
    expect(invalid._tag).toBe("ToolInvalidArguments")
    expect(invalid.message).toContain("text")
    const refused = runTool(tool, { text: "x" }, { root, ask: async () => Promise.reject(new Error("no edits")) })
    await expect(refused).rejects.toThrow("no edits")
  })

  it("runs programs through ctx.run in the root, with the secrets of its environment removed", async () => {
    const root = tempRoot()
    const ctx = pluginContext(root, { env: { PATH: process.env.PATH, ACME_TOKEN: "s3cr3t-value", PLAIN: "kept" } })
    const result = await ctx.run("/bin/sh", ["-c", 'pwd; [ -z "$ACME_TOKEN" ] && echo gone; echo "$PLAIN"'])
    expect(result.exitCode).toBe(0)
    expect(result.stdout.trim().split("\n")).toEqual([root, "gone", "kept"])
    expect(ctx.trusted).toBe(true)
    expect(pluginContext(root, { trusted: false }).trusted).toBe(false)
  })
})
