import { existsSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { createBashTool } from "../src/bash.js"
import { detectSandbox, type SandboxDetector } from "../src/sandbox.js"
import { harness, run, runError, tempDir } from "./helpers.js"

/** A machine without a sandbox, simulated. */
const none: SandboxDetector = async () => ({ kind: "none", reason: "simulated: no bwrap here" })

describe("bash without a sandbox on the machine", () => {
  it("runs commands under the permission rules alone and says so once", async () => {
    const h = harness()
    const notices: Array<string> = []
    const bash = createBashTool({ sandbox: { mode: "workspace-write" }, detect: none, notice: (m) => notices.push(m) })
    const outside = tempDir("lathe-outside-")
    const out = await run(bash, { command: `echo ok > ${outside}/x.txt`, description: "Write" }, h.ctx())
    await run(bash, { command: "true", description: "Again" }, h.ctx())
    expect(existsSync(join(outside, "x.txt"))).toBe(true)
    expect(out.metadata).toMatchObject({ sandbox: "none", exitCode: 0 })
    expect(notices).toEqual([
      "No sandbox for bash on this machine: simulated: no bwrap here. Commands run under the permission rules " +
        'alone; merge { "sandbox": "required" } into lathe.json to refuse them instead.'
    ])
  })

  it('"required" refuses bash with a clear error before asking or running anything', async () => {
    const h = harness()
    const bash = createBashTool({ sandbox: { required: true }, detect: none })
    const error = await runError(bash, { command: "touch ran.txt", description: "Touch" }, h.ctx())
    expect(error).toEqual({
      _tag: "ToolExecutionError",
      message:
        'bash is refused: the config sets sandbox to "required" and no sandbox is available on this machine: ' +
        "simulated: no bwrap here. Tell the user; they can install bubblewrap (Debian/Ubuntu: apt install " +
        'bubblewrap) or change "sandbox" in lathe.json.'
    })
    expect(h.asks).toEqual([])
    expect(existsSync(h.path("ran.txt"))).toBe(false)
  })

  it('"required" with mode "off" (a project narrowing a global "off") refuses too', async () => {
    const h = harness()
    const bash = createBashTool({ sandbox: { mode: "off", required: true }, detect: none })
    const error = await runError(bash, { command: "true", description: "True" }, h.ctx())
    expect(error.message).toMatch(/^bash is refused: the config sets sandbox to "required" and also sets its mode/)
  })

  it('mode "off" never looks for a sandbox', async () => {
    const h = harness()
    let looked = false
    const bash = createBashTool({
      sandbox: { mode: "off" },
      detect: async () => {
        looked = true
        return { kind: "none" }
      }
    })
    const out = await run(bash, { command: "echo hi", description: "Hi" }, h.ctx())
    expect(out.metadata).toMatchObject({ sandbox: "off" })
    expect(looked).toBe(false)
  })

  it("the real detector finds none on a PATH without bwrap, and says how to get it", async () => {
    const found = await detectSandbox({ platform: "linux", path: tempDir("lathe-empty-path-") })
    expect(found.kind).toBe("none")
    expect(found.reason).toContain("apt install bubblewrap")
  })

  it("platforms without a supported sandbox report none", async () => {
    expect(await detectSandbox({ platform: "win32" })).toEqual({
      kind: "none",
      reason: "no sandbox is supported on win32"
    })
  })
})
