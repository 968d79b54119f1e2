/**
 * `lathe permissions explain` for a file tool's path agrees with a real run: a write outside the project (given as
 * `../outside.txt`, or through a symlink that points out) is asked about as `external_directory` before the tool's
 * own `edit`, exactly as `lathe run` asks it. Real CLI processes, real files and symlinks; only the model is scripted.
 */
import { existsSync, mkdirSync, realpathSync, symlinkSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { afterEach, assert, describe, it } from "vitest"
import { runLathe, sandbox } from "./helpers.js"

let server: ScriptedServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

const slow = { timeout: 60_000 }

interface Explained {
  readonly decision: string
  readonly verdicts: ReadonlyArray<{ readonly check: { readonly permission: string }; readonly action: string }>
}

/** What a run with no terminal does with a scripted `write` of `filePath`: the permissions it asked, in order. */
const runWrite = async (project: string, env: Record<string, string>, filePath: string) => {
  server = await startScriptedServer([
    { steps: [{ tool: "write", input: { filePath, content: "from the agent\n" } }] },
    { steps: [{ text: "done" }] }
  ])
  const run = await runLathe(["run", "--format", "json", "write it"], {
    cwd: project,
    env: { ...env, LATHE_BASE_URL: server.url, LATHE_MODEL: "m" },
    timeoutMs: 60_000
  })
  const asked = run.events.flatMap((e) => (e.type === "permission.asked" ? [e.permission] : []))
  return { run, asked }
}

const explain = async (project: string, env: Record<string, string>, path: string) => {
  const text = await runLathe(["permissions", "explain", "write", path], { cwd: project, env })
  const json = await runLathe(["permissions", "explain", "write", path, "--json"], { cwd: project, env })
  assert.strictEqual(json.code, 0, json.stderr)
  return { text: text.stdout, json: JSON.parse(json.stdout) as Explained }
}

describe("permissions explain agrees with a run for writes outside the project", () => {
  it(
    "write ../outside.txt: explain says ask (external_directory), and the run asks external_directory",
    slow,
    async () => {
      const box = sandbox()
      const target = join(dirname(box.project), "outside.txt")

      const { json, text } = await explain(box.project, box.env, "../outside.txt")
      assert.strictEqual(json.decision, "ask", text)
      assert.deepStrictEqual(
        json.verdicts.map((v) => [v.check.permission, v.action]),
        [
          ["external_directory", "ask"],
          ["edit", "allow"]
        ]
      )
      assert.match(text, /^write "\.\.\/outside\.txt": ask \(agent build\)$/m)
      assert.include(text, `external_directory "${join(realpathSync(dirname(box.project)), "*")}": ask`)

      const { run, asked } = await runWrite(box.project, box.env, "../outside.txt")
      assert.strictEqual(asked[0], "external_directory", `${run.stdout}\n${run.stderr}`)
      assert.include(run.stderr, "rejected an external_directory ask")
      assert.isFalse(existsSync(target), "nothing written outside the project")

      // Inside the project the same write is allowed by both.
      const inside = await explain(box.project, box.env, "inside.txt")
      assert.strictEqual(inside.json.decision, "allow", inside.text)
    }
  )

  it("a symlink in the project pointing out: explain and the run both ask external_directory", slow, async () => {
    const box = sandbox()
    const elsewhere = join(box.dir, "elsewhere")
    mkdirSync(elsewhere)
    symlinkSync(elsewhere, join(box.project, "link"))

    const { json, text } = await explain(box.project, box.env, "link/x.txt")
    assert.strictEqual(json.decision, "ask", text)
    assert.strictEqual(json.verdicts[0]?.check.permission, "external_directory")
    assert.include(text, `external_directory "${join(realpathSync(elsewhere), "*")}": ask`)

    const { run, asked } = await runWrite(box.project, box.env, "link/x.txt")
    assert.strictEqual(asked[0], "external_directory", `${run.stdout}\n${run.stderr}`)
    assert.isFalse(existsSync(join(elsewhere, "x.txt")), "nothing written through the link")
  })

  it("an allow rule for the outside folder: explain and the run both allow the write", slow, async () => {
    const box = sandbox()
    const outside = realpathSync(dirname(box.project))
    const config = join(box.env.XDG_CONFIG_HOME ?? "", "lathe")
    mkdirSync(config, { recursive: true })
    writeFileSync(
      join(config, "lathe.json"),
      JSON.stringify({ permission: { external_directory: { [join(outside, "*")]: "allow" } } })
    )
    const { json, text } = await explain(box.project, box.env, "../outside.txt")
    assert.strictEqual(json.decision, "allow", text)

    const { run, asked } = await runWrite(box.project, box.env, "../outside.txt")
    assert.strictEqual(run.code, 0, run.stderr)
    assert.deepStrictEqual(asked, [])
    assert.isTrue(existsSync(join(outside, "outside.txt")))
  })
})
