import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { afterEach, assert, describe, it } from "vitest"
import { sandbox } from "./helpers.js"
import { closeAll, quit, spawnTerminal } from "./pty.js"

// The UI's smaller first-run items, end to end in a real pty against the scripted model server: an armed Esc that
// waits for a running tool, "interrupted" said once, /export outside the project with each call's command and
// output, and the session picker's date in the same format as `lathe session list`.

const bin = fileURLToPath(new URL("../src/bin.ts", import.meta.url))
const tsx = import.meta.resolve("tsx")

let server: ScriptedServer | undefined
afterEach(async () => {
  await closeAll()
  await server?.close()
  server = undefined
})

const count = (haystack: string, needle: string) => haystack.split(needle).length - 1

describe("lathe (interactive): the first-run details", () => {
  it("Esc stays armed while bash runs; the interrupt is said once; /export and /sessions", {
    timeout: 120_000
  }, async () => {
    server = await startScriptedServer((request) => {
      const body = JSON.stringify(request.body)
      const messages = (request.body as { messages?: ReadonlyArray<unknown> }).messages ?? []
      const last = JSON.stringify(messages.at(-1))
      if (body.includes("Write a title for this")) return { steps: [{ text: "Echo and sleep" }] }
      if (last.includes("say hi"))
        return { steps: [{ tool: "bash", input: { command: "echo hi-from-bash", description: "Say hi" } }] }
      if (last.includes("hi-from-bash")) return { steps: [{ text: "Said hi." }] }
      if (last.includes("run slow"))
        return { steps: [{ tool: "bash", input: { command: "sleep 20; echo finished", description: "Sleep" } }] }
      return { steps: [{ text: "ok" }] }
    })
    const box = sandbox()
    const env = { ...box.env, LATHE_BASE_URL: server.url, LATHE_MODEL: "test-model" }
    const term = spawnTerminal({
      command: process.execPath,
      args: ["--conditions=@lathe/source", "--import", tsx, bin],
      cwd: box.project,
      env
    })
    await term.waitFor("ready", 30_000)
    await term.type("say hi")
    term.press("enter")
    await term.waitFor("Said hi.", 30_000)

    await term.type("run slow")
    term.press("enter")
    await term.waitFor(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] bash Sleep/, 30_000)
    term.press("escape")
    await term.waitFor("press Esc again")
    // Well past the 2 s a first Ctrl+C waits: the tool still runs, so the Esc is still armed and its hint shown.
    await new Promise((resolve) => setTimeout(resolve, 3_500))
    assert.include(term.screen(), "press Esc again")
    term.press("escape")
    await term.waitFor("interrupted")
    await term.waitFor("ready")
    const screen = term.screen()
    assert.strictEqual(count(screen, "interrupted"), 1, screen)
    assert.notInclude(screen, "finished")

    await term.type("/export")
    await term.waitFor("Write this session as Markdown")
    term.press("enter")
    await term.waitFor("Wrote /")
    const exports = join(box.env.LATHE_DATA_DIR ?? "", "exports")
    const [file] = readdirSync(exports)
    const markdown = readFileSync(join(exports, file ?? ""), "utf8")
    assert.include(markdown, "echo hi-from-bash") // the call's command
    assert.include(markdown, "hi-from-bash\n") // and its output
    assert.deepStrictEqual(
      readdirSync(box.project).filter((f) => f.endsWith(".md")),
      []
    )

    await term.type("/sessions")
    term.press("enter")
    await term.waitFor(/Echo and sleep {2}\d{4}-\d\d-\d\d \d\d:\d\d · ses_/)
    term.press("escape")
    assert.strictEqual(await quit(term), 0)
  })
})
