import { spawnSync } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterEach, describe, expect, it } from "vitest"

// The real scripts/check-arrows.mjs (what `npm run lint` and CI run), pointed at a throwaway monorepo whose core and
// CLI have this repository's rooms: core's rooms stand in one order, and so do the CLI's src/*, tui/ and commands/.
const script = fileURLToPath(new URL("../../../scripts/check-arrows.mjs", import.meta.url))

const roots: Array<string> = []
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true })
})

/** Core's rooms, bottom to top, each with one file importing nothing. */
const CORE_ROOMS = ["schema", "contracts", "process", "provider", "config", "catalog", "llm", "store"]
const LATER_ROOMS = ["plugin-host", "loop", "testing"]

/** A monorepo of core and the CLI with a file in each room, plus `files` (path under packages/ → text). */
const monorepo = (files: Readonly<Record<string, string>>): string => {
  const root = mkdtempSync(join(tmpdir(), "lathe-rooms-"))
  roots.push(root)
  const write = (path: string, text: string) => {
    mkdirSync(dirname(join(root, path)), { recursive: true })
    writeFileSync(join(root, path), text)
  }
  write("package.json", JSON.stringify({ name: "repo", workspaces: ["packages/*"] }))
  write("packages/core/package.json", JSON.stringify({ name: "@lathe/core", nx: { tags: ["layer:core"] } }))
  write("packages/cli/package.json", JSON.stringify({ name: "@lathe/cli", nx: { tags: ["layer:app"] } }))
  for (const room of [...CORE_ROOMS, ...LATER_ROOMS]) write(`packages/core/src/${room}/a.ts`, "export const a = 1\n")
  // Each room imports the one below it, and the entry imports the top: the order as the code has it.
  write("packages/core/src/loop/step.ts", 'import { a } from "../plugin-host/a.js"\nexport const step = a\n')
  write("packages/core/src/index.ts", 'export { step } from "./loop/step.js"\n')
  write("packages/cli/src/io.ts", "export const io = 1\n")
  write("packages/cli/src/tui/app.ts", 'import { io } from "../io.js"\nexport const app = io\n')
  write("packages/cli/src/commands/run.ts", 'import { app } from "../tui/app.js"\nexport const run = app\n')
  write("packages/cli/src/main.ts", 'export const load = () => import("./commands/run.js")\n')
  for (const [path, text] of Object.entries(files)) write(`packages/${path}`, text)
  return root
}

const check = (root: string) => spawnSync(process.execPath, [script, root], { encoding: "utf8", timeout: 20_000 })

describe("the room order in scripts/check-arrows.mjs", () => {
  it("passes core and the CLI when every room imports only rooms below it", () => {
    const result = check(monorepo({}))
    expect(result.stderr).toBe("")
    expect(result.status).toBe(0)
  })

  it("fails a back-edge in core (a type-only import counts), naming both files, the line and the rule", () => {
    const result = check(
      monorepo({
        "core/src/config/paths.ts": 'import type { step } from "../loop/step.js"\nexport type Step = typeof step\n'
      })
    )
    expect(result.status).toBe(1)
    expect(result.stderr).toContain(
      "packages/core/src/config/paths.ts:1 imports packages/core/src/loop/step.ts: config/ stands below loop/ in " +
        "packages/core/src's room order (schema/ → contracts/ → process/ → provider/ → config/ → catalog/ → llm/ → " +
        "store/ → plugin-host/ → loop/ → testing/), and a lower room never imports a higher one (DESIGN.md §1)"
    )
    expect(result.stderr).toContain('import type { step } from "../loop/step.js"')
    expect(result.stderr).toContain("1 room-order break(s)")
  })

  it("fails a back-edge of the CLI (tui/ reaching into commands/, src/* into tui/) and a room importing an entry", () => {
    const result = check(
      monorepo({
        "cli/src/tui/slash.ts": 'export const undo = async () => (await import("../commands/run.js")).run\n',
        "cli/src/render.ts": 'export { app } from "./tui/app.js"\n',
        "core/src/store/b.ts": 'import { step } from "../index.js"\nexport const b = step\n'
      })
    )
    expect(result.status).toBe(1)
    expect(result.stderr).toContain(
      "packages/cli/src/tui/slash.ts:1 imports packages/cli/src/commands/run.ts: tui/ stands below commands/"
    )
    expect(result.stderr).toContain(
      "packages/cli/src/render.ts:1 imports packages/cli/src/tui/app.ts: src/* stands below tui/"
    )
    expect(result.stderr).toContain(
      "packages/core/src/store/b.ts:1 imports packages/core/src/index.ts, an entry of packages/core/src"
    )
    expect(result.stderr).toContain("3 room-order break(s)")
  })

  it("fails a new folder in core until it is given its floor", () => {
    const result = check(monorepo({ "core/src/cache/c.ts": "export const c = 1\n" }))
    expect(result.status).toBe(1)
    expect(result.stderr).toContain(
      "packages/core/src/cache/c.ts: room cache/ has no floor in packages/core/src's room order"
    )
  })
})
