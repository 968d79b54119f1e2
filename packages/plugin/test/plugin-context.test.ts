import { existsSync, mkdtempSync, readFileSync, realpathSync } from "node:fs"
import { writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { definePlugin, type PluginContext, runProgram, Tool, type ToolError } from "@lathe/plugin"
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

describe("pluginContext: what the host gives besides config", () => {
  it("knows the sessions and the catalogue it is given, and the home and config folders", async () => {
    const session = {
      id: "child",
      projectID: "p",
      directory: "/",
      title: "c",
      parentID: "parent",
      time: { created: 1, updated: 1 }
    }
    const ctx = pluginContext("/project", {
      home: "/home/ana",
      configDir: "/home/ana/.config/lathe",
      sessions: [session],
      catalog: { providers: () => [{ id: "anthropic", type: "anthropic", ready: true, models: [] }] }
    })
    expect([ctx.home, ctx.configDir, ctx.root]).toEqual(["/home/ana", "/home/ana/.config/lathe", "/project"])
    expect((await ctx.client.sessions.get("child")).parentID).toBe("parent")
    await expect(ctx.client.sessions.get("other")).rejects.toThrow("There is no session other")
    expect(ctx.catalog.providers().map((provider) => provider.id)).toEqual(["anthropic"])
    expect(ctx.catalog.newestModel("anthropic", "claude")).toBeUndefined()
    await ctx.catalog.ready()
    expect(ctx.hookTimeoutMs).toBe(30_000)
    expect(pluginContext("/p", { config: { plugin_timeout_ms: 5 } }).hookTimeoutMs).toBe(5)
  })

  it("runs git without git's own variables of the environment given", async () => {
    const root = tempRoot()
    const other = tempRoot()
    const env = { ...process.env, GIT_DIR: join(other, ".git") }
    const ctx = pluginContext(root, { env })
    expect((await ctx.git(["init", "-q"])).exitCode).toBe(0)
    const top = await ctx.git(["rev-parse", "--show-toplevel"])
    expect(top.stdout.trim()).toBe(realpathSync(root))
  })
})

describe("runProgram", () => {
  it("kills the program and everything it started at the time limit, and says so", async () => {
    const dir = tempRoot()
    const started = Date.now()
    const result = await runProgram("sh", ["-c", `sleep 30 & echo $! > "${join(dir, "child")}"; wait`], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
      timeoutMs: 300
    })
    expect(result.timedOut).toBe(true)
    expect(Date.now() - started).toBeLessThan(10_000)
    const child = Number(readFileSync(join(dir, "child"), "utf8"))
    // Gone, or a zombie no one reaped yet (its state in /proc is Z): it runs no more either way.
    const state = existsSync(`/proc/${child}/stat`) ? readFileSync(`/proc/${child}/stat`, "utf8") : ""
    if (state !== "") expect(state.slice(state.lastIndexOf(")") + 2, state.lastIndexOf(")") + 3)).toBe("Z")
    else expect(() => process.kill(child, 0)).toThrow()
  })

  it("resolves with a failing program's exit code and output, feeding it its input", async () => {
    const result = await runProgram("sh", ["-c", "cat; echo oops >&2; exit 3"], {
      cwd: tempRoot(),
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
      input: "hello"
    })
    expect(result).toEqual({ exitCode: 3, signal: null, stdout: "hello", stderr: "oops\n", timedOut: false })
  })
})
