/**
 * Bring your setup: `lathe config` lists the rules files a session starts with (local siblings and the person's own
 * included), says nested ones load on first touch, and marks a rules file an untrusted project cannot use.
 * In-process, against real files in a temp dir.
 */
import { mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { configCommand } from "../src/commands/config.js"

const setup = () => {
  const base = realpathSync(mkdtempSync(join(tmpdir(), "lathe-setup-rules-config-")))
  const project = join(base, "project")
  for (const dir of ["home/.config/lathe", "home/.local/share", "project/packages/api", "outside"])
    mkdirSync(join(base, dir), { recursive: true })
  writeFileSync(join(project, "AGENTS.md"), "Shared.")
  writeFileSync(join(project, "AGENTS.local.md"), "Mine.")
  writeFileSync(join(project, "packages/api/AGENTS.md"), "Nested.")
  writeFileSync(join(base, "home/.config/lathe/AGENTS.md"), "Global.")
  const env = { HOME: join(base, "home"), XDG_CONFIG_HOME: "", XDG_DATA_HOME: "", LATHE_DATA_DIR: "" }
  return { base, project, env }
}

const config = async (cwd: string, env: Record<string, string>, args: ReadonlyArray<string> = []) => {
  let out = ""
  let err = ""
  const code = await configCommand(args, {
    cwd,
    env,
    isTTY: false,
    stdout: (text) => {
      out += text
    },
    stderr: (text) => {
      err += text
    }
  })
  return { code, out, err }
}

describe("setup-rules: lathe config", () => {
  it("lists the rules files that apply at start, and says nested ones load on first touch", async () => {
    const { base, project, env } = setup()
    const result = await config(project, env)
    assert.strictEqual(result.code, 0, result.err)
    const rules = result.out.slice(result.out.indexOf("rules"), result.out.indexOf("{"))
    assert.include(
      rules,
      [
        "rules     ",
        `  ${join(project, "AGENTS.md")}`,
        `  ${join(project, "AGENTS.local.md")}`,
        `  ${join(base, "home/.config/lathe/AGENTS.md")}`,
        "  AGENTS.md or CLAUDE.md files in folders below this one load when a tool first reads or edits a file there."
      ].join("\n")
    )
    assert.notInclude(rules, "packages/api", "nested rules are not part of the start")
    const json = JSON.parse((await config(project, env, ["--json"])).out) as { rules: ReadonlyArray<string> }
    assert.deepStrictEqual(json.rules, [
      join(project, "AGENTS.md"),
      join(project, "AGENTS.local.md"),
      join(base, "home/.config/lathe/AGENTS.md")
    ])
  })

  it("marks a rules file that leads outside an untrusted project as skipped", async () => {
    const { base, project, env } = setup()
    writeFileSync(join(base, "outside/secret.md"), "SECRET")
    symlinkSync(join(base, "outside/secret.md"), join(project, "CLAUDE.md"))
    const claudeOnly = join(base, "claude-only")
    mkdirSync(claudeOnly)
    symlinkSync(join(base, "outside/secret.md"), join(claudeOnly, "CLAUDE.md"))
    const result = await config(claudeOnly, env)
    assert.include(
      result.out,
      `  ${join(claudeOnly, "CLAUDE.md")} (skipped: it leads to ${join(base, "outside/secret.md")}, outside this ` +
        "untrusted project)"
    )
    assert.notInclude((await config(project, env)).out, join(project, "CLAUDE.md"), "AGENTS.md wins over CLAUDE.md")
  })
})
