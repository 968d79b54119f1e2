/**
 * "Walls, round three": sockets are closed by the kernel, not by a search. A tmux server whose socket sits one folder
 * below /tmp is missed by the socket scan; with the network closed the seccomp filter refuses `socket(AF_UNIX)`, so
 * sandboxed `tmux send-keys` cannot type into it, while `socketpair()` keeps working.
 */
import { execFileSync, spawnSync } from "node:child_process"
import { existsSync, mkdirSync, rmSync } from "node:fs"
import { join } from "node:path"
import { afterEach, beforeAll, describe, expect, it } from "@effect/vitest"
import { createBashTool } from "../src/bash.js"
import { detectSandbox, type SandboxSettings } from "../src/sandbox.js"
import { bwrapArgs } from "../src/sandbox-bwrap.js"
import { prepareSandboxedRun } from "../src/sandbox-run.js"
import { assemble, unixSocketFilter } from "../src/sandbox-seccomp.js"
import { findSockets } from "../src/sandbox-sockets.js"
import { harness, run, tempDir } from "./helpers.js"

const linux = process.platform === "linux"
const bash = "/bin/bash"

const waitFor = async (check: () => boolean, ms: number): Promise<boolean> => {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 50)))
    if (check()) return true
  return check()
}

const cleanups: Array<() => void> = []
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup()
})

/** A tmux server on a socket one folder below /tmp, where the scan does not look. */
const deepTmux = (): string => {
  const dir = join("/tmp", `lathe-walls3-${process.pid}-${Date.now()}`, "deeper")
  mkdirSync(dir, { recursive: true })
  cleanups.push(() => rmSync(join(dir, ".."), { recursive: true, force: true }))
  const socket = join(dir, "server")
  execFileSync("tmux", ["-S", socket, "new-session", "-d", "-x", "80", "-y", "20", bash, "--norc", "--noprofile"])
  cleanups.push(() => spawnSync("tmux", ["-S", socket, "kill-server"]))
  return socket
}

describe("the seccomp filter's program", () => {
  it("is whole sock_filter records, and absent on hosts whose ABIs it does not know", () => {
    const program = unixSocketFilter("x64")
    expect(program).toBeDefined()
    expect((program?.length ?? 0) % 8).toBe(0)
    expect(unixSocketFilter("arm64")).toEqual(program)
    expect(unixSocketFilter("riscv64")).toBeUndefined()
    expect(unixSocketFilter("ia32")).toBeUndefined()
  })

  it("the assembler refuses a backward jump", () => {
    expect(() => assemble([["a", [{ code: 0x15, k: 1, jt: "a", jf: "next" }]]])).toThrow(/bad jump to a/)
  })

  it("bubblewrap gets --seccomp only with the network closed", () => {
    const place = { root: tempDir(), cwd: tempDir(), tempDir: tempDir(), truncationDir: tempDir(), env: {} }
    const choice = { state: "on", kind: "bubblewrap", program: "bwrap" } as const
    const closed = prepareSandboxedRun({ mode: "workspace-write" }, choice, place)
    const open = prepareSandboxedRun({ mode: "workspace-write", network: true }, choice, place)
    const seatbelt = prepareSandboxedRun({ mode: "workspace-write" }, { ...choice, kind: "seatbelt" }, place)
    expect(closed.extraInputs).toEqual(process.arch === "x64" || process.arch === "arm64" ? [unixSocketFilter()] : [])
    if (closed.extraInputs.length > 0) expect(closed.wrap([bash, []])[1]).toEqual(expect.arrayContaining(["--seccomp"]))
    expect(open.extraInputs).toEqual([])
    expect(open.wrap([bash, []])[1]).not.toContain("--seccomp")
    expect(seatbelt.extraInputs).toEqual([])
  })
})

describe.runIf(linux && (process.arch === "x64" || process.arch === "arm64"))(
  "sockets closed by the kernel (real bubblewrap, real tmux)",
  () => {
    beforeAll(async () => {
      const found = await detectSandbox()
      if (found.kind !== "bubblewrap") throw new Error(`bubblewrap is needed for these tests: ${found.reason}`)
    })
    const tool = (sandbox: SandboxSettings = { mode: "workspace-write" }) =>
      createBashTool({ sandbox, tempDir: tempDir("lathe-walls3-tmp-"), truncationDir: tempDir("lathe-walls3-trunc-") })

    it("a tmux socket below /tmp that the scan misses takes send-keys outside and in the scan-only sandbox, not in Lathe's", async () => {
      const socket = deepTmux()
      const victim = join(tempDir("lathe-walls3-victim-"), "pwned")
      const payload = `tmux -S ${socket} send-keys 'touch ${victim}' Enter`
      const h = harness()
      h.mode = (request) => (request.permission === "sandbox_escape" ? "reject" : "allow")

      // The scan does not see it.
      const hidden = findSockets({ env: {}, tempDir: "/tmp", root: h.root, keep: [h.root] })
      expect([...hidden.sockets, ...hidden.folders].some((path) => socket.startsWith(path))).toBe(false)
      // Plain bash, no sandbox: the typed command runs.
      expect(spawnSync(bash, ["-c", payload]).status).toBe(0)
      expect(await waitFor(() => existsSync(victim), 5000)).toBe(true)
      rmSync(victim)
      // Lathe's sandbox with the scan alone (every argument but --seccomp): still reached.
      const choice = { state: "on", kind: "bubblewrap", program: "bwrap" } as const
      const prepared = prepareSandboxedRun({ mode: "workspace-write" }, choice, { root: h.root, cwd: h.root })
      const { seccompFd: _filter, ...scanPlan } = prepared.plan
      const scanOnly = spawnSync("bwrap", bwrapArgs(scanPlan, [bash, ["-c", payload]]))
      expect(scanOnly.status).toBe(0)
      expect(await waitFor(() => existsSync(victim), 5000)).toBe(true)
      rmSync(victim)

      // The bash tool: the kernel refuses the socket; nothing is typed.
      const out = await run(tool(), { command: `${payload}; echo "exit=$?"`, description: "Send keys" }, h.ctx())
      expect(out.output).toMatch(/Permission denied/)
      expect(out.output).toContain("exit=1")
      expect(await waitFor(() => existsSync(victim), 1500)).toBe(false)
    })

    it("socketpair still works inside (python and node); a path socket of the command's own is refused", async () => {
      const h = harness()
      const python = `python3 -c 'import socket; a, b = socket.socketpair(); a.send(b"ok"); print("pair", b.recv(2).decode())'`
      const node =
        'node -e \'const { spawnSync } = require("node:child_process"); ' +
        'const r = spawnSync("cat", { input: "piped" }); console.log("node", r.stdout.toString())\''
      const own = `python3 -c 'import socket; socket.socket(socket.AF_UNIX).bind("own.sock")' 2>&1 | tail -1`
      const out = await run(tool(), { command: `${python}; ${node}; ${own}`, description: "Pairs" }, h.ctx())
      expect(out.output).toContain("pair ok")
      expect(out.output).toContain("node piped")
      expect(out.output).toMatch(/PermissionError: \[Errno 13\]/)
    })

    it("with the network open there is no filter: AF_UNIX sockets are created", async () => {
      const h = harness()
      const command = `python3 -c 'import socket; socket.socket(socket.AF_UNIX).bind("own.sock"); print("bound")'`
      const out = await run(tool({ mode: "workspace-write", network: true }), { command, description: "Bind" }, h.ctx())
      expect(out.output).toContain("bound")
    })
  }
)
