import { createHash } from "node:crypto"
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { afterEach, assert, describe, it } from "vitest"
import { main } from "../src/main.js"
import { runAtTerminal, runLathe, sandbox } from "./helpers.js"

// Remembered approvals end to end: "always" at a real terminal and runs of the real CLI (separate processes) against
// a scripted model server; `lathe permissions approvals` / `forget` through the CLI's own entry point, in process
// (the same code bin.ts runs, without paying a process start per listing).
let server: ScriptedServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

const readA = { tool: "read", input: { filePath: "a.txt" } }

const setup = async (script: Parameters<typeof startScriptedServer>[0], permission: unknown) => {
  server = await startScriptedServer(script)
  const box = sandbox()
  writeFileSync(join(box.project, "a.txt"), "alpha\n")
  mkdirSync(join(box.dir, "config", "lathe"), { recursive: true })
  writeFileSync(join(box.dir, "config", "lathe", "lathe.json"), JSON.stringify({ permission }))
  const env = { ...box.env, LATHE_BASE_URL: server.url, LATHE_MODEL: "m" }
  const lathe = (args: ReadonlyArray<string>) => runLathe(args, { cwd: box.project, env, timeoutMs: 90_000 })
  const permissions = async (...args: ReadonlyArray<string>) => {
    let stdout = ""
    let stderr = ""
    const write = (to: "out" | "err") => (text: string) => {
      if (to === "out") stdout += text
      else stderr += text
    }
    const code = await main(["permissions", ...args], {
      stdout: write("out"),
      stderr: write("err"),
      env,
      cwd: box.project,
      isTTY: false
    })
    return { code, stdout, stderr }
  }
  return { ...box, env, lathe, permissions }
}

/** The project's approvals file: outside git, the project id is the sha1 of its real path. */
const approvalsFile = (dir: string, project: string) =>
  join(dir, "data", "permission", `${createHash("sha1").update(realpathSync(project)).digest("hex")}.json`)

describe("lathe permissions approvals / forget", () => {
  it("lists what an 'always' remembered (permission, pattern, project, when); forget makes Lathe ask again", async () => {
    const { dir, project, env, lathe, permissions } = await setup(
      [
        { steps: [{ tool: "bash", input: { command: "touch made-by-bash", description: "make it" } }] },
        { steps: [{ text: "made" }] },
        { steps: [{ tool: "bash", input: { command: "touch again", description: "make another" } }] },
        { steps: [{ text: "refused" }] }
      ],
      { bash: "ask" }
    )
    const before = Date.now()
    const first = await runAtTerminal(["run", "make a file"], {
      cwd: project,
      env,
      prompt: "answer: [o]nce",
      answer: "a"
    })
    assert.strictEqual(first.code, 0, first.output)
    assert.isTrue(existsSync(join(project, "made-by-bash")))

    const listed = await permissions("approvals")
    assert.strictEqual(listed.code, 0, listed.stderr)
    const root = realpathSync(project)
    assert.match(listed.stdout, new RegExp(`^ +1 {2}bash "touch \\*" in ${root}, \\d{4}-\\d\\d-\\d\\dT`, "m"))
    const json = await permissions("approvals", "--json")
    const rows = JSON.parse(json.stdout) as Array<Record<string, unknown>>
    assert.strictEqual(rows.length, 1)
    assert.deepInclude(rows[0], { number: 1, permission: "bash", pattern: "touch *", project: root, applies: true })
    const when = Date.parse(String(rows[0]?.when))
    assert.isTrue(when >= before - 1000 && when <= Date.now(), String(rows[0]?.when))

    assert.strictEqual((await permissions("forget", "2")).code, 1)
    const usage = await permissions("forget", "1", "--all")
    assert.strictEqual(usage.code, 2)
    const forgot = await permissions("forget", "1")
    assert.strictEqual(forgot.code, 0, forgot.stderr)
    assert.include(forgot.stdout, 'Forgot 1 remembered approval; Lathe asks again:\n  bash "touch *"')
    assert.include((await permissions("approvals")).stdout, "No remembered approvals")

    // Without the approval and without a terminal, the same kind of command is asked again, so refused.
    const again = await lathe(["run", "--format", "json", "make another"])
    assert.isTrue(again.events.some((e) => e.type === "permission.asked" && e.permission === "bash"))
    assert.isFalse(existsSync(join(project, "again")))
    assert.strictEqual(JSON.parse(readFileSync(approvalsFile(dir, project), "utf8")).rules.length, 0)
  }, 180_000)

  it("'always' on the repeated-call guard lasts for that session only, and an old stored one is not applied", async () => {
    const repeat = { steps: [readA] }
    const { dir, project, env, lathe, permissions } = await setup(
      [repeat, repeat, repeat, repeat, { steps: [{ text: "done reading" }] }, repeat, repeat, repeat],
      {}
    )
    // Calls 3 and 4 repeat the first: the guard asks at 3; "always" covers 4 in the same session.
    const first = await runAtTerminal(["run", "read it"], { cwd: project, env, prompt: "answer: [o]nce", answer: "a" })
    assert.strictEqual(first.code, 0, first.output)
    assert.strictEqual(first.output.split("Permission needed: doom_loop").length - 1, 1, first.output)
    assert.include(first.output, "always would allow for the rest of this session: read")
    assert.isFalse(existsSync(approvalsFile(dir, project)), "a doom_loop approval is never stored")
    assert.include((await permissions("approvals")).stdout, "No remembered approvals")

    // A file an older Lathe wrote, with the guard switched off for read: listed as not applied, and not applied.
    const file = approvalsFile(dir, project)
    mkdirSync(join(dir, "data", "permission"), { recursive: true })
    const old = { permission: "doom_loop", pattern: "read", action: "allow", source: "remembered approval" }
    writeFileSync(file, JSON.stringify({ version: 1, rules: [old] }))
    const listed = await permissions("approvals")
    assert.include(listed.stdout, 'doom_loop "read" in project id ')
    assert.include(listed.stdout, "time not recorded (not applied: doom_loop approvals now last for one session)")

    // A new session: the guard asks again (and without a terminal, the loop is stopped).
    const second = await lathe(["run", "--format", "json", "read it again"])
    assert.isTrue(second.events.some((e) => e.type === "permission.asked" && e.permission === "doom_loop"))
    const forgot = await permissions("forget", "--all")
    assert.include(forgot.stdout, 'Forgot 1 remembered approval; Lathe asks again:\n  doom_loop "read"')
    assert.deepStrictEqual(
      readdirSync(join(dir, "data", "permission")).filter((name) => name.endsWith(".json")),
      [file.split("/").at(-1)]
    )
  }, 180_000)
})
