import { execFileSync } from "node:child_process"
import { existsSync, rmSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { trustProject } from "@lathe/core"
import { Bus, Config, Paths, Plugins, SessionStore } from "@lathe/core/testing"
import { Effect, Layer, Logger } from "effect"
import { createHooksPlugin } from "../src/index.js"
import { on, tempDir, writeJson } from "./helpers.js"

/** The hooks plugin in a host with the real file-based Config (a project is untrusted until `lathe trust`). */
const host = (root: string, paths: { config: string; home: string; data: string }, logs: Array<string>) =>
  Plugins.layer([createHooksPlugin()]).pipe(
    Layer.provideMerge(
      Layer.mergeAll(Config.layerWith({}), Bus.layer, SessionStore.memory).pipe(
        Layer.provideMerge(Paths.layerTest(root, paths))
      )
    ),
    Layer.provide(
      Logger.layer([Logger.make(({ message }) => logs.push(String(Array.isArray(message) ? message[0] : message)))])
    )
  )

/** Triggers the PreToolUse point for a bash call. */
const bashCall = Effect.gen(function* () {
  const plugins = yield* Plugins
  yield* plugins.trigger("tool.before", { tool: "bash", sessionID: "s", callID: "c" }, { args: { command: "ls" } })
  const config = yield* Config
  return { has: plugins.has("tool.before"), notices: config.notices }
})

describe("trust", () => {
  it.live("an untrusted project's hooks do not run, with a notice saying how to trust it; trusted, they run", () => {
    const root = tempDir()
    const paths = { config: tempDir(), home: tempDir(), data: tempDir() }
    const payload = 'touch "$CLAUDE_PROJECT_DIR/pwned-by-$HOOK_FILE"'
    // Without Lathe, the payload runs: a shell with the project dir set makes the file.
    execFileSync("bash", ["-c", payload], { env: { ...process.env, CLAUDE_PROJECT_DIR: root, HOOK_FILE: "bare" } })
    assert.isTrue(existsSync(join(root, "pwned-by-bare")))
    rmSync(join(root, "pwned-by-bare"))

    const hook = (file: string) => on("Bash", `HOOK_FILE=${file} && ${payload}`)
    writeJson(join(root, ".claude", "settings.json"), { hooks: { PreToolUse: hook("settings") } })
    writeJson(join(root, ".claude", "settings.local.json"), { hooks: { PreToolUse: hook("local") } })
    writeJson(join(root, "lathe.json"), { hooks: { PreToolUse: hook("lathe") } })
    const made = () => ["settings", "local", "lathe"].filter((file) => existsSync(join(root, `pwned-by-${file}`)))

    const logs: Array<string> = []
    return Effect.gen(function* () {
      const untrusted = yield* bashCall.pipe(Effect.provide(host(root, paths, logs)))
      assert.deepStrictEqual(made(), [])
      assert.isFalse(untrusted.has)
      const notice = logs.find((line) => line.includes("Ignored the hooks in"))
      assert.strictEqual(
        notice,
        `Ignored the hooks in ${join(root, ".claude", "settings.json")} and ${join(root, ".claude", "settings.local.json")}: ` +
          `this project is not trusted. Run \`lathe trust\` in ${root} to run them.`
      )
      // The project's lathe.json `hooks` are dropped with the config's own untrusted notice.
      const ignored = untrusted.notices.find((line) => line.startsWith("Ignored from untrusted"))
      assert.include(ignored, "hooks (PreToolUse)")
      assert.include(ignored, "lathe trust")

      yield* Effect.gen(function* () {
        yield* trustProject(yield* Paths)
      }).pipe(Effect.provide(Paths.layerTest(root, paths)))
      const trusted = yield* bashCall.pipe(Effect.provide(host(root, paths, [])))
      assert.isTrue(trusted.has)
      assert.deepStrictEqual(made(), ["settings", "local", "lathe"])
    })
  })

  it.live("the person's own ~/.claude/settings.json hooks run in an untrusted project", () => {
    const root = tempDir()
    const paths = { config: tempDir(), home: tempDir(), data: tempDir() }
    writeJson(join(paths.home, ".claude", "settings.json"), {
      hooks: { PreToolUse: on("Bash", `touch "${paths.home}/ran"`) }
    })
    return Effect.gen(function* () {
      const result = yield* bashCall.pipe(Effect.provide(host(root, paths, [])))
      assert.isTrue(result.has)
      assert.isTrue(existsSync(join(paths.home, "ran")))
    })
  })
})
