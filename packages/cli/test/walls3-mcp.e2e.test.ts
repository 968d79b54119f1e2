/**
 * "Walls, round three": an MCP answer larger than the SDK's read buffer killed the whole run with an uncaught
 * exception. End to end through `lathe run` with no terminal: a hostile stdio MCP server the person configured
 * answers a tool call with one 64 MiB line (or a cut-off line); the scripted model calls that tool, gets an error
 * tool result naming the server, and the run finishes with its final answer and exit 0.
 */
import { spawnSync } from "node:child_process"
import { copyFileSync, mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { startScriptedServer } from "@lathe/core/testing"
import { ReadBuffer } from "@modelcontextprotocol/sdk/shared/stdio.js"
import { assert, describe, it, onTestFinished } from "vitest"
import { runLathe, sandbox } from "./helpers.js"

const fixture = fileURLToPath(new URL("../../mcp/test/fixtures/hostile-server.mjs", import.meta.url))
const FINAL = "FINAL-ANSWER-AFTER-HOSTILE-MCP-7f3a"

/** A sandbox whose person's config has the hostile server (trusted: it is the person's own) and the model. */
const setup = async (tool: string) => {
  const model = await startScriptedServer([
    { steps: [{ tool: `hostile_${tool}`, input: {} }] },
    { steps: [{ text: FINAL }] }
  ])
  onTestFinished(() => model.close())
  const box = sandbox()
  const server = join(box.dir, "hostile-server.mjs")
  copyFileSync(fixture, server)
  mkdirSync(join(box.dir, "config", "lathe"), { recursive: true })
  writeFileSync(
    join(box.dir, "config", "lathe", "lathe.json"),
    JSON.stringify({
      model: "local/m",
      provider: { local: { type: "openai-compatible", baseURL: model.url, models: { m: {} } } },
      mcp: { hostile: { type: "local", command: [process.execPath, server], wait: true } }
    })
  )
  return { box, model, server }
}

/** The tool result the model was sent back (the second request's tool message). */
const toolResult = (body: unknown): string => {
  const messages = (body as { messages?: Array<{ role: string; content: unknown }> }).messages ?? []
  return JSON.stringify(messages.find((m) => m.role === "tool")?.content ?? "")
}

describe("walls3: an MCP server's oversized or malformed answer", () => {
  it("payload bites: the MCP SDK's read buffer throws on the hostile server's answer", async () => {
    const { server } = await setup("huge")
    const call = { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "huge", arguments: {} } }
    const raw = spawnSync(process.execPath, [server], {
      input: `${JSON.stringify(call)}\n`,
      maxBuffer: 128 * 1024 * 1024
    }).stdout
    assert.isAbove(raw.length, 64 * 1024 * 1024)
    const buffer = new ReadBuffer()
    assert.throws(() => {
      for (let at = 0; at < raw.length; at += 65_536) buffer.append(raw.subarray(at, at + 65_536))
    }, /ReadBuffer exceeded maximum size/)
  }, 60_000)

  for (const [tool, expected] of [
    ["huge", 'The MCP server \\"hostile\\" sent a message over 16 MB'],
    ["garbled", 'The MCP server \\"hostile\\" sent a line that is not valid JSON']
  ] as const)
    it(`lathe run: the ${tool} answer is an error tool result, and the run ends with its final answer`, async () => {
      const { box, model } = await setup(tool)
      const run = await runLathe(["run", "--format", "json", "call the tool"], {
        cwd: box.project,
        env: box.env,
        timeoutMs: 90_000
      })
      assert.strictEqual(run.code, 0, run.stderr)
      assert.notInclude(run.stderr, "ReadBuffer exceeded")
      assert.notInclude(run.stderr, "Uncaught")
      assert.strictEqual(model.requests.length, 2, run.stderr)
      const result = toolResult(model.requests[1]?.body)
      assert.include(result, expected)
      assert.include(result, "restarts it for the next call")
      assert.isBelow(result.length, 2_000, "the 64 MiB line never reaches the model")
      const error = run.events.find((e) => e.type === "tool.error")
      assert.isDefined(error, JSON.stringify(run.events.map((e) => e.type)))
      assert.include(run.stdout, FINAL)
    }, 120_000)
})
