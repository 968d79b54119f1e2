import { execFileSync } from "node:child_process"
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { describe, expect, it } from "@effect/vitest"

// `@lathe/agents/plugin` is what the CLI loads on every run: it must not load `yaml` (nor the markdown parser) when
// there is no agent file to parse. A child process records every module it resolves.
const require = createRequire(import.meta.url)
const tsx = join(dirname(require.resolve("tsx/package.json")), "dist", "esm", "index.mjs")

const script = `
import { registerHooks } from "node:module"
const seen = []
registerHooks({ resolve: (specifier, context, next) => { const r = next(specifier, context); seen.push(r.url); return r } })
const { default: plugin } = await import("@lathe/agents/plugin")
const [root, configDir] = process.argv.slice(-2)
const warnings = []
const hooks = await plugin.setup({
  config: { agent: {} }, root, configDir, trusted: true,
  catalog: { ready: async () => {}, providers: () => [], newestModel: () => undefined },
  log: { info() {}, warn(message) { warnings.push(message) }, error() {}, debug() {} }
})
process.stdout.write(JSON.stringify({
  agents: hooks.agents.map((agent) => agent.name),
  warnings,
  yaml: seen.filter((url) => /[\\\\/]yaml[\\\\/]/.test(url)).length,
  markdown: seen.some((url) => url.endsWith("/src/markdown.ts"))
}))
`

/** Sets the agents plugin up in a fresh process, in a project `root` with config dir `configDir`. */
const setUp = (root: string, configDir: string) =>
  JSON.parse(
    execFileSync(
      process.execPath,
      ["--conditions=@lathe/source", "--import", tsx, "--input-type=module", "-e", script, root, configDir],
      { cwd: dirname(require.resolve("../package.json")), encoding: "utf8" }
    )
  ) as { agents: Array<string>; warnings: Array<string>; yaml: number; markdown: boolean }

describe("@lathe/agents/plugin", () => {
  it("loads neither yaml nor the markdown parser when there is no agent file", () => {
    const root = mkdtempSync(join(tmpdir(), "lathe-agents-entry-"))
    const result = setUp(root, join(root, "config"))
    expect(result.agents).toContain("build")
    expect(result.warnings).toEqual([])
    expect({ yaml: result.yaml, markdown: result.markdown }).toEqual({ yaml: 0, markdown: false })
  })

  it("loads them once an agent file exists, and the file's agent is there", () => {
    const root = mkdtempSync(join(tmpdir(), "lathe-agents-entry-"))
    mkdirSync(join(root, ".lathe", "agents"), { recursive: true })
    writeFileSync(join(root, ".lathe", "agents", "docs.md"), "---\ndescription: Writes docs\n---\nYou write docs.")
    const result = setUp(root, join(root, "config"))
    expect(result.agents).toContain("docs")
    expect(result.warnings).toEqual([])
    expect(result.yaml).toBeGreaterThan(0)
    expect(result.markdown).toBe(true)
  })
})
