import { execFileSync } from "node:child_process"
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { afterEach, assert, describe, it } from "vitest"
import { type CliRun, runLathe, sandbox } from "./helpers.js"

// "An agent's edit rules bind every write route": the plan agent cannot change the project through bash, even with
// --yes, and still writes its plans (through bash too, in the real bubblewrap sandbox, where .lathe/plans stays
// writable inside a read-only .lathe). Real CLI, real bash and bwrap; only the model is scripted.
let server: ScriptedServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

const SOURCE = "export const one = 1\n"

const setup = async (commands: ReadonlyArray<string>) => {
  server = await startScriptedServer([
    ...commands.map((command) => ({ steps: [{ tool: "bash", input: { command, description: "run it" } }] })),
    { steps: [{ text: "finished" }] }
  ])
  const box = sandbox()
  mkdirSync(join(box.project, "src"))
  writeFileSync(join(box.project, "src", "a.ts"), SOURCE)
  writeFileSync(join(box.project, "src", "b.ts"), "export const two = 2\n")
  return { ...box, env: { ...box.env, LATHE_BASE_URL: server.url, LATHE_MODEL: "m" } }
}

const errors = (run: CliRun): Array<string> =>
  run.events.flatMap((e) => (e.type === "tool.error" && e.state.status === "error" ? [e.state.error] : []))

const writes = [
  "echo x > src/a.ts",
  "sed -i s/one/two/ src/a.ts",
  "cp src/b.ts src/a.ts",
  "echo x | tee src/a.ts",
  "cd src && echo x >> a.ts"
]

describe.runIf(process.platform === "linux")("lathe run --agent plan: writes through bash", () => {
  it("without Lathe each command changes the source file", () => {
    for (const command of writes) {
      const box = sandbox()
      mkdirSync(join(box.project, "src"))
      writeFileSync(join(box.project, "src", "a.ts"), SOURCE)
      writeFileSync(join(box.project, "src", "b.ts"), "export const two = 2\n")
      execFileSync("bash", ["-c", command], { cwd: box.project })
      assert.notStrictEqual(readFileSync(join(box.project, "src", "a.ts"), "utf8"), SOURCE, command)
    }
  })

  it("--yes: echo >, sed -i, cp, tee and cd && >> leave src/a.ts unchanged, and the model is told why", async () => {
    const { project, env } = await setup(writes)
    const run = await runLathe(["run", "--format", "json", "--agent", "plan", "--yes", "change the source"], {
      cwd: project,
      env,
      timeoutMs: 60_000
    })
    assert.strictEqual(run.code, 0, run.stderr)
    assert.strictEqual(readFileSync(join(project, "src", "a.ts"), "utf8"), SOURCE)
    const failed = errors(run)
    assert.strictEqual(failed.length, writes.length, JSON.stringify(failed))
    // `cd src && … >> a.ts`: a redirection of a list is counted from the cwd before and after (a.ts, src/a.ts).
    for (const error of failed) assert.match(error, /Permission "edit" is denied for "(src\/)?a\.ts"/)
    const told = JSON.stringify(server?.requests.at(-1)?.body)
    assert.include(told, 'Permission \\"edit\\" is denied for \\"src/a.ts\\"')
  })

  it("--yes: echo plan > .lathe/plans/p.md works, in a project without .lathe and in one with it", async () => {
    const line = "mkdir -p .lathe/plans && echo plan > .lathe/plans/p.md"
    for (const existing of [false, true]) {
      const { project, env } = await setup([line])
      if (existing) mkdirSync(join(project, ".lathe"))
      const run = await runLathe(["run", "--format", "json", "--agent", "plan", "--yes", "write the plan"], {
        cwd: project,
        env,
        timeoutMs: 60_000
      })
      assert.strictEqual(run.code, 0, run.stderr)
      assert.deepStrictEqual(errors(run), [])
      assert.strictEqual(readFileSync(join(project, ".lathe", "plans", "p.md"), "utf8"), "plan\n")
      await server?.close()
      server = undefined
    }
  }, 120_000)

  it("the sandbox keeps .lathe read-only around a writable .lathe/plans", async () => {
    const { project, env } = await setup([
      "echo '{}' > .lathe/lathe.json; echo plan > .lathe/plans/p.md; mv .lathe/plans .lathe/moved; ls .lathe"
    ])
    mkdirSync(join(project, ".lathe"))
    const run = await runLathe(["run", "--format", "json", "--yes", "write"], { cwd: project, env, timeoutMs: 60_000 })
    assert.strictEqual(run.code, 0, run.stderr)
    assert.isFalse(existsSync(join(project, ".lathe", "lathe.json")), "the rest of .lathe stays read-only")
    assert.isFalse(existsSync(join(project, ".lathe", "moved")), ".lathe/plans cannot be moved away")
    assert.strictEqual(readFileSync(join(project, ".lathe", "plans", "p.md"), "utf8"), "plan\n")
  })
})
