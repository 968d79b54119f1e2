import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { createBashTool } from "../src/bash.js"
import { harness, run, runError, tempDir } from "./helpers.js"

const bash = createBashTool()

/** Whether a pid is a live process (a zombie waiting to be reaped counts as gone). */
const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
  } catch {
    return false
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"))
  } catch {
    return false
  }
}

const eventually = async (check: () => boolean, ms = 2000): Promise<boolean> => {
  const end = Date.now() + ms
  while (Date.now() < end) {
    if (check()) return true
    await new Promise((r) => setTimeout(r, 25))
  }
  return check()
}

const pids = (path: string): Array<number> => readFileSync(path, "utf8").trim().split(/\s+/).map(Number)

/** A host's truncation, as the test needs it: the first 50 KB, and the whole text in a file in `dir`. */
const truncateAt = (output: string, name: string, dir: string) => {
  const outputPath = join(dir, `${name}.txt`)
  writeFileSync(outputPath, output)
  return { content: `${output.slice(0, 50 * 1024)}\n(truncated)`, truncated: true, outputPath }
}

describe("bash", () => {
  it("runs the command, asks bash with the raw command line, reports exit code and duration", async () => {
    const h = harness()
    const out = await run(bash, { command: "echo hello", description: "Say hello" }, h.ctx())
    expect(out.output).toMatch(/^hello\n\n\(exit code 0, \d+\.\d\d s\)$/)
    expect(out.title).toBe("Say hello")
    expect(out.metadata).toMatchObject({ exitCode: 0, timedOut: false })
    expect(h.asks).toEqual([
      {
        permission: "bash",
        patterns: ["echo hello"],
        metadata: { command: "echo hello", description: "Say hello", workdir: h.root }
      }
    ])
  })

  it("interleaves stdout and stderr and runs in workdir", async () => {
    const h = harness()
    h.write("sub/x.txt", "")
    const command = "echo a; sleep 0.05; echo b >&2; sleep 0.05; echo c; ls"
    const out = await run(bash, { command, workdir: "sub", description: "Mixed output" }, h.ctx())
    expect(out.output.split("\n\n")[0]).toBe("a\nb\nc\nx.txt")
  })

  it("a non-zero exit is a result, not an error", async () => {
    const h = harness()
    const out = await run(bash, { command: "echo oops; exit 3", description: "Fail" }, h.ctx())
    expect(out.output).toMatch(/^oops\n\n\(exit code 3, /)
    expect(out.metadata.exitCode).toBe(3)
  })

  it("a command that reads stdin gets EOF at once", async () => {
    const h = harness()
    const out = await run(
      bash,
      { command: "cat; read x || echo eof", description: "Read stdin", timeout: 5000 },
      h.ctx()
    )
    expect(out.output).toMatch(/^eof\n/)
    expect(out.metadata.durationMs).toBeLessThan(2000)
  })

  it("timeout kills the shell and its sleep children (no orphans)", async () => {
    const h = harness()
    const command = "echo $$ > pids; sleep 30 & echo $! >> pids; (sleep 30; echo never) & echo $! >> pids; wait"
    const out = await run(bash, { command, timeout: 300, description: "Sleep" }, h.ctx())
    expect(out.output).toContain("The command timed out after 0.30 s and was killed with its child processes.")
    expect(out.metadata.timedOut).toBe(true)
    const started = pids(h.path("pids"))
    expect(started).toHaveLength(3)
    expect(await eventually(() => started.every((pid) => !alive(pid)))).toBe(true)
  })

  it("abort kills the process group and fails with ToolAborted", async () => {
    const h = harness()
    setTimeout(() => h.controller.abort(), 300)
    const error = await runError(
      bash,
      { command: "echo $$ > pids; sleep 30 & echo $! >> pids; wait", description: "Wait" },
      h.ctx()
    )
    expect(error).toEqual({ _tag: "ToolAborted", message: "The bash tool call was aborted." })
    const started = pids(h.path("pids"))
    expect(await eventually(() => started.every((pid) => !alive(pid)))).toBe(true)
  })

  it("1 MB of output is truncated and the full text saved", async () => {
    const h = harness()
    const dir = tempDir()
    const command = "head -c 1000000 /dev/zero | tr '\\0' a | fold -w 100"
    const out = await run(
      bash,
      { command, description: "Lots of output" },
      h.ctx({ truncate: (output, name) => Effect.sync(() => truncateAt(output, name, dir)) })
    )
    // bash hands its whole output to the host's truncation (core's tests cover its limits and message).
    expect(out.metadata.truncated).toBe(true)
    expect(out.output).toContain("(truncated)")
    expect(Buffer.byteLength(out.output)).toBeLessThan(52 * 1024)
    const saved = String(out.metadata.outputPath)
    expect(statSync(saved).size).toBeGreaterThan(1_000_000)
    expect(readFileSync(saved, "utf8").startsWith(`${"a".repeat(100)}\n`)).toBe(true)
  })

  it("streams output to metadata while running", async () => {
    const h = harness()
    await run(bash, { command: "echo first; sleep 0.3; echo second", description: "Stream" }, h.ctx())
    const previews = h.updates.map((u) => u.metadata?.output)
    expect(previews[0]).toBe("first\n")
    expect(previews[previews.length - 1]).toBe("first\nsecond\n")
  })

  it("a rejected command never runs", async () => {
    const h = harness()
    h.mode = "reject"
    const error = await runError(bash, { command: "touch ran", description: "Touch" }, h.ctx())
    expect(error).toEqual({
      _tag: "PermissionRejected",
      message: "The user rejected this bash request. Stop and wait for the user's next instruction."
    })
    expect(existsSync(h.path("ran"))).toBe(false)
  })

  it("rejects a timeout over 10 minutes and a missing description", async () => {
    const h = harness()
    expect((await runError(bash, { command: "ls", timeout: 600_001 }, h.ctx())).message).toBe(
      "The bash tool was called with invalid arguments:\n- timeout: Too big: expected number to be <=600000\n" +
        "- description: Invalid input: expected string, received undefined\n" +
        "Rewrite the input so it satisfies the tool's schema and call it again."
    )
  })
})
