/**
 * "MCP servers in time" for `lathe mcp list`: a package runner's server (here a stand-in `npx` that starts the probe
 * server 2 s late, as a first `npx -y` fetch would) gets the longer first-start timeout the first time it starts on
 * this machine, and its own short timeout once it has connected here before (remembered in the data dir).
 */
import { chmodSync, existsSync, mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { assert, describe, it } from "vitest"
import { runLathe, sandbox } from "./helpers.js"

const probe = fileURLToPath(new URL("../../mcp/test/fixtures/probe-server.mjs", import.meta.url))

describe("lathe mcp list and a package runner's first start", () => {
  it("waits for the first start past the server's timeout, then holds later starts to it", async () => {
    const box = sandbox()
    const bin = join(box.dir, "bin")
    mkdirSync(bin)
    // A stand-in for npx: the probe server, answering nothing for its first 2 s.
    writeFileSync(join(bin, "npx"), `#!/bin/sh\nexec "${process.execPath}" "${probe}" --delay 2000\n`)
    chmodSync(join(bin, "npx"), 0o755)
    const configDir = join(box.dir, "config", "lathe")
    mkdirSync(configDir, { recursive: true })
    const server = { type: "local", command: ["npx", "-y", "probe-mcp-server"], timeout: 1_000 }
    writeFileSync(join(configDir, "lathe.json"), JSON.stringify({ mcp: { probe: server } }))
    const env = { ...box.env, PATH: `${bin}:${box.env.PATH}` }

    const first = await runLathe(["mcp", "list"], { cwd: box.project, env, timeoutMs: 90_000 })
    assert.match(first.stdout, /probe\s+connected \(\d+ tools?\)/, first.stdout + first.stderr)
    assert.isTrue(existsSync(join(box.env.LATHE_DATA_DIR ?? "", "mcp-started.json")))

    const second = await runLathe(["mcp", "list"], { cwd: box.project, env, timeoutMs: 90_000 })
    assert.match(second.stdout, /probe\s+failed/, second.stdout + second.stderr)
  }, 120_000)
})
