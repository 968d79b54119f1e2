import { existsSync, readFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import { afterEach, beforeAll, describe, expect, it } from "@effect/vitest"
import { type BashOptions, createBashTool } from "../src/bash.js"
import { detectSandbox, type SandboxSettings } from "../src/sandbox.js"
import { type Harness, harness, run, runError, tempDir } from "./helpers.js"

// Real bubblewrap (Debian package `bubblewrap`; .ci/run installs it). On Linux a missing or broken bwrap fails the
// suite rather than skipping it, so CI cannot go green without the sandbox being tested.
const linux = process.platform === "linux"

/** A bash tool whose sandbox leaves writable only the project, a temp dir and a truncation dir of its own. */
const tool = (sandbox: SandboxSettings = { mode: "workspace-write" }, extra: BashOptions = {}) =>
  createBashTool({ sandbox, tempDir: tempDir("lathe-sbx-tmp-"), truncationDir: tempDir("lathe-sbx-trunc-"), ...extra })

/** Rejects `sandbox_escape` asks (as a person would, or as `lathe run` does without a terminal). */
const rejectEscape = (h: Harness) => {
  h.mode = (request) => (request.permission === "sandbox_escape" ? "reject" : "allow")
}

let server: Server | undefined
afterEach(() => {
  server?.close()
  server = undefined
})
const listen = async (): Promise<number> => {
  const started = createServer((_, response) => response.end("hello from the host\n"))
  server = started
  await new Promise<void>((resolve) => started.listen(0, "127.0.0.1", resolve))
  return (started.address() as AddressInfo).port
}
/** An HTTP GET through bash's /dev/tcp, so the test needs no curl. */
const fetchCommand = (port: number) =>
  `exec 3<>/dev/tcp/127.0.0.1/${port} && printf 'GET / HTTP/1.0\\r\\n\\r\\n' >&3 && cat <&3`

describe.runIf(linux)("bash in the bubblewrap sandbox", () => {
  beforeAll(async () => {
    const found = await detectSandbox()
    if (found.kind !== "bubblewrap") throw new Error(`bubblewrap is needed for these tests: ${found.reason}`)
  })

  it("writes inside the project work; the command's cwd is kept", async () => {
    const h = harness()
    h.write("sub/.keep", "")
    const out = await run(
      tool(),
      { command: "pwd; echo made > inside.txt", workdir: "sub", description: "Write inside" },
      h.ctx()
    )
    expect(out.output).toMatch(new RegExp(`^${join(h.root, "sub")}\n`))
    expect(readFileSync(h.path("sub/inside.txt"), "utf8")).toBe("made\n")
    expect(out.metadata).toMatchObject({ sandbox: "bubblewrap", exitCode: 0 })
    expect(h.asks.map((a) => a.permission)).toEqual(["bash"])
  })

  it("a write outside the project fails, names the sandbox, and a rejected escape is an error", async () => {
    const h = harness()
    rejectEscape(h)
    const outside = tempDir("lathe-outside-")
    const command = `echo leak > ${outside}/leak.txt`
    const error = await runError(tool(), { command, description: "Write outside" }, h.ctx())
    expect(error._tag).toBe("PermissionRejected")
    expect(error.message).toContain("The command failed inside the bubblewrap sandbox (workspace-write")
    expect(error.message).toContain("Read-only file system")
    expect(error.message).toContain("The user rejected this sandbox_escape request")
    expect(existsSync(join(outside, "leak.txt"))).toBe(false)
    expect(h.asks.map((a) => a.permission)).toEqual(["bash", "sandbox_escape"])
    expect(h.asks[1]).toMatchObject({ patterns: [command], metadata: { requiresPerson: true } })
  })

  it("an approved escape reruns the command outside the sandbox", async () => {
    const h = harness()
    const outside = tempDir("lathe-outside-")
    const command = `echo done > ${outside}/out.txt && cat ${outside}/out.txt`
    const out = await run(tool(), { command, description: "Write outside" }, h.ctx())
    expect(readFileSync(join(outside, "out.txt"), "utf8")).toBe("done\n")
    expect(out.output).toMatch(/^done\n/)
    expect(out.output).toContain("The command failed inside the bubblewrap sandbox")
    expect(out.output).toContain("The user approved; this is the output of the rerun outside the sandbox.")
    expect(out.metadata).toMatchObject({ sandbox: "bubblewrap", sandboxEscaped: true, exitCode: 0 })
    expect(h.asks.map((a) => a.permission)).toEqual(["bash", "sandbox_escape"])
  })

  it("git hooks, git config and Lathe's project config stay read-only in workspace-write", async () => {
    const h = harness()
    rejectEscape(h)
    h.write(".git/hooks/.keep", "")
    h.write(".git/config", "[core]\n")
    h.write("lathe.json", "{}")
    for (const target of [".git/hooks/pre-commit", ".git/config", "lathe.json"]) {
      const error = await runError(tool(), { command: `echo x >> ${target}`, description: "Append" }, h.ctx())
      expect(error.message).toContain("Read-only file system")
    }
    expect(existsSync(h.path(".git/hooks/pre-commit"))).toBe(false)
    expect(readFileSync(h.path("lathe.json"), "utf8")).toBe("{}")
    await run(tool(), { command: "echo ok > .git/HEAD.tmp", description: "Other git files" }, h.ctx())
    expect(existsSync(h.path(".git/HEAD.tmp"))).toBe(true)
  })

  it("read-only keeps even the project read-only", async () => {
    const h = harness()
    rejectEscape(h)
    const error = await runError(
      tool({ mode: "read-only" }),
      { command: "touch inside.txt", description: "Touch" },
      h.ctx()
    )
    expect(error.message).toContain("bubblewrap sandbox (read-only")
    expect(existsSync(h.path("inside.txt"))).toBe(false)
  })

  it("the network is closed: a server on the host's 127.0.0.1 cannot be reached", async () => {
    const h = harness()
    rejectEscape(h)
    const port = await listen()
    const error = await runError(tool(), { command: fetchCommand(port), description: "Fetch" }, h.ctx())
    expect(error.message).toContain("it needs the network, which the sandbox keeps closed")
    expect(error.message).toContain("network closed")
  })

  it("with network allowed the same server answers", async () => {
    const h = harness()
    const port = await listen()
    const out = await run(
      tool({ mode: "workspace-write", network: true }),
      { command: fetchCommand(port), description: "Fetch" },
      h.ctx()
    )
    expect(out.output).toContain("hello from the host")
    expect(h.asks.map((a) => a.permission)).toEqual(["bash"])
  })

  it("the command cannot see Lathe's process (nor read its environment in /proc)", async () => {
    const h = harness()
    const out = await run(
      tool(),
      { command: `test -e /proc/${process.pid}/environ && echo visible || echo hidden`, description: "Peek" },
      h.ctx()
    )
    expect(out.output).toMatch(/^hidden\n/)
  })

  it("a timeout kills what the command started inside the sandbox", async () => {
    const h = harness()
    const command = "(sleep 0.8; touch late.txt) & sleep 30"
    const out = await run(tool(), { command, timeout: 300, description: "Sleep" }, h.ctx())
    expect(out.metadata.timedOut).toBe(true)
    await new Promise((resolve) => setTimeout(resolve, 1200))
    expect(existsSync(h.path("late.txt"))).toBe(false)
  })
})
