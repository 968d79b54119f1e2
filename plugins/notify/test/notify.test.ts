import { existsSync, mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { createSession, SessionPrompt } from "@lathe/core"
import { Bus, chunks, Plugins, testLayer, testLoopLayer } from "@lathe/core/testing"
import type { LatheEvent } from "@lathe/plugin"
import { Effect } from "effect"
import { createNotifyPlugin } from "../src/index.js"

const tempRoot = () => mkdtempSync(join(tmpdir(), "lathe-notify-"))

/** A plugin entry over a recording terminal. */
const recorder = (options: Record<string, unknown> = {}, isTTY = true) => {
  const writes: Array<string> = []
  const entry = { plugin: createNotifyPlugin({ write: (text) => writes.push(text), isTTY }), options }
  return { writes, entry }
}

/** Waits (real time, at most 3 s) until `ready` holds, then a little longer so that a duplicate would show. */
const settle = (ready: () => boolean) =>
  Effect.promise(async () => {
    for (let waited = 0; !ready() && waited < 3_000; waited += 10) await new Promise((r) => setTimeout(r, 10))
    await new Promise((r) => setTimeout(r, 50))
  })

const prompt = (text: string) =>
  Effect.gen(function* () {
    const session = yield* createSession({ title: "test" })
    return yield* (yield* SessionPrompt).prompt({
      sessionID: session.id,
      parts: [{ type: "text", text }],
      title: false
    })
  })

const permissionAsked = (sessionID: string, pattern = "rm -rf build"): LatheEvent => ({
  type: "permission.asked",
  id: "p1",
  sessionID,
  permission: "bash",
  patterns: [pattern],
  always: [],
  metadata: {}
})

describe("@lathe/notify through the host", () => {
  it.live("rings the bell once when a turn ends", () => {
    const { writes, entry } = recorder()
    return Effect.gen(function* () {
      yield* prompt("hi")
      yield* settle(() => writes.length > 0)
      assert.deepStrictEqual(writes, ["\x07"])
    }).pipe(
      Effect.provide(
        testLoopLayer({
          root: tempRoot(),
          plugins: [entry],
          steps: [[chunks.text("hello"), chunks.finish({ input: 1, output: 1 })]]
        })
      )
    )
  })

  it.live("announces a failed turn once, with its error, as an OSC 9 notification", () => {
    const { writes, entry } = recorder({ style: "osc9" })
    return Effect.gen(function* () {
      yield* Effect.flip(prompt("hi"))
      yield* settle(() => writes.length > 0)
      assert.deepStrictEqual(writes, [
        "\x1b]9;Lathe: Failed: The scripted model has no step for call 1: the script has 0.\x07"
      ])
    }).pipe(Effect.provide(testLoopLayer({ root: tempRoot(), plugins: [entry], steps: [] })))
  })

  it.live("stays off when stdout is not a TTY, unless forced", () => {
    const quiet = recorder({}, false)
    const forced = recorder({ force: true, style: "osc777", title: "Build" }, false)
    return Effect.gen(function* () {
      const plugins = yield* Plugins
      assert.deepStrictEqual(
        plugins.list.map((p) => p.hooks),
        [[], ["event"]]
      )
      const bus = yield* Bus
      yield* bus.publish(permissionAsked("s1"))
      yield* settle(() => forced.writes.length > 0)
      assert.deepStrictEqual(quiet.writes, [])
      assert.deepStrictEqual(forced.writes, ["\x1b]777;notify;Build;Permission needed: bash rm -rf build\x07"])
    }).pipe(Effect.provide(testLayer({ root: tempRoot(), plugins: [quiet.entry, forced.entry] })))
  })

  it.live("announces questions, and not a subagent's child session going idle", () => {
    const { writes, entry } = recorder({ style: "osc9" })
    return Effect.gen(function* () {
      const bus = yield* Bus
      const parent = yield* createSession({ title: "parent" })
      const child = yield* createSession({ title: "child", parentID: parent.id })
      yield* bus.publish({ type: "session.idle", sessionID: child.id })
      yield* bus.publish({ type: "question.asked", id: "q", sessionID: parent.id, questions: [{ question: "Go on?" }] })
      yield* bus.publish({ type: "session.idle", sessionID: parent.id })
      yield* settle(() => writes.length >= 2)
      assert.deepStrictEqual(writes, [
        "\x1b]9;Lathe: Question: Go on?\x07",
        "\x1b]9;Lathe: Done: waiting for your next message\x07"
      ])
    }).pipe(Effect.provide(testLayer({ root: tempRoot(), plugins: [entry] })))
  })

  it.live("runs the configured command for real, with the summary as its last argument and no shell", () => {
    const root = tempRoot()
    const file = join(root, "notified.txt")
    const { writes, entry } = recorder({
      command: ["sh", "-c", `printf '%s\\n' "$@" >> '${file}'`, "sh", "Lathe"],
      events: ["permission.asked"]
    })
    return Effect.gen(function* () {
      const bus = yield* Bus
      yield* bus.publish({ type: "session.idle", sessionID: "s1" })
      yield* bus.publish(permissionAsked("s1", "$(touch pwned); `touch pwned`"))
      yield* settle(() => existsSync(file))
      assert.strictEqual(readFileSync(file, "utf8"), "Lathe\nPermission needed: bash $(touch pwned); `touch pwned`\n")
      assert.isFalse(existsSync(join(root, "pwned")) || existsSync("pwned"))
      assert.deepStrictEqual(writes, [])
    }).pipe(Effect.provide(testLayer({ root, plugins: [entry] })))
  })

  it.live("the command's environment has none of Lathe's secrets (by name, by URL password, by held value)", () => {
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
    const entry = { plugin, options: { command: ["sh", "-c", `env > '${file}'`], events: ["session.idle"] } }
    return Effect.gen(function* () {
      yield* (yield* Bus).publish({ type: "session.idle", sessionID: "s1" })
      yield* settle(() => existsSync(file))
      const seen = readFileSync(file, "utf8")
      for (const value of ["ghp_notify0123456789", "pw-notify-0123", "sk-held-in-config-0123"])
        assert.notInclude(seen, value)
      assert.include(seen, "EDITOR=vi")
    }).pipe(
      Effect.provide(
        testLayer({
          root,
          plugins: [entry],
          config: { provider: { local: { type: "openai-compatible", apiKey: "sk-held-in-config-0123" } } }
        })
      )
    )
  })

  it.live("refuses bad options at load, naming the option", () =>
    Effect.gen(function* () {
      const plugins = yield* Plugins
      assert.deepStrictEqual(plugins.list, [])
      assert.match(plugins.failed[0]?.message ?? "", /invalid options:[\s\S]*style[\s\S]*lathe\.json/)
    }).pipe(Effect.provide(testLayer({ root: tempRoot(), plugins: [recorder({ style: "loud" }).entry] })))
  )
})
