import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import type { AnyTool } from "@lathe/plugin"
import { McpConnection } from "../src/connection.js"
import { MCP_MAY_WRITE, MCP_READ_ONLY } from "../src/permission.js"
import { mcpTools } from "../src/tools.js"
import { filesystemBin, nodeServer, runTool, tempDir } from "./helpers.js"

describe("server-filesystem over stdio", () => {
  const dir = tempDir()
  const connection = new McpConnection(nodeServer("fs", [filesystemBin, dir]))
  let tools: Map<string, AnyTool>
  const tool = (name: string): AnyTool => {
    const found = tools.get(name)
    if (!found) throw new Error(`no tool ${name}; have ${[...tools.keys()].join(", ")}`)
    return found
  }
  beforeAll(async () => {
    writeFileSync(join(dir, "notes.txt"), "first line\n")
    expect(await connection.start()).toMatchObject({ state: "connected" })
    tools = new Map(mcpTools([connection]).map((t) => [t.id, t]))
  })
  afterAll(() => connection.close())

  it("reads a real file (read-only tool, allowed by default pattern)", async () => {
    const call = runTool(tool("fs_read_text_file"), { path: join(dir, "notes.txt") })
    expect((await call.result).output).toContain("first line")
    expect(call.record.asks[0]?.patterns).toEqual([MCP_READ_ONLY])
  })

  it("writes a real file: a mutating tool that asks with the may-write pattern", async () => {
    const write = tool("fs_write_file")
    expect(write.mutates).toBe(true)
    const call = runTool(write, { path: join(dir, "out.txt"), content: "written by mcp" })
    await call.result
    expect(readFileSync(join(dir, "out.txt"), "utf8")).toBe("written by mcp")
    expect(call.record.asks).toMatchObject([{ permission: "fs_write_file", patterns: [MCP_MAY_WRITE], always: ["*"] }])
  })

  it("a path outside the allowed directory is the tool's error", async () => {
    const failure = await runTool(tool("fs_read_text_file"), { path: "/etc/hostname" }).error()
    expect(failure._tag).toBe("ToolExecutionError")
    expect(failure.message).toMatch(/denied|outside|not allowed/i)
  })
})
