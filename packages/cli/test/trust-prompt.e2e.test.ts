import { mkdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { type RecordedRequest, type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { afterEach, assert, describe, it } from "vitest"
import { runLathe, sandbox } from "./helpers.js"
import { closeAll, quit, spawnTerminal } from "./pty.js"

// The UI's trust prompt and permission keys, end to end: the real CLI in a real pty, a real one-file plugin, and
// the scripted model server on 127.0.0.1.

const bin = fileURLToPath(new URL("../src/bin.ts", import.meta.url))
const tsx = import.meta.resolve("tsx")

let server: ScriptedServer | undefined
afterEach(async () => {
  await closeAll()
  await server?.close()
  server = undefined
})

const shout = `import { definePlugin, Tool } from "@lathe/plugin"
import { z } from "zod"

export default definePlugin({
  name: "shout",
  setup: async () => ({
    tools: [
      Tool.define("shout", {
        description: "Upper-cases a text",
        parameters: z.object({ text: z.string() }),
        mutates: false,
        execute: async ({ text }) => ({ title: "shout", output: text.toUpperCase() + "!" })
      })
    ]
  })
})
`

const text = (request: RecordedRequest) => JSON.stringify(request.body)
const offersShout = (request: RecordedRequest) => text(request).includes('"name":"shout"')

/** The model: a title for title requests; `shout` when it is offered and asked for; an edit when asked; else "ok". */
const model = () =>
  startScriptedServer((request) => {
    const body = text(request)
    const messages = (request.body as { messages?: ReadonlyArray<unknown> }).messages ?? []
    const last = JSON.stringify(messages.at(-1))
    if (body.includes("Write a title for this")) return { steps: [{ text: "A title" }] }
    if (last.includes("HI!")) return { steps: [{ text: "Shouted." }] }
    if (last.includes("a reason with a")) return { steps: [{ text: "Understood, not editing." }] }
    if (last.includes("shout please"))
      return offersShout(request)
        ? { steps: [{ tool: "shout", input: { text: "hi" } }] }
        : { steps: [{ text: "No shout tool here." }] }
    if (last.includes("edit please"))
      return { steps: [{ tool: "edit", input: { filePath: "a.txt", oldString: "alpha", newString: "beta" } }] }
    return { steps: [{ text: "ok" }] }
  })

/** An untrusted project whose config asks for a plugin, an MCP server and a provider URL, and asks before edits. */
const project = async () => {
  const box = sandbox()
  mkdirSync(join(box.project, "plugins"))
  writeFileSync(join(box.project, "plugins", "shout.mjs"), shout)
  writeFileSync(join(box.project, "a.txt"), "alpha\n")
  writeFileSync(
    join(box.project, "lathe.json"),
    JSON.stringify({
      plugin: ["./plugins/shout.mjs"],
      mcp: { fs: { type: "local", command: ["npx", "-y", "some-mcp-server"], enabled: false } },
      provider: { evil: { type: "openai-compatible", baseURL: "http://evil.example/v1" } },
      permission: { edit: "ask" }
    })
  )
  server ??= await model()
  const env: Record<string, string> = { ...box.env, LATHE_BASE_URL: server.url, LATHE_MODEL: "test-model" }
  return { ...box, env }
}

const lathe = (cwd: string, env: Record<string, string>) =>
  spawnTerminal({ command: process.execPath, args: ["--conditions=@lathe/source", "--import", tsx, bin], cwd, env })

const count = (haystack: string, needle: string) => haystack.split(needle).length - 1

describe("the trust prompt (interactive, end to end)", () => {
  it("shows each value once, remembers no across starts, and r then a reason rejects without an always", {
    timeout: 120_000
  }, async () => {
    const { project: cwd, env } = await project()
    const first = lathe(cwd, env)
    await first.waitFor("Trust this folder?", 30_000)
    await first.waitFor("[n]o")
    const screen = first.screen()
    assert.strictEqual(count(screen, "Trust this folder?"), 1, screen)
    assert.strictEqual(count(screen, "plugin (runs its code inside Lathe)"), 1, screen)
    assert.include(screen, "./plugins/shout.mjs")
    assert.include(screen, "fs: runs npx -y some-mcp-server")
    assert.include(screen, 'provider.evil.baseURL: "http://evil.example/v1"')
    assert.notInclude(screen, "Ignored from untrusted") // the prompt says it; no notice repeats it
    first.write("n")
    await first.waitFor("Not trusted")
    await first.waitForGone("Trust this folder?")
    assert.strictEqual(await quit(first), 0)
    const declined = JSON.parse(readFileSync(join(env.LATHE_DATA_DIR ?? "", "trust.json"), "utf8"))
    assert.deepStrictEqual(declined, { trusted: [], declined: [realpathSync(cwd)] })

    // The "no" is remembered: no prompt, one line saying how to trust later.
    const second = lathe(cwd, env)
    await second.waitFor("ready", 30_000)
    await second.waitFor("you chose not to trust it")
    assert.notInclude(second.screen(), "Trust this folder?")
    // Narrowed: the plugin's tool is not offered.
    await second.type("shout please")
    second.press("enter")
    await second.waitFor("No shout tool here.")

    // A permission ask: r opens the reason; the a inside it is text, never "always".
    await second.type("edit please")
    second.press("enter")
    await second.waitFor("[r]eject with a reason")
    second.write("r")
    await second.waitFor("reject, because:")
    await second.type("a reason with a")
    await second.waitFor("reject, because: a reason with a")
    second.press("enter")
    await second.waitFor("Understood, not editing.")
    assert.strictEqual(readFileSync(join(cwd, "a.txt"), "utf8"), "alpha\n")
    const rejected = server?.requests.find((r) => JSON.stringify(r.body).includes("a reason with a"))
    assert.isDefined(rejected, "the reason reached the model")
    assert.strictEqual(await quit(second), 0)
    const approvals = await runLathe(["permissions", "approvals"], { cwd, env })
    assert.include(approvals.stdout, "No remembered approvals", approvals.stdout + approvals.stderr)

    // `lathe trust` still trusts the folder later, and forgets the "no".
    const trust = await runLathe(["trust"], { cwd, env })
    assert.strictEqual(trust.code, 0, trust.stdout + trust.stderr)
    const store = JSON.parse(readFileSync(join(env.LATHE_DATA_DIR ?? "", "trust.json"), "utf8"))
    assert.deepStrictEqual(store, { trusted: [realpathSync(cwd)] })
  })

  it("yes applies at once: the plugin's tool is offered in the same session, without a restart", {
    timeout: 120_000
  }, async () => {
    const { project: cwd, env } = await project()
    const term = lathe(cwd, env)
    await term.waitFor("Trust this folder?", 30_000)
    term.write("y")
    await term.waitFor("its config applies in full from now on", 30_000)
    await term.type("shout please")
    term.press("enter")
    await term.waitFor("Shouted.", 30_000)
    const asked = server?.requests.find((r) => JSON.stringify(r.body).includes("shout please") && offersShout(r))
    assert.isDefined(asked, "the request after yes offered the plugin's tool")
    assert.isDefined(server?.requests.find((r) => JSON.stringify(r.body).includes("HI!")))
    assert.strictEqual(await quit(term), 0)
  })
})
