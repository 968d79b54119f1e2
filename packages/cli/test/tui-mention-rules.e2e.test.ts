import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { afterEach, assert, describe, it } from "vitest"
import { sandbox } from "./helpers.js"
import { closeAll, spawnTerminal } from "./pty.js"

// An @mentioned file is attached only where the session's read rules let it be read, as `-f` files are: a file the
// rules deny is neither read nor sent, and the person is told why; an allowed one is inlined as before.

const bin = fileURLToPath(new URL("../src/bin.ts", import.meta.url))
const tsx = import.meta.resolve("tsx")

let server: ScriptedServer | undefined
afterEach(async () => {
  await closeAll()
  await server?.close()
  server = undefined
})

describe("lathe (interactive): @mentions obey the read rules", () => {
  it("a denied file is not attached and the person is told; an allowed file is inlined", {
    timeout: 120_000
  }, async () => {
    server = await startScriptedServer((request) => {
      if (JSON.stringify(request.body).includes("Write a title for this")) return { steps: [{ text: "Mentions" }] }
      return { steps: [{ text: "looked" }] }
    })
    const box = sandbox()
    writeFileSync(join(box.project, "secret.txt"), "TOPSECRET-VALUE\n")
    writeFileSync(join(box.project, "notes.txt"), "PLAIN-NOTES\n")
    mkdirSync(join(box.env.XDG_CONFIG_HOME ?? "", "lathe"), { recursive: true })
    writeFileSync(
      join(box.env.XDG_CONFIG_HOME ?? "", "lathe", "lathe.json"),
      JSON.stringify({ permission: { read: { "*": "allow", "secret.txt": "deny" } } })
    )
    const env = { ...box.env, LATHE_BASE_URL: server.url, LATHE_MODEL: "test-model" }
    const term = spawnTerminal({
      command: process.execPath,
      args: ["--conditions=@lathe/source", "--import", tsx, bin],
      cwd: box.project,
      env
    })
    await term.waitFor("ready", 30_000)
    await term.type("compare @secret.txt with @notes.txt ")
    term.press("enter")
    await term.waitFor("looked", 30_000)
    await term.waitFor("Not attached")
    const bodies = server.requests.map((r) => JSON.stringify(r.body)).join("\n")
    assert.notInclude(bodies, "TOPSECRET-VALUE", "the denied file's content never reaches the model")
    assert.include(bodies, "PLAIN-NOTES", "the allowed file is inlined as before")
    assert.include(term.screen(), "denied by the permission rules")
  })
})
