import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { afterEach, assert, describe, it } from "vitest"
import { runLathe, sandbox } from "./helpers.js"

// What a person reads on stderr when an untrusted project has skills and agent files: sentences that say which files
// were ignored and how to trust the folder, with none of the log fields (`{"paths":[…]}`) the log file keeps.
let server: ScriptedServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

// Several real CLI runs per test, on a machine shared with other test runs.
const timeoutMs = 90_000
const slow = { timeout: 4 * timeoutMs }

const write = (path: string, text: string) => {
  mkdirSync(join(path, ".."), { recursive: true })
  writeFileSync(path, text)
}

describe("warnings read as sentences", () => {
  it("an untrusted project's skills and agent files: the sentence, no raw JSON fields", slow, async () => {
    server = await startScriptedServer([{ steps: [{ text: "Hello." }] }])
    const box = sandbox()
    write(
      join(box.project, ".lathe", "skills", "deploy", "SKILL.md"),
      "---\nname: deploy\ndescription: Deploys\n---\nDo it.\n"
    )
    write(join(box.project, ".lathe", "agents", "helper.md"), "---\ndescription: Helps\n---\nHelp.\n")
    const env = { ...box.env, LATHE_BASE_URL: server.url, LATHE_MODEL: "m" }
    const run = await runLathe(["run", "hi"], { cwd: box.project, env, timeoutMs })
    assert.strictEqual(run.code, 0, run.stderr)
    assert.include(run.stdout, "Hello.")
    const lines = run.stderr.split("\n").filter((line) => line.startsWith("lathe: "))
    const skills = lines.find((line) => line.includes("Ignored the project's skills"))
    assert.isDefined(skills, run.stderr)
    assert.match(skills ?? "", /Run `lathe trust` in .* to load them\.$/)
    const agents = lines.find((line) => line.includes("agent file(s)"))
    assert.match(agents ?? "", /helper\.md\. Run `lathe trust` in .* to load them\.$/)
    assert.notMatch(run.stderr, /[{[]"(paths|files|path)"/)
    assert.notInclude(run.stderr, ': {"')
  })
})
