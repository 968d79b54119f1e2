/**
 * "Walls, round three: permissions judge the real path", end to end through the real CLI with no terminal. A
 * symlink committed in the project points a file tool's path somewhere else: plain bash (and plain Node) go through
 * it, which is the payload; `lathe run` judges the path as given and as it really is, and the strictest verdict wins.
 * Only the model is scripted (a local server that records each request).
 */
import { execFileSync } from "node:child_process"
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { afterEach, assert, describe, it } from "vitest"
import { type CliRun, runLathe, sandbox } from "./helpers.js"

let server: ScriptedServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

const PASSWORD = "PASSWORD=walls3-hunter2-7f1c"
const CONTROL = "CONTROL-PLAIN-FILE-4d2e"

/** A project, a scripted model calling `calls` one per step then finishing, and the person's `permission` config. */
const setup = async (
  calls: ReadonlyArray<{ readonly tool: string; readonly input: unknown }>,
  permission?: Record<string, unknown>
) => {
  server = await startScriptedServer([...calls.map((call) => ({ steps: [call] })), { steps: [{ text: "finished" }] }])
  const box = sandbox()
  if (permission) {
    mkdirSync(join(box.dir, "config", "lathe"), { recursive: true })
    writeFileSync(join(box.dir, "config", "lathe", "lathe.json"), JSON.stringify({ permission }))
  }
  return { ...box, env: { ...box.env, LATHE_BASE_URL: server.url, LATHE_MODEL: "m" } }
}

const errors = (run: CliRun): Array<string> =>
  run.events.flatMap((e) => (e.type === "tool.error" && e.state.status === "error" ? [e.state.error] : []))

/** The plan agent's committed payload: `.lathe/plans` is a link to `src/`. */
const planLink = (project: string) => {
  mkdirSync(join(project, "src"))
  mkdirSync(join(project, ".lathe"))
  symlinkSync("../src", join(project, ".lathe", "plans"))
}

/** `notes -> secrets`, with a key file in secrets/. */
const notesLink = (project: string) => {
  mkdirSync(join(project, "secrets"))
  writeFileSync(join(project, "secrets", "key.txt"), "KEY\n")
  symlinkSync("secrets", join(project, "notes"))
}

describe.runIf(process.platform !== "win32")("walls3: file tools judge the real path (lathe run)", () => {
  it("without Lathe, each payload goes through its link", () => {
    const box = sandbox()
    planLink(box.project)
    execFileSync("bash", ["-c", "echo x > .lathe/plans/x.md"], { cwd: box.project })
    assert.strictEqual(readFileSync(join(box.project, "src", "x.md"), "utf8"), "x\n")
    notesLink(box.project)
    execFileSync("bash", ["-c", "echo changed > notes/key.txt"], { cwd: box.project })
    assert.strictEqual(readFileSync(join(box.project, "secrets", "key.txt"), "utf8"), "changed\n")
    writeFileSync(join(box.project, ".env"), PASSWORD)
    symlinkSync(".env", join(box.project, "settings.txt"))
    assert.strictEqual(execFileSync("cat", ["settings.txt"], { cwd: box.project, encoding: "utf8" }), PASSWORD)
  })

  it("--agent plan --yes: write .lathe/plans/x.md through a link to src/ is denied, as bash's write is", async () => {
    const { project, env } = await setup([
      { tool: "write", input: { filePath: ".lathe/plans/x.md", content: "pwned" } },
      { tool: "bash", input: { command: "echo pwned > .lathe/plans/y.md", description: "write the plan" } }
    ])
    planLink(project)
    const run = await runLathe(["run", "--format", "json", "--agent", "plan", "--yes", "write the plan"], {
      cwd: project,
      env,
      timeoutMs: 60_000
    })
    assert.strictEqual(run.code, 0, run.stderr)
    assert.isFalse(existsSync(join(project, "src", "x.md")))
    assert.isFalse(existsSync(join(project, "src", "y.md")))
    // The file tool and bash agree: both name the real place the write would land.
    const failed = errors(run)
    assert.strictEqual(failed.length, 2, JSON.stringify(failed))
    assert.include(failed[0], 'Permission "edit" is denied for "src/x.md"')
    assert.include(failed[1], 'Permission "edit" is denied for "src/y.md"')
    assert.include(JSON.stringify(server?.requests[1]?.body), 'is denied for \\"src/x.md\\"')
  }, 90_000)

  it("--yes: an edit deny on secrets/* holds through notes -> secrets", async () => {
    const { project, env } = await setup(
      [
        { tool: "read", input: { filePath: "notes/key.txt" } },
        { tool: "edit", input: { filePath: "notes/key.txt", oldString: "KEY", newString: "pwned" } },
        { tool: "write", input: { filePath: "notes/new.txt", content: "pwned" } }
      ],
      { edit: { "secrets/*": "deny" } }
    )
    notesLink(project)
    const run = await runLathe(["run", "--format", "json", "--yes", "change the notes"], {
      cwd: project,
      env,
      timeoutMs: 60_000
    })
    assert.strictEqual(run.code, 0, run.stderr)
    assert.strictEqual(readFileSync(join(project, "secrets", "key.txt"), "utf8"), "KEY\n")
    assert.isFalse(existsSync(join(project, "secrets", "new.txt")))
    const failed = errors(run)
    assert.strictEqual(failed.length, 2, JSON.stringify(failed))
    assert.include(failed[0], 'Permission "edit" is denied for "secrets/key.txt"')
    assert.include(failed[1], 'Permission "edit" is denied for "secrets/new.txt"')
  }, 90_000)

  it("no terminal: read settings.txt -> .env is asked as .env and refused; the password never reaches the model", async () => {
    const { project, env } = await setup([
      { tool: "read", input: { filePath: "plain.txt" } },
      { tool: "read", input: { filePath: "settings.txt" } }
    ])
    writeFileSync(join(project, "plain.txt"), CONTROL)
    writeFileSync(join(project, ".env"), PASSWORD)
    symlinkSync(".env", join(project, "settings.txt"))
    const run = await runLathe(["run", "--format", "json", "read the settings"], {
      cwd: project,
      env,
      timeoutMs: 60_000
    })
    // The control: a plain read is sent to the model, so the run really carries file contents.
    assert.include(JSON.stringify(server?.requests[1]?.body), CONTROL, run.stderr)
    const asked = run.events.find((e) => e.type === "permission.asked" && e.permission === "read")
    assert.isDefined(asked, run.stdout)
    assert.deepInclude(asked?.type === "permission.asked" ? asked.patterns : [], ".env")
    for (const request of server?.requests ?? []) assert.notInclude(JSON.stringify(request.body), PASSWORD)
    assert.notInclude(run.stdout, PASSWORD)
  }, 90_000)
})
