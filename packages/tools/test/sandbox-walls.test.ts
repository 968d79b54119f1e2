import { execFileSync, spawnSync } from "node:child_process"
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterEach, beforeAll, describe, expect, it } from "@effect/vitest"
import { type BashOptions, createBashTool } from "../src/bash.js"
import { detectSandbox, type SandboxSettings } from "../src/sandbox.js"
import { type Harness, harness, run, runError, tempDir } from "./helpers.js"

// Adversarial tests of the sandbox's walls, each first run WITHOUT Lathe's walls (plain bwrap with the arguments Lathe
// used before "Walls that hold": root bound read-only, the project read-write, .git/hooks and .git/config read-only, a
// PID namespace, no network) to prove the payload does damage, then through the bash tool.
const linux = process.platform === "linux"
const root = process.getuid?.() === 0
const bash = "/bin/bash"

/** The bwrap arguments before this change, for the "without Lathe" half of each test. */
const oldBwrap = (project: string, writable: ReadonlyArray<string>, command: string): Array<string> => [
  ...["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"],
  ...writable.flatMap((dir) => ["--bind", dir, dir]),
  ...[".git/hooks", ".git/config"]
    .map((path) => join(project, path))
    .filter((path) => existsSync(path))
    .flatMap((path) => ["--ro-bind", path, path]),
  ...["--unshare-pid", "--unshare-net", "--die-with-parent", "--new-session", "--chdir", project, "--"],
  ...[bash, "-c", command]
]
const plainBwrap = (project: string, writable: ReadonlyArray<string>, command: string) =>
  spawnSync("bwrap", oldBwrap(project, writable, command), { encoding: "utf8" })

/** A git repository in the harness's project, with one commit. */
const gitRepo = (h: Harness) => {
  const git = (...args: Array<string>) => execFileSync("git", args, { cwd: h.root, encoding: "utf8" })
  git("init", "-q")
  git("config", "user.email", "t@example.com")
  git("config", "user.name", "T")
  h.write("a.txt", "a\n")
  git("add", ".")
  git("commit", "-qm", "one")
  return git
}

const waitFor = async (check: () => boolean, ms: number): Promise<boolean> => {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 50)))
    if (check()) return true
  return check()
}

const tmuxServers: Array<string> = []
afterEach(() => {
  for (const socket of tmuxServers.splice(0)) spawnSync("tmux", ["-S", socket, "kill-server"])
})
/** Starts a tmux server on `socket`, as a person's terminal would have one. */
const startTmux = (socket: string) => {
  execFileSync("tmux", ["-S", socket, "new-session", "-d", "-x", "80", "-y", "20", bash, "--norc", "--noprofile"])
  tmuxServers.push(socket)
}

