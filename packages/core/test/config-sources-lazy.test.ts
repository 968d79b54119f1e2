import { execFileSync } from "node:child_process"
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "@effect/vitest"

// Loading the config evaluates the Claude Code / OpenCode translators only when such a file exists: a run without one
// (most runs) pays one failed read per place and nothing else. A child process records every module it resolves.
const require = createRequire(import.meta.url)
const tsx = join(dirname(require.resolve("tsx/package.json")), "dist", "esm", "index.mjs")
const src = join(dirname(fileURLToPath(import.meta.url)), "..", "src", "config")

const script = `
import { registerHooks } from "node:module"
import { writeFileSync, mkdirSync } from "node:fs"
import { join } from "node:path"
const seen = []
registerHooks({ resolve: (specifier, context, next) => { const r = next(specifier, context); seen.push(r.url); return r } })
const { Effect, Layer } = await import("effect")
const { Config } = await import(${JSON.stringify(join(src, "config.ts"))})
const { Paths } = await import(${JSON.stringify(join(src, "paths.ts"))})
const base = process.argv[1]
const root = join(base, "project")
const paths = Paths.layerTest(root, { config: join(base, "global"), data: join(base, "data"), home: base })
const load = () => Effect.runPromise(Effect.gen(function* () { return yield* Config }).pipe(Effect.provide(Config.layerWith({}).pipe(Layer.provide(paths)))))
const translators = () => seen.filter((u) => u.includes("/config-foreign.") || u.includes("/config-claude."))
await load()
const without = translators()
mkdirSync(join(root, ".claude"), { recursive: true })
writeFileSync(join(root, ".claude", "settings.json"), JSON.stringify({ permissions: { deny: ["Bash(git push:*)"] } }))
const config = await load()
process.stdout.write(JSON.stringify({ without, with: translators().map((u) => u.slice(u.lastIndexOf("/") + 1)), sources: config.sources.map((source) => source.format ?? "lathe") }))
`

describe("config sources on demand", () => {
  it("loads the Claude Code / OpenCode translators only once such a file exists", () => {
    const base = realpathSync(mkdtempSync(join(tmpdir(), "lathe-config-lazy-")))
    try {
      for (const dir of ["project", "global", "data"]) mkdirSync(join(base, dir))
      const out = execFileSync(process.execPath, ["--import", tsx, "--input-type=module", "-e", script, base], {
        cwd: dirname(require.resolve("../package.json")),
        encoding: "utf8"
      })
      const result = JSON.parse(out) as { without: Array<string>; with: Array<string>; sources: Array<string> }
      expect(result.without).toEqual([])
      // The hook does see them once a Claude Code settings file is there, and the file is applied.
      expect([...result.with].sort()).toEqual(["config-claude.ts", "config-foreign.ts"])
      expect(result.sources).toContain("claude-code")
    } finally {
      rmSync(base, { recursive: true, force: true })
    }
  })
})
