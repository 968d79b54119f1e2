import { existsSync, readFileSync } from "node:fs"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import type { AnyTool } from "@lathe/plugin"
import { McpConnection } from "../src/connection.js"
import { MCP_READ_ONLY } from "../src/permission.js"
import { mcpTools } from "../src/tools.js"
import { everythingBin, nodeServer, runTool, tempDir } from "./helpers.js"

describe("server-everything over stdio", () => {
  const connection = new McpConnection(nodeServer("everything", [everythingBin, "stdio"]))
  let tools: Map<string, AnyTool>
  const tool = (name: string): AnyTool => {
    const found = tools.get(name)
    if (!found) throw new Error(`no tool ${name}; have ${[...tools.keys()].join(", ")}`)
    return found
  }

  beforeAll(async () => {
    const status = await connection.start()
    expect(status).toMatchObject({ state: "connected" })
    tools = new Map(mcpTools([connection]).map((t) => [t.id, t]))
  })
  afterAll(() => connection.close())

  it("names tools <server>_<tool> and passes the server's input schema through", () => {
    expect(tools.has("everything_echo")).toBe(true)
    expect(tools.has("everything_get-sum")).toBe(true)
    const schema = tool("everything_get-sum").jsonSchema()
    expect(schema).toMatchObject({ type: "object", properties: { a: { type: "number" }, b: { type: "number" } } })
    expect(tool("everything_echo").mutates).toBe(false)
  })

  it("echo: text result, asked as its own name with the read-only pattern", async () => {
    const call = runTool(tool("everything_echo"), { message: "hello" })
    expect((await call.result).output).toBe("Echo: hello")
    expect(call.record.asks).toMatchObject([{ permission: "everything_echo", patterns: [MCP_READ_ONLY] }])
  })

  it("get-sum adds; a denied ask never reaches the server", async () => {
    expect((await runTool(tool("everything_get-sum"), { a: 2, b: 3 }).result).output).toContain("5")
    const denied = runTool(tool("everything_get-sum"), { a: 2, b: 3 }, { deny: true })
    expect((await denied.error()).message).toContain("denied by the test")
  })

  it("get-tiny-image: the image becomes an attachment and a note in the text", async () => {
    const out = await runTool(tool("everything_get-tiny-image"), {}).result
    expect(out.attachments?.[0]?.mime).toBe("image/png")
    expect(out.attachments?.[0]?.url).toMatch(/^data:image\/png;base64,iVBOR/)
    expect(out.output).toMatch(/\[image image\/png, \d+ bytes, attached\]/)
  })

  it("get-structured-content: the structured content reaches the model as text", async () => {
    const out = await runTool(tool("everything_get-structured-content"), { location: "Chicago" }).result
    expect(JSON.parse(out.output.split("\n\n")[0] ?? "")).toMatchObject({ temperature: expect.any(Number) })
  })

  it("a tool error (bad arguments) is the tool's error, with the server's text", async () => {
    const failure = await runTool(tool("everything_get-sum"), { a: "x" }).error()
    expect(failure._tag).toBe("ToolExecutionError")
    expect(failure.message.length).toBeGreaterThan(0)
  })

  it("large output is truncated like bash, the rest saved to a file", async () => {
    const dir = tempDir()
    const message = Array.from({ length: 3000 }, (_, i) => `line ${i}`).join("\n")
    const out = await runTool(tool("everything_echo"), { message }, { truncationDir: dir }).result
    expect(out.metadata.truncated).toBe(true)
    const saved = String(out.metadata.outputPath)
    expect(existsSync(saved)).toBe(true)
    expect(readFileSync(saved, "utf8")).toContain("line 2999")
    expect(out.output).not.toContain("line 2999")
  })

  it("a long-running operation reports progress in the call's live metadata", async () => {
    const call = runTool(tool("everything_trigger-long-running-operation"), { duration: 0.4, steps: 4 })
    expect((await call.result).output).toContain("Long running operation completed")
    // The last notification may race the result (the SDK drops the handler once the result is in).
    expect(call.record.progress.map((p) => p.progress).slice(0, 3)).toEqual([1, 2, 3])
    expect(call.record.progress[0]).toMatchObject({ total: 4 })
  })

  it("abort cancels a running call at once and the server keeps serving", async () => {
    const controller = new AbortController()
    const call = runTool(
      tool("everything_trigger-long-running-operation"),
      { duration: 30, steps: 30 },
      {
        abort: controller.signal
      }
    )
    const failure = call.error()
    await new Promise<void>((resolve) => {
      const check = setInterval(() => {
        if (call.record.progress.length > 0) {
          clearInterval(check)
          resolve()
        }
      }, 20)
    })
    const started = Date.now()
    controller.abort()
    expect((await failure)._tag).toBe("ToolAborted")
    // The operation runs 30 s: an abort that waited for it would take that long (a bound far from it, not a timing target).
    expect(Date.now() - started).toBeLessThan(10_000)
    expect((await runTool(tool("everything_echo"), { message: "still here" }).result).output).toBe("Echo: still here")
  })
})
