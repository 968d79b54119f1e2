import { existsSync, mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import type { LatheEvent, Session } from "@lathe/plugin"
import { type PluginContextOptions, pluginContext, runPluginTurn } from "@lathe/plugin/testing"
import { createNotifyPlugin } from "../src/index.js"

const tempRoot = () => mkdtempSync(join(tmpdir(), "lathe-notify-"))

/** The plugin over a recording terminal, set up with `options` in a test context. */
const recorder = async (
  options: Record<string, unknown> = {},
  isTTY = true,
  context: PluginContextOptions & { readonly root?: string } = {}
) => {
  const writes: Array<string> = []
  const plugin = createNotifyPlugin({ write: (text) => writes.push(text), isTTY })
  const hooks = await plugin.setup(pluginContext(context.root ?? tempRoot(), { ...context, options }))
  /** Delivers events to the plugin's event hook, one after another, as the host does. */
  const deliver = async (...events: ReadonlyArray<LatheEvent>) => {
    for (const event of events) await hooks.event?.({ event }, {})
  }
  return { writes, hooks, deliver }
}

const permissionAsked = (sessionID: string, pattern = "rm -rf build"): LatheEvent => ({
  type: "permission.asked",
  id: "p1",
  sessionID,
  permission: "bash",
  patterns: [pattern],
  always: [],
  metadata: {}
})

const session = (id: string, parentID?: string): Session => ({
  id,
  projectID: "test",
  directory: "/",
  title: id,
  ...(parentID === undefined ? {} : { parentID }),
  time: { created: 1, updated: 1 }
})

describe("@lathe/notify's event hook", () => {
  it("rings the bell once when a turn ends (the events of a real turn)", async () => {
    const turn = await runPluginTurn({ plugins: [], steps: [{ steps: [{ text: "hello" }] }] })
    const { writes, deliver } = await recorder()
    await deliver(...turn.events)
    assert.deepStrictEqual(writes, ["\x07"])
  })

  it("announces a failed turn once, with its error, as an OSC 9 notification", async () => {
    const { writes, deliver } = await recorder({ style: "osc9" })
    await deliver(
      { type: "session.error", sessionID: "s1", error: { name: "ModelNotFound", message: "No model acme/m9." } },
      { type: "session.idle", sessionID: "s1" }
    )
    assert.deepStrictEqual(writes, ["\x1b]9;Lathe: Failed: No model acme/m9.\x07"])
  })

  it("stays off when stdout is not a TTY, unless forced", async () => {
    const quiet = await recorder({}, false)
    const forced = await recorder({ force: true, style: "osc777", title: "Build" }, false)
    assert.deepStrictEqual(Object.keys(quiet.hooks), [])
    assert.deepStrictEqual(Object.keys(forced.hooks), ["event"])
    await forced.deliver(permissionAsked("s1"))
    assert.deepStrictEqual(forced.writes, ["\x1b]777;notify;Build;Permission needed: bash rm -rf build\x07"])
  })

  it("announces questions, and not a subagent's child session going idle", async () => {
    const { writes, deliver } = await recorder({ style: "osc9" }, true, {
      sessions: [session("parent"), session("child", "parent")]
    })
    await deliver(
      { type: "session.idle", sessionID: "child" },
      { type: "question.asked", id: "q", sessionID: "parent", questions: [{ question: "Go on?" }] },
      { type: "session.idle", sessionID: "parent" }
    )
    assert.deepStrictEqual(writes, [
      "\x1b]9;Lathe: Question: Go on?\x07",
      "\x1b]9;Lathe: Done: waiting for your next message\x07"
    ])
  })

  it("runs the configured command for real, with the summary as its last argument and no shell", async () => {
    const root = tempRoot()
    const file = join(root, "notified.txt")
    const { writes, deliver } = await recorder(
      { command: ["sh", "-c", `printf '%s\\n' "$@" >> '${file}'`, "sh", "Lathe"], events: ["permission.asked"] },
      true,
      { root }
    )
    await deliver({ type: "session.idle", sessionID: "s1" }, permissionAsked("s1", "$(touch pwned); `touch pwned`"))
    assert.strictEqual(readFileSync(file, "utf8"), "Lathe\nPermission needed: bash $(touch pwned); `touch pwned`\n")
    assert.isFalse(existsSync(join(root, "pwned")) || existsSync("pwned"))
    assert.deepStrictEqual(writes, [])
  })

  it("the command's environment has none of Lathe's secrets (by name, by URL password, by held value)", async () => {
    const root = tempRoot()
    const file = join(root, "env.txt")
    const env = {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      EDITOR: "vi",
      GH_PAT: "ghp_notify0123456789",
      DATABASE_URL: "postgres://u:pw-notify-0123@h/db",
      COPIED: "sk-held-in-config-0123"
    }
    const plugin = createNotifyPlugin({ write: () => undefined, isTTY: true, env })
    const options = { command: ["sh", "-c", `env > '${file}'`], events: ["session.idle"] }
    // The host's `ctx.secrets` holds the values of its config (here a provider's apiKey).
    const hooks = await plugin.setup(pluginContext(root, { options, secrets: ["sk-held-in-config-0123"] }))
    await hooks.event?.({ event: { type: "session.idle", sessionID: "s1" } }, {})
    const seen = readFileSync(file, "utf8")
    for (const value of ["ghp_notify0123456789", "pw-notify-0123", "sk-held-in-config-0123"])
      assert.notInclude(seen, value)
    assert.include(seen, "EDITOR=vi")
  })

  it("refuses bad options at load, naming the option", async () => {
    const failed = await recorder({ style: "loud" }).then(
      () => "",
      (error: unknown) => String(error)
    )
    assert.match(failed, /invalid options:[\s\S]*style[\s\S]*lathe\.json/)
  })
})
