import { type ChildProcess, spawn } from "node:child_process"
import { createServer } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { McpConnection } from "../src/connection.js"
import type { RemoteServer } from "../src/servers.js"
import { mcpTools } from "../src/tools.js"
import { everythingBin, runTool } from "./helpers.js"

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const probe = createServer()
    probe.once("error", reject)
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address()
      probe.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))))
    })
  })

/** Starts server-everything's Streamable HTTP mode and resolves once it listens. */
const startHttp = async (): Promise<{ readonly child: ChildProcess; readonly url: string }> => {
  const port = await freePort()
  const child = spawn(process.execPath, [everythingBin, "streamableHttp"], {
    env: { ...process.env, PORT: String(port) },
    stdio: ["ignore", "ignore", "pipe"]
  })
  await new Promise<void>((resolve, reject) => {
    let seen = ""
    child.stderr?.on("data", (chunk: Buffer) => {
      seen += chunk.toString()
      if (seen.includes("listening")) resolve()
    })
    child.once("exit", (code) => reject(new Error(`server exited (${code}): ${seen}`)))
  })
  return { child, url: `http://127.0.0.1:${port}/mcp` }
}

const remote = (url: string, extra: Partial<RemoteServer> = {}): RemoteServer => ({
  name: "web",
  source: "test",
  enabled: true,
  timeout: 10_000,
  wait: false,
  type: "remote",
  url,
  headers: { "X-Test": "1" },
  ...extra
})

describe("server-everything over Streamable HTTP", () => {
  let child: ChildProcess
  let url: string
  beforeAll(async () => {
    ;({ child, url } = await startHttp())
  })
  afterAll(() => {
    child.kill()
  })

  it("connects, lists tools and calls echo and get-sum", async () => {
    const connection = new McpConnection(remote(url))
    try {
      expect(await connection.start()).toMatchObject({ state: "connected" })
      const tools = new Map(mcpTools([connection]).map((t) => [t.id, t]))
      const echo = tools.get("web_echo")
      const sum = tools.get("web_get-sum")
      if (!echo || !sum) throw new Error("tools missing")
      expect((await runTool(echo, { message: "over http" }).result).output).toBe("Echo: over http")
      expect((await runTool(sum, { a: 40, b: 2 }).result).output).toContain("42")
    } finally {
      await connection.close()
    }
  })

  it("a URL that is no MCP endpoint fails after trying Streamable HTTP and SSE, naming both", async () => {
    const connection = new McpConnection(remote(url.replace(/\/mcp$/, "/nothing-here"), { timeout: 5_000 }))
    const status = await connection.start()
    expect(status.state).toBe("failed")
    expect(status.state === "failed" && status.reason).toMatch(/Streamable HTTP: .*; SSE: /)
  })
})