describe.runIf(linux)("the sandbox's walls (real bubblewrap)", () => {
  let temp: string
  const tool = (sandbox: SandboxSettings = { mode: "workspace-write" }, extra: BashOptions = {}) =>
    createBashTool({ sandbox, tempDir: temp, truncationDir: tempDir("lathe-walls-trunc-"), ...extra })
  const rejectEscape = (h: Harness) => {
    h.mode = (request) => (request.permission === "sandbox_escape" ? "reject" : "allow")
  }

  beforeAll(async () => {
    const found = await detectSandbox()
    if (found.kind !== "bubblewrap") throw new Error(`bubblewrap is needed for these tests: ${found.reason}`)
  })

  it.runIf(root)(
    "as root, remounting / read-write works under the old arguments and fails in Lathe's sandbox",
    async () => {
      temp = tempDir("lathe-walls-tmp-")
      const h = harness()
      const outside = tempDir("lathe-walls-outside-")
      const payload = `mount -o remount,bind,rw / && echo owned > ${outside}/victim`
      const plain = plainBwrap(h.root, [h.root, temp], payload)
      expect(plain.status).toBe(0)
      expect(readFileSync(join(outside, "victim"), "utf8")).toBe("owned\n")
      execFileSync("rm", [join(outside, "victim")])

      rejectEscape(h)
      const out = await run(tool(), { command: payload, description: "Remount" }, h.ctx())
      expect(out.output).toMatch(/mount: \/: permission denied/)
      expect(out.metadata.exitCode).not.toBe(0)
      expect(existsSync(join(outside, "victim"))).toBe(false)
      const caps = await run(tool(), { command: "grep CapEff /proc/self/status", description: "Caps" }, h.ctx())
      expect(caps.output).toMatch(/CapEff:\s+0+\n/)
    }
  )

  it("renaming .git away and planting a new one works under the old arguments and fails in Lathe's sandbox", async () => {
    temp = tempDir("lathe-walls-tmp-")
    const h = harness()
    const git = gitRepo(h)
    const victim = join(tempDir("lathe-walls-victim-"), "victim")
    const payload = `mv .git .git-old && git init -q && git config core.fsmonitor 'touch ${victim}; false'`
    const plain = plainBwrap(h.root, [h.root, temp], payload)
    expect(plain.status).toBe(0)
    git("status", "--short")
    expect(existsSync(victim)).toBe(true)

    const fresh = harness()
    gitRepo(fresh)
    rejectEscape(fresh)
    const error = await runError(tool(), { command: payload, description: "Swap .git" }, fresh.ctx())
    expect(error.message).toContain("Device or resource busy")
    expect(existsSync(fresh.path(".git-old"))).toBe(false)
    expect(readFileSync(fresh.path(".git/config"), "utf8")).not.toContain("fsmonitor")
  })

  it("a .git/commondir pointing at a hostile copy survives the old arguments; Lathe removes it after the command", async () => {
    temp = tempDir("lathe-walls-tmp-")
    const plantCommondir = (h: Harness) =>
      `cp -r .git ${temp}/evil.git && git --git-dir=${temp}/evil.git config core.fsmonitor 'touch ${h.root}.victim; false' && ` +
      `echo ${temp}/evil.git > .git/commondir`
    const h = harness()
    const git = gitRepo(h)
    expect(plainBwrap(h.root, [h.root, temp], plantCommondir(h)).status).toBe(0)
    git("status", "--short")
    expect(existsSync(`${h.root}.victim`)).toBe(true)

    const fresh = harness()
    const freshGit = gitRepo(fresh)
    const out = await run(tool(), { command: plantCommondir(fresh), description: "Plant commondir" }, fresh.ctx())
    expect(out.output).toContain("Lathe removed .git/commondir after the command: the command created it")
    expect(out.output).toContain("git's commondir pointer")
    expect(existsSync(fresh.path(".git/commondir"))).toBe(false)
    freshGit("status", "--short")
    expect(existsSync(`${fresh.root}.victim`)).toBe(false)
  })

  it("protected paths that did not exist are created under the old arguments; Lathe removes them", async () => {
    temp = tempDir("lathe-walls-tmp-")
    const payload =
      "mkdir -p .lathe/plugins .claude && echo 'export default {}' > .lathe/plugins/x.mjs && echo '{}' > lathe.jsonc && " +
      "echo '{}' > .mcp.json && echo '{}' > .claude/settings.json && echo '{}' > opencode.json"
    const created = [".lathe/plugins/x.mjs", "lathe.jsonc", ".mcp.json", ".claude/settings.json", "opencode.json"]
    const h = harness()
    expect(plainBwrap(h.root, [h.root, temp], payload).status).toBe(0)
    for (const path of created) expect(existsSync(h.path(path))).toBe(true)

    const fresh = harness()
    const out = await run(tool(), { command: payload, description: "Plant config" }, fresh.ctx())
    for (const path of created) expect(existsSync(fresh.path(path))).toBe(false)
    expect(existsSync(fresh.path(".lathe"))).toBe(false)
    expect(out.output).toContain("Lathe removed .lathe after the command")
    expect(out.output).toContain("Lathe removed lathe.jsonc after the command")
    expect(out.output).toContain("ask the user to make this change")
    expect(existsSync(fresh.path(".claude"))).toBe(true)
  })

  it("a symlink planted on the way to a protected path is removed, never followed", async () => {
    temp = tempDir("lathe-walls-tmp-")
    const h = harness()
    const elsewhere = tempDir("lathe-walls-elsewhere-")
    writeFileSync(join(elsewhere, "settings.json"), "{}")
    const out = await run(tool(), { command: `ln -s ${elsewhere} .claude`, description: "Link" }, h.ctx())
    expect(out.output).toContain("Lathe removed .claude after the command")
    expect(existsSync(h.path(".claude"))).toBe(false)
    expect(readFileSync(join(elsewhere, "settings.json"), "utf8")).toBe("{}")
  })

  it("existing protected files stay read-only and unmovable; a protected symlink replaced is restored", async () => {
    temp = tempDir("lathe-walls-tmp-")
    const h = harness()
    rejectEscape(h)
    h.write("conf/lathe.json", "{}")
    symlinkSync("conf/lathe.json", h.path("lathe.json"))
    h.write(".mcp.json", "{}")
    const error = await runError(tool(), { command: "mv .mcp.json gone.json", description: "Move" }, h.ctx())
    expect(error.message).toContain("Device or resource busy")
    expect(readFileSync(h.path(".mcp.json"), "utf8")).toBe("{}")
    const out = await run(
      tool(),
      { command: "rm lathe.json && echo '{\"evil\":1}' > lathe.json", description: "Swap link" },
      h.ctx()
    )
    expect(out.output).toContain("Lathe restored the symlink lathe.json → conf/lathe.json")
    expect(readFileSync(h.path("lathe.json"), "utf8")).toBe("{}")
  })

  it("a tmux server's socket in the temp dir takes send-keys under the old arguments, not in Lathe's sandbox", async () => {
    temp = tempDir("lathe-walls-tmp-")
    const socket = join(temp, "tmux-walls")
    startTmux(socket)
    const victim = join(tempDir("lathe-walls-victim-"), "victim")
    const payload = `tmux -S ${socket} send-keys 'touch ${victim}' Enter`
    const h = harness()
    expect(plainBwrap(h.root, [h.root, temp], payload).status).toBe(0)
    expect(await waitFor(() => existsSync(victim), 5000)).toBe(true)
    execFileSync("rm", [victim])

    rejectEscape(h)
    const out = await run(tool(), { command: `${payload}; echo "exit=$?"`, description: "Send keys" }, h.ctx())
    expect(out.output).toMatch(/no server running|error connecting|Connection refused/i)
    expect(await waitFor(() => existsSync(victim), 1500)).toBe(false)
  })

  it("sockets the environment names are hidden too (SSH_AUTH_SOCK outside the scanned folders)", async () => {
    temp = tempDir("lathe-walls-tmp-")
    const agentDir = join("/var/tmp", `lathe-walls-${process.pid}-${Date.now()}`)
    mkdirSync(agentDir)
    const socket = join(agentDir, "agent.sock")
    startTmux(socket)
    try {
      const victim = join(tempDir("lathe-walls-victim-"), "victim")
      const h = harness()
      const command = `tmux -S "$SSH_AUTH_SOCK" send-keys 'touch ${victim}' Enter`
      const plain = spawnSync("bwrap", oldBwrap(h.root, [h.root, temp], command), {
        env: { ...process.env, SSH_AUTH_SOCK: socket }
      })
      expect(plain.status).toBe(0)
      expect(await waitFor(() => existsSync(victim), 5000)).toBe(true)
      execFileSync("rm", [victim])

      const baseEnv = { ...process.env, SSH_AUTH_SOCK: socket }
      // The refused socket is recognised as the sandbox's doing and a rerun outside is asked: the person says no.
      rejectEscape(h)
      await expect(run(tool(undefined, { baseEnv }), { command, description: "Agent" }, h.ctx())).rejects.toThrow(
        /Unix socket \(Permission denied\)[\s\S]*rejected this sandbox_escape/
      )
      expect(await waitFor(() => existsSync(victim), 1500)).toBe(false)
    } finally {
      spawnSync("tmux", ["-S", socket, "kill-server"])
      execFileSync("rm", ["-rf", agentDir])
    }
  })

  it("git still works inside: commit, branch, and .git's other files are writable", async () => {
    temp = tempDir("lathe-walls-tmp-")
    const h = harness()
    gitRepo(h)
    const out = await run(
      tool(),
      {
        command: "echo b > b.txt && git add b.txt && git commit -qm two && git branch x && git log --oneline | wc -l",
        description: "Commit"
      },
      h.ctx()
    )
    expect(out.output).toMatch(/^2\n/)
    expect(out.output).not.toContain("Lathe removed")
  })
})
