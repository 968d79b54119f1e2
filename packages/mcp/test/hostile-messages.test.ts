import { spawnSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "@effect/vitest"
import { deserializeMessage, ReadBuffer } from "@modelcontextprotocol/sdk/shared/stdio.js"
import { McpConnection } from "../src/connection.js"
import { MCP_MESSAGE_MAX_BYTES, McpMessageError, MessageReader } from "../src/message-reader.js"
import { mcpTools } from "../src/tools.js"
import { nodeServer, runTool } from "./helpers.js"

// "Walls, round three": an MCP answer larger than the SDK's read buffer killed the whole run with an uncaught
// exception, and a malformed one left the call waiting. The hostile server answers `huge` with one 64 MiB line and
// `garbled` with a cut-off line.

const hostile = fileURLToPath(new URL("./fixtures/hostile-server.mjs", import.meta.url))
const packageDir = fileURLToPath(new URL("..", import.meta.url))

/** The hostile server's raw stdout for one `tools/call` of `tool` (no MCP client involved). */
const rawAnswer = (tool: string): Buffer => {
  const call = { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: tool, arguments: {} } }
  const result = spawnSync(process.execPath, [hostile], {
    input: `${JSON.stringify(call)}\n`,
    maxBuffer: 128 * 1024 * 1024
  })
  return result.stdout
}

/** A connection to the hostile server that restarts at once; resolves once connected. */
const connectHostile = async () => {
  const statuses: Array<string> = []
  const connection = new McpConnection(nodeServer("hostile", [hostile]), {
    restartDelays: [0, 0, 0],
    onStatus: (c) => statuses.push(c.status.state)
  })
  await connection.start()
  expect(connection.status.state).toBe("connected")
  const tools = mcpTools([connection])
  const tool = (name: string) => {
    const found = tools.find((t) => t.id === `hostile_${name}`)
    if (!found) throw new Error(`hostile_${name} missing`)
    return found
  }
  /** Resolves once the connection is connected again after a restart. */
  const reconnected = () =>
    new Promise<void>((resolve) => {
      const check = () => (connection.status.state === "connected" ? resolve() : setTimeout(check, 20))
      check()
    })
  return { connection, tool, statuses, reconnected }
}

describe("MCP messages a server should never send", () => {
  it("payload bites: the SDK's read buffer throws on the 64 MiB answer, and a data handler's throw kills Node", () => {
    const answer = rawAnswer("huge")
    expect(answer.length).toBeGreaterThan(64 * 1024 * 1024)
    const buffer = new ReadBuffer()
    expect(() => {
      for (let at = 0; at < answer.length; at += 65_536) buffer.append(answer.subarray(at, at + 65_536))
    }).toThrow(/ReadBuffer exceeded maximum size/)
    // The way Lathe read stdout before: append in a 'data' handler. The throw escapes the handler; the process dies.
    const script =
      "import { ReadBuffer } from '@modelcontextprotocol/sdk/shared/stdio.js'\n" +
      "const buffer = new ReadBuffer()\n" +
      "process.stdin.on('data', (chunk) => { buffer.append(chunk); while (buffer.readMessage() !== null); })\n"
    const child = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
      cwd: packageDir,
      input: answer,
      encoding: "utf8",
      maxBuffer: 16 * 1024 * 1024
    })
    expect(child.status).not.toBe(0)
    expect(child.stderr).toContain("ReadBuffer exceeded maximum size")
    // The garbled answer cannot be parsed at all.
    expect(() => deserializeMessage(rawAnswer("garbled").toString("utf8").trim())).toThrow(SyntaxError)
    // 64 MiB through a child process: 20 s was not enough on a loaded 2-core machine.
  }, 90_000)

  it("an answer over the cap fails the call with a clear error, restarts the server, and the next call works", async () => {
    const { connection, tool, reconnected } = await connectHostile()
    try {
      const error = await runTool(tool("huge"), {}).error()
      expect(error.message).toContain('The MCP server "hostile" sent a message over 16 MB')
      expect(error.message).toContain("restarts it for the next call")
      await reconnected()
      expect((await runTool(tool("ok"), {}).result).output).toBe("fine")
    } finally {
      await connection.close()
    }
  }, 30_000)

  it("a malformed answer fails the call at once (it does not wait for a time-out) and the server restarts", async () => {
    const { connection, tool, statuses, reconnected } = await connectHostile()
    try {
      const error = await runTool(tool("garbled"), {}).error()
      expect(error.message).toContain('The MCP server "hostile" sent a line that is not valid JSON')
      expect(error.message).not.toContain("cut")
      expect(statuses).toContain("restarting")
      await reconnected()
      expect((await runTool(tool("ok"), {}).result).output).toBe("fine")
    } finally {
      await connection.close()
    }
  }, 30_000)

  it("the server that sent too much is stopped (its process is gone) and a new one takes its place", async () => {
    const { connection, tool } = await connectHostile()
    const pid = connection.pid
    try {
      expect(pid).toBeTypeOf("number")
      await runTool(tool("huge"), {}).error()
      // The old server is gone (its group was stopped); a new one runs in its place.
      await new Promise<void>((resolve) => {
        const check = () => {
          try {
            process.kill(pid ?? 0, 0)
            setTimeout(check, 50)
          } catch {
            resolve()
          }
        }
        check()
      })
    } finally {
      await connection.close()
    }
  }, 30_000)
})

describe("MessageReader", () => {
  const line = (id: number) => `${JSON.stringify({ jsonrpc: "2.0", id, result: {} })}\n`

  it("joins messages across chunks, skips lines that are not JSON, and delivers in order", () => {
    const reader = new MessageReader()
    const got: Array<unknown> = []
    const text = `${line(1)}server started\n${line(2)}`
    const bytes = Buffer.from(text)
    for (let at = 0; at < bytes.length; at += 7) reader.read(bytes.subarray(at, at + 7), (m) => got.push(m))
    expect(got).toEqual([
      { jsonrpc: "2.0", id: 1, result: {} },
      { jsonrpc: "2.0", id: 2, result: {} }
    ])
  })

  it("throws past the cap without waiting for the line's end, after delivering what came before", () => {
    const reader = new MessageReader(1_000)
    const got: Array<unknown> = []
    const error = (() => {
      try {
        reader.read(Buffer.from(`${line(1)}{"jsonrpc":"2.0","id":2,"result":"${"x".repeat(2_000)}`), (m) => got.push(m))
      } catch (caught) {
        return caught
      }
    })()
    expect(error).toBeInstanceOf(McpMessageError)
    expect((error as McpMessageError).kind).toBe("oversized")
    expect(got).toHaveLength(1)
    expect(MCP_MESSAGE_MAX_BYTES).toBe(16 * 1024 * 1024)
  })

  it("a JSON line that is not JSON-RPC is malformed, and its content is not in the error", () => {
    const reader = new MessageReader()
    expect(() => reader.read(Buffer.from('{"secret":"\\u001b]52;c;AAAA\\u0007"}\n'), () => {})).toThrow(
      /sent JSON that is not a JSON-RPC message \(\d+ bytes\)$/
    )
  })
})
