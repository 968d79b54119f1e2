import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { type RecordedRequest, type ScriptedReply, type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { afterEach, assert, describe, it } from "vitest"
import { sandbox } from "./helpers.js"
import { closeAll, spawnTerminal } from "./pty.js"

const bin = fileURLToPath(new URL("../src/bin.ts", import.meta.url))
const tsx = import.meta.resolve("tsx")

let server: ScriptedServer | undefined
afterEach(async () => {
  await closeAll()
  await server?.close()
  server = undefined
})

const isTitleRequest = (request: RecordedRequest) => JSON.stringify(request.body).includes("Write a title for this")

/** A scripted model: title requests get a title; every other request the next reply of `replies`. */
const setup = async (replies: ReadonlyArray<ScriptedReply>) => {
  let next = 0
  server = await startScriptedServer((request) =>
    isTitleRequest(request) ? { steps: [{ text: "Greeting and a fix" }] } : replies[next++]
  )
  const box = sandbox()
  writeFileSync(join(box.project, "a.txt"), "alpha\n")
  // Edits are allowed by default; this project asks (config may always narrow what Lathe does).
  writeFileSync(join(box.project, "lathe.json"), JSON.stringify({ permission: { edit: "ask" } }))
  const env = { ...box.env, LATHE_BASE_URL: server.url, LATHE_MODEL: "test-model" }
  return { ...box, env, server }
}

const lathe = (cwd: string, env: Record<string, string>, args: ReadonlyArray<string> = []) =>
  spawnTerminal({
    command: process.execPath,
    args: ["--conditions=@lathe/source", "--import", tsx, bin, ...args],
    cwd,
    env
  })

const slowText = Array.from({ length: 60 }, (_, i) => ({ text: `word${i} ` }))

describe("lathe (interactive, end to end)", () => {
  it("a whole session: streamed answer, an ask answered 'always', the diff, /undo, Esc, quit, --continue", {
    timeout: 90_000
  }, async () => {
    const { project, env } = await setup([
      { steps: [{ text: "Hello from the **model**." }] },
      { steps: [{ tool: "edit", input: { filePath: "a.txt", oldString: "alpha", newString: "ALPHA" } }] },
      { steps: [{ text: "Changed a.txt." }] },
      { steps: slowText, delayMs: 150 }
    ])
    const term = lathe(project, env)
    await term.waitFor("ready", 30_000)

    await term.type("say hello")
    term.press("enter")
    await term.waitFor("Hello from the model.")
    assert.notInclude(term.screen(), "**model**", "markdown is rendered, not shown raw")

    await term.type("fix a")
    term.press("enter")
    await term.waitFor("Permission")
    assert.match(term.screen(), /a\.txt/)
    assert.include(term.screen(), "[a]lways")
    term.write("a")
    await term.waitFor("Changed a.txt.")
    const afterEdit = term.screen()
    assert.match(afterEdit, /- alpha/)
    assert.match(afterEdit, /\+ ALPHA/)
    assert.strictEqual(readFileSync(join(project, "a.txt"), "utf8"), "ALPHA\n")

    await term.type("/undo")
    await term.waitFor("Put back the files") // the command palette lists it
    term.press("enter")
    await term.waitFor("Restored 1 file")
    assert.strictEqual(readFileSync(join(project, "a.txt"), "utf8"), "alpha\n")

    await term.type("go slowly")
    term.press("enter")
    await term.waitFor("word3 ")
    term.press("escape")
    await term.waitFor("interrupted")
    await term.waitFor("ready")
    assert.notInclude(term.screen(), "word59")

    term.press("ctrl-c")
    await term.waitFor("Ctrl+C again")
    term.press("ctrl-c")
    assert.strictEqual(await term.exited, 0)

    const again = lathe(project, env, ["--continue"])
    await again.waitFor("ready", 30_000)
    const resumed = again.screen()
    assert.include(resumed, "go slowly")
    assert.include(resumed, "word3")
    assert.include(resumed, "interrupted")
    again.press("pageup")
    again.press("pageup")
    await again.waitFor("Hello from the model.")
    again.press("ctrl-c")
    again.press("ctrl-c")
    assert.strictEqual(await again.exited, 0)
  })
})
