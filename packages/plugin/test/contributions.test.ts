import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { definePlugin, type PluginCommand } from "@lathe/plugin"
import { listCommands, pluginContext, readResource, runCommand, setUpPlugin } from "@lathe/plugin/testing"
import { describe, expect, it } from "vitest"

/** A plain-JavaScript-style plugin: a command that returns a string, one that returns parts, and notes as resources. */
const notes = definePlugin({
  name: "notes",
  setup: (ctx) => {
    const later: PluginCommand = { name: "later", description: "Set after setup", run: () => "added later" }
    return {
      commands: [
        { name: "wc", description: "Counts words", run: (args) => `Count the ${args.length} words: ${args.join(" ")}` },
        {
          name: "attach",
          description: "Attaches a file",
          model: "acme/m1",
          run: async (_args, input) => [
            { type: "text", text: `About ${input.text}:` },
            { type: "file", url: "file:///tmp/a.png", mime: "image/png" }
          ]
        },
        {
          name: "connect",
          description: "Adds a command later, as a server that connects would",
          run: () => {
            ctx.commands.set([later])
            return "connected"
          }
        },
        { name: "broken", description: "Answers with a number", run: () => 42 as unknown as string },
        {
          name: "strict",
          description: "Needs an argument",
          run: (args) => {
            if (args.length === 0) throw new Error("Say which file.")
            return args[0] ?? ""
          }
        }
      ],
      findCommand: async (name) =>
        name.startsWith("dyn:") ? { name, description: "found on demand", run: () => `dynamic ${name}` } : undefined,
      resources: {
        list: () => [{ uri: "notes:today", name: "Today" }],
        accepts: (uri) => uri.startsWith("notes:archive/"),
        read: (uri) => [{ type: "text", text: `the note ${uri}`, synthetic: true }]
      }
    }
  }
})

describe("runCommand", () => {
  it("expands a command whose run returns a plain string, or a Promise of parts", async () => {
    const wc = await runCommand(notes, "wc", ["one", "two"])
    expect(wc).toEqual({
      parts: [{ type: "text", text: "Count the 2 words: one two" }],
      text: "Count the 2 words: one two"
    })
    const attach = await runCommand(notes, "attach", ["the", "chart"])
    expect(attach.parts).toHaveLength(2)
    expect(attach.text).toBe("About the chart:")
    expect(attach.model).toBe("acme/m1")
  })

  it("finds a command through findCommand, and one set through ctx.commands.set", async () => {
    expect((await runCommand(notes, "dyn:x")).text).toBe("dynamic dyn:x")
    const loaded = await setUpPlugin(notes)
    await expect(runCommand(loaded, "later")).rejects.toThrow('No command "later": plugin "notes" does not define it.')
    await runCommand(loaded, "connect")
    expect(loaded.context.contributed.commands.map((c) => c.name)).toEqual(["later"])
    expect((await runCommand(loaded, "later")).text).toBe("added later")
    expect((await listCommands(loaded)).map((c) => c.name)).toContain("later")
  })

  it("rejects with what run threw, and names the plugin and command for an answer that is not a prompt", async () => {
    await expect(runCommand(notes, "strict")).rejects.toThrow("Say which file.")
    await expect(runCommand(notes, "broken")).rejects.toThrow(
      'Plugin "notes" failed in command /broken: it returned 42, not a prompt (text or parts)'
    )
  })
})

describe("readResource", () => {
  it("reads a listed resource and one the plugin accepts, and refuses one it does not offer", async () => {
    expect(await readResource(notes, "notes:today")).toEqual([
      { type: "text", text: "the note notes:today", synthetic: true }
    ])
    expect(await readResource(notes, "notes:archive/1")).toHaveLength(1)
    await expect(readResource(notes, "other:x")).rejects.toThrow(
      'Plugin "notes" does not offer the resource "other:x".'
    )
  })
})

describe("pluginContext", () => {
  it("keeps what ctx.tools.set and ctx.commands.set were given, and passes it on", () => {
    const seen: Array<string> = []
    const ctx = pluginContext(mkdtempSync(join(tmpdir(), "lathe-kit-")), {
      setCommands: (commands) => seen.push(...commands.map((c) => c.name))
    })
    ctx.commands.set([{ name: "a", description: "A", run: () => "a" }])
    ctx.tools.set([])
    expect(ctx.contributed.commands.map((c) => c.name)).toEqual(["a"])
    expect(seen).toEqual(["a"])
  })
})
