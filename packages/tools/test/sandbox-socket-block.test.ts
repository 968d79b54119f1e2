/**
 * "Walls, round three": with the network closed, the seccomp filter makes `socket(AF_UNIX)` fail with EACCES. A
 * command that failed that way is recognised as blocked by the sandbox, so the model is told why (a Unix socket,
 * refused while the network is closed) and the person is asked about `sandbox_escape`, as for a blocked write.
 */
import { execFileSync, spawnSync } from "node:child_process"
import { mkdirSync, rmSync } from "node:fs"
import { join } from "node:path"
import { afterEach, beforeAll, describe, expect, it } from "@effect/vitest"
import { createBashTool } from "../src/bash.js"
import { detectSandbox, sandboxBlock } from "../src/sandbox.js"
import { blockText } from "../src/sandbox-plan.js"
import { harness, runError, tempDir } from "./helpers.js"

const failed = (output: string) => ({ output, exitCode: 1, timedOut: false })

describe("sandboxBlock: a Unix socket refused by the seccomp filter", () => {
  // What real programs print when socket(AF_UNIX) fails with EACCES (taken from runs inside bubblewrap --seccomp).
  it.each([
    "error connecting to /tmp/x/deeper/server (Permission denied)",
    "Error connecting to agent: Permission denied",
    "fatal: unable to connect to cache daemon: Permission denied",
    'psql: error: connection to server on socket "/tmp/.s.PGSQL.5432" failed: could not create socket: Permission denied',
    "dial unix /var/run/docker.sock: socket: permission denied",
    "Error: connect EACCES /run/user/1000/bus",
    [
      "Traceback (most recent call last):",
      '  File "/usr/lib/python3.11/socket.py", line 232, in __init__',
      "    _socket.socket.__init__(self, family, type, proto, fileno)",
      "PermissionError: [Errno 13] Permission denied"
    ].join("\n")
  ])("%s → socket", (output) => {
    expect(sandboxBlock(failed(output), { network: false })).toBe("socket")
  })

  it("not with the network allowed (no filter then), nor for a file's permission, nor on success", () => {
    expect(sandboxBlock(failed("Error connecting to agent: Permission denied"), { network: true })).toBeUndefined()
    expect(sandboxBlock(failed("cat: /root/.profile: Permission denied"), { network: false })).toBeUndefined()
    expect(
      sandboxBlock({ output: "Error: connect EACCES /x.sock", exitCode: 0, timedOut: false }, { network: false })
    ).toBeUndefined()
  })

  it("tells the model what the sandbox refused", () => {
    expect(blockText("socket")).toBe(
      "it tried to open a Unix socket (Permission denied), which the sandbox refuses while the network is closed"
    )
  })
})

const cleanups: Array<() => void> = []
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup()
})

describe.runIf(process.platform === "linux" && (process.arch === "x64" || process.arch === "arm64"))(
  "a refused Unix socket through the bash tool (real bubblewrap, real tmux)",
  () => {
    beforeAll(async () => {
      const found = await detectSandbox()
      if (found.kind !== "bubblewrap") throw new Error(`bubblewrap is needed for these tests: ${found.reason}`)
    })

    it("plain tmux reaches its server; in the sandbox it fails, and the escape question says it was a Unix socket", async () => {
      const dir = join("/tmp", `lathe-walls3-block-${process.pid}-${Date.now()}`, "deeper")
      mkdirSync(dir, { recursive: true })
      cleanups.push(() => rmSync(join(dir, ".."), { recursive: true, force: true }))
      const socket = join(dir, "server")
      execFileSync("tmux", ["-S", socket, "new-session", "-d", "/bin/bash", "--norc", "--noprofile"])
      cleanups.push(() => spawnSync("tmux", ["-S", socket, "kill-server"]))
      const command = `tmux -S ${socket} list-sessions`
      // Without the sandbox, the socket answers.
      expect(spawnSync("/bin/bash", ["-c", command]).status).toBe(0)

      const h = harness()
      h.mode = (request) => (request.permission === "sandbox_escape" ? "reject" : "allow")
      const tool = createBashTool({
        sandbox: { mode: "workspace-write" },
        tempDir: tempDir("lathe-walls3-tmp-"),
        truncationDir: tempDir("lathe-walls3-trunc-")
      })
      const error = await runError(tool, { command, description: "List tmux sessions" }, h.ctx())
      const escapeAsk = h.asks.find((request) => request.permission === "sandbox_escape")
      expect(escapeAsk?.patterns).toEqual([command])
      expect(String(escapeAsk?.metadata?.reason)).toContain(
        "it tried to open a Unix socket (Permission denied), which the sandbox refuses while the network is closed"
      )
      expect(error.message).toContain("Unix socket")
      expect(error.message).toContain("Permission denied")
    })
  }
)
