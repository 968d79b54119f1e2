import { execFileSync } from "node:child_process"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { tempDir, writeSkill } from "./helpers.js"

// `@lathe/skills/plugin` is what the CLI loads on every run: it must not load `yaml` (nor the SKILL.md parser) when
// there is no skill to parse. A child process records every module it resolves.
const require = createRequire(import.meta.url)
const tsx = join(dirname(require.resolve("tsx/package.json")), "dist", "esm", "index.mjs")

const script = `
import { registerHooks } from "node:module"
const seen = []
registerHooks({ resolve: (specifier, context, next) => { const r = next(specifier, context); seen.push(r.url); return r } })
const { default: plugin } = await import("@lathe/skills/plugin")
const [root, configDir, home] = process.argv.slice(-3)
const warnings = []
const hooks = await plugin.setup({
  config: {}, root, configDir, home, trusted: true,
  log: { info() {}, warn(message) { warnings.push(message) }, error() {}, debug() {} }
})
const output = { system: [] }
hooks["system.transform"]({ permission: [{ permission: "*", pattern: "*", action: "allow" }] }, output)
process.stdout.write(JSON.stringify({
  system: output.system.join("\\n"),
  warnings,
  yaml: seen.filter((url) => /[\\\\/]yaml[\\\\/]/.test(url)).length,
  parser: seen.some((url) => url.endsWith("/src/skill-file.ts"))
}))
`

/** Sets the skills plugin up in a fresh process, with a temp project, config dir and home. */
const setUp = (dirs: { root: string; config: string; home: string }) =>
  JSON.parse(
    execFileSync(
      process.execPath,
      [
        "--conditions=@lathe/source",
        "--import",
        tsx,
        "--input-type=module",
        "-e",
        script,
        dirs.root,
        dirs.config,
        dirs.home
      ],
      { cwd: dirname(require.resolve("../package.json")), encoding: "utf8" }
    )
  ) as { system: string; warnings: Array<string>; yaml: number; parser: boolean }

describe("@lathe/skills/plugin", () => {
  it("loads neither yaml nor the SKILL.md parser when there is no skill", () => {
    const result = setUp({ root: tempDir(), config: tempDir(), home: tempDir() })
    expect(result.system).toBe("")
    expect(result.warnings).toEqual([])
    expect({ yaml: result.yaml, parser: result.parser }).toEqual({ yaml: 0, parser: false })
  })

  it("loads them once a skill exists, and lists the skill", () => {
    const dirs = { root: tempDir(), config: tempDir(), home: tempDir() }
    writeSkill(dirs.root, ".lathe/skills", "release-notes", "How release notes are written.")
    const result = setUp(dirs)
    expect(result.system).toContain("- release-notes: How release notes are written.")
    expect(result.warnings).toEqual([])
    expect(result.yaml).toBeGreaterThan(0)
    expect(result.parser).toBe(true)
  })
})
