import { execFileSync } from "node:child_process"
import { existsSync, rmSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import type { PluginHooks, PluginLogger } from "@lathe/plugin"
import { pluginContext } from "@lathe/plugin/testing"
import { createHooksPlugin } from "../src/index.js"
import { on, tempDir, writeJson } from "./helpers.js"

/** A log that keeps each line's text. */
const logTo = (lines: Array<string>): PluginLogger => {
  const keep = (message: string) => {
    lines.push(message)
  }
  return { info: keep, warn: keep, error: keep }
}

/** Triggers the PreToolUse point for a bash call. */
const bashCall = async (hooks: PluginHooks) => {
  await hooks["tool.before"]?.({ tool: "bash", sessionID: "s", callID: "c" }, { args: { command: "ls" } })
  return { has: hooks["tool.before"] !== undefined }
}

// The host's half (a project's own lathe.json `hooks` are dropped until `lathe trust`) is core's to test
// (config-trust-allowlist.test.ts); here, what the plugin does with `ctx.trusted`.
describe("trust", () => {
  it("an untrusted project's hooks do not run, with a notice saying how to trust it; trusted, they run", async () => {
    const root = tempDir()
    const home = tempDir()
    const payload = 'touch "$CLAUDE_PROJECT_DIR/pwned-by-$HOOK_FILE"'
    // Without Lathe, the payload runs: a shell with the project dir set makes the file.
    execFileSync("bash", ["-c", payload], { env: { ...process.env, CLAUDE_PROJECT_DIR: root, HOOK_FILE: "bare" } })
    assert.isTrue(existsSync(join(root, "pwned-by-bare")))
    rmSync(join(root, "pwned-by-bare"))

    const hook = (file: string) => on("Bash", `HOOK_FILE=${file} && ${payload}`)
    writeJson(join(root, ".claude", "settings.json"), { hooks: { PreToolUse: hook("settings") } })
    writeJson(join(root, ".claude", "settings.local.json"), { hooks: { PreToolUse: hook("local") } })
    const made = () => ["settings", "local", "lathe"].filter((file) => existsSync(join(root, `pwned-by-${file}`)))

    const logs: Array<string> = []
    // Untrusted, the host gives no config `hooks` (it dropped the project's); the plugin skips `.claude/` itself.
    const untrusted = await bashCall(
      await createHooksPlugin().setup(pluginContext(root, { home, trusted: false, log: logTo(logs) }))
    )
    assert.deepStrictEqual(made(), [])
    assert.isFalse(untrusted.has)
    assert.deepStrictEqual(logs, [
      `Ignored the hooks in ${join(root, ".claude", "settings.json")} and ${join(root, ".claude", "settings.local.json")}: ` +
        `this project is not trusted. Run \`lathe trust\` in ${root} to run them.`
    ])

    const config = { hooks: { PreToolUse: hook("lathe") } }
    const trusted = await bashCall(await createHooksPlugin().setup(pluginContext(root, { home, config })))
    assert.isTrue(trusted.has)
    assert.deepStrictEqual(made(), ["settings", "local", "lathe"])
  })

  it("the person's own ~/.claude/settings.json hooks run in an untrusted project", async () => {
    const root = tempDir()
    const home = tempDir()
    writeJson(join(home, ".claude", "settings.json"), { hooks: { PreToolUse: on("Bash", `touch "${home}/ran"`) } })
    const result = await bashCall(await createHooksPlugin().setup(pluginContext(root, { home, trusted: false })))
    assert.isTrue(result.has)
    assert.isTrue(existsSync(join(home, "ran")))
  })
})
