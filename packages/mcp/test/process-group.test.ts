// Local servers run in their own process group: a Ctrl-C at the terminal (SIGINT to the foreground group) does not
// reach them, and closing the connection stops the server and everything it started. Real processes and signals.
import { execFileSync, spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "@effect/vitest"
import { McpConnection } from "../src/connection.js"
import { STOP_GRACE_MS } from "../src/stdio-transport.js"
import { nodeServer, tempDir } from "./helpers.js"

const probe = fileURLToPath(new URL("./fixtures/probe-server.mjs", import.meta.url))
const groupOf = (pid: number): number =>
  Number(
    execFileSync("ps", ["-o", "pgid=", "-p", String(pid)])
      .toString()
      .trim()
  )
const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}
const lines = (file: string): Array<string> => {
  try {
    return readFileSync(file, "utf8").trim().split("\n")
  } catch {
    return []
  }
}

describe("a local server's process group", () => {
  it("without Lathe: a child in its parent's group dies of the group's SIGINT", { timeout: 30_000 }, async () => {
    // The old way (no new group): a SIGINT to the parent's group, as the terminal sends on Ctrl-C, kills the server.
    const record = join(tempDir(), "record")
    const shell = spawn("sh", ["-c", `"${process.execPath}" "${probe}" --hang --record "${record}"`], {
      detached: true,
      stdio: "ignore"
    })
    await expect.poll(() => lines(record)[0]?.startsWith("started"), { timeout: 15_000 }).toBe(true)
    process.kill(-(shell.pid ?? 0), "SIGINT")
    await expect.poll(() => lines(record), { timeout: 5_000 }).toContain("SIGINT")
  })

  it("is its own: the server leads a new group, so the terminal's SIGINT to Lathe's group misses it", async () => {
    const record = join(tempDir(), "record")
    const connection = new McpConnection(nodeServer("probe", [probe, "--record", record]))
    try {
      expect(await connection.start()).toMatchObject({ state: "connected" })
      const pid = connection.pid ?? 0
      expect(groupOf(pid)).toBe(pid)
      expect(groupOf(pid)).not.toBe(groupOf(process.pid))
    } finally {
      await connection.close()
    }
    // Closed cleanly: stdin closed, then it exited; no signal was needed.
    expect(lines(record).slice(1)).toEqual(["stdin-closed", "exit"])
  })

  it("close stops a server that ignores stdin with SIGTERM to its group, children included", {
    timeout: 40_000
  }, async () => {
    const dir = tempDir()
    const record = join(dir, "record")
    const childRecord = join(dir, "child")
    // A wrapper (like npx) that starts the real server as its child, in the same group, and ignores stdin itself.
    const wrapper = [
      `const { spawn } = require("node:child_process")`,
      `spawn(process.execPath, [${JSON.stringify(probe)}, "--hang", "--record", ${JSON.stringify(childRecord)}], { stdio: "ignore" })`,
      `process.on("SIGTERM", () => { require("node:fs").appendFileSync(${JSON.stringify(record)}, "SIGTERM\\n"); process.exit(143) })`,
      "setInterval(() => {}, 1000)"
    ].join(";")
    const connection = new McpConnection(nodeServer("wrapped", ["-e", wrapper], { timeout: 30_000 }))
    const started = connection.start()
    await expect.poll(() => lines(childRecord)[0]?.startsWith("started"), { timeout: 15_000 }).toBe(true)
    const childPid = Number(lines(childRecord)[0]?.split(" ")[2])
    const closing = Date.now()
    await connection.close()
    // Stdin closed, 1 s later SIGTERM to the group: both handle it and exit, so close returns before the SIGKILL step
    // (stdin's grace + SIGTERM's grace; a loaded machine may take most of the second to run the handlers).
    expect(Date.now() - closing).toBeLessThan(STOP_GRACE_MS.stdin + STOP_GRACE_MS.term)
    expect((await started).state).toBe("failed")
    expect(lines(record)).toContain("SIGTERM")
    await expect.poll(() => lines(childRecord), { timeout: 8_000 }).toContain("SIGTERM")
    await expect.poll(() => alive(childPid), { timeout: 5_000 }).toBe(false)
  })
})
