/**
 * Bring your setup, end to end: the real `lathe run` with the real read tool, against a scripted model server. A
 * read below `packages/api` sends that folder's `AGENTS.md` (with its local sibling and an `@path` import) to the
 * model in the next request, and tells the person on stderr.
 */
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { afterEach, assert, describe, it } from "vitest"
import { runLathe, sandbox } from "./helpers.js"

let server: ScriptedServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

describe("lathe run: nested rules files", () => {
  it("a read below packages/api brings its rules into the next request, once, with a notice", async () => {
    server = await startScriptedServer([
      { steps: [{ tool: "read", input: { filePath: "packages/api/x.ts" } }] },
      { steps: [{ text: "read it" }] }
    ])
    const box = sandbox()
    mkdirSync(join(box.project, "packages/api/docs"), { recursive: true })
    writeFileSync(join(box.project, "AGENTS.md"), "ROOT-RULE")
    writeFileSync(join(box.project, "packages/api/AGENTS.md"), "API-RULE\n@docs/style.md")
    writeFileSync(join(box.project, "packages/api/AGENTS.local.md"), "API-LOCAL-RULE")
    writeFileSync(join(box.project, "packages/api/docs/style.md"), "API-STYLE-RULE")
    writeFileSync(join(box.project, "packages/api/x.ts"), "export const x = 1\n")
    const env = { ...box.env, LATHE_BASE_URL: server.url, LATHE_MODEL: "m" }
    const run = await runLathe(["run", "look at x"], { cwd: box.project, env })
    assert.strictEqual(run.code, 0, run.stderr)
    const [first, second] = server.requests.map((request) => JSON.stringify(request.body))
    assert.include(first, "ROOT-RULE")
    for (const marker of ["API-RULE", "API-LOCAL-RULE", "API-STYLE-RULE"]) {
      assert.notInclude(first, marker)
      assert.strictEqual(second?.split(marker).length, 2, `${marker} once in the second request`)
    }
    assert.include(run.stderr, "rules: packages/api/AGENTS.md")
    assert.include(run.stderr, "rules: packages/api/AGENTS.local.md")
  })
})
