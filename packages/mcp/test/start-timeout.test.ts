// A server that does not finish starting: the failure shows the end of what it printed on stderr (the real cause,
// e.g. npx unable to reach the registry), and does not only advise a longer timeout. Real stdio processes.
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "@effect/vitest"
import { describeStatus, McpConnection } from "../src/connection.js"
import { nodeServer } from "./helpers.js"

const probe = fileURLToPath(new URL("./fixtures/probe-server.mjs", import.meta.url))

const failure = async (connection: McpConnection): Promise<string> => {
  try {
    const status = await connection.start()
    expect(status.state).toBe("failed")
    return describeStatus(status)
  } finally {
    await connection.close()
  }
}

describe("a server that times out while starting", () => {
  it("names the stderr line that says why, below the time-out", async () => {
    const line = "npm error code UNABLE_TO_GET_ISSUER_CERT_LOCALLY (request to https://registry.npmjs.org failed)"
    const text = await failure(
      new McpConnection(nodeServer("npx-ish", [probe, "--hang", "--stderr", line], { timeout: 4_000 }))
    )
    expect(text).toContain('connecting to "npx-ish" did not finish within 4000 ms')
    expect(text).toContain(`\n    ${line}`)
    expect(text).toMatch(/stderr may say why/)
  })

  it("keeps only the end of a long stderr: the last 20 lines, at most 2 KB", async () => {
    const script = [
      "for (let i = 1; i <= 200; i++) process.stderr.write('line ' + i + ' ' + 'x'.repeat(40) + '\\n')",
      "setInterval(() => {}, 1000)"
    ].join(";")
    const text = await failure(new McpConnection(nodeServer("noisy", ["-e", script], { timeout: 4_000 })))
    expect(text).toContain("line 200 ")
    expect(text).not.toContain("line 180 ")
    expect(text.split("\n").filter((l) => l.startsWith("    line ")).length).toBeLessThanOrEqual(20)
    expect(text.length).toBeLessThan(2_048 + 400)
  })

  it("a silent server: says it printed nothing and how to check the command, then the timeout", async () => {
    const text = await failure(new McpConnection(nodeServer("quiet", [probe, "--hang"], { timeout: 800 })))
    expect(text).toMatch(/within 800 ms, and the server printed nothing on stderr\. Run its command in a shell/)
    expect(text).toContain('raise "timeout"')
  })

  it("a server that exits at once: its error with the stderr it left", async () => {
    const script = "process.stderr.write('config.yaml: no such file\\n'); process.exit(3)"
    const text = await failure(new McpConnection(nodeServer("broken", ["-e", script], { timeout: 5_000 })))
    expect(text).toContain("The server's stderr ends with:\n    config.yaml: no such file")
    expect(text).not.toContain('raise "timeout"')
  })
})
