import { spawnSync } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterEach, describe, expect, it } from "vitest"

// The real scripts/check-arrows.mjs (what `npm run lint` and CI run), pointed at a throwaway monorepo.
const script = fileURLToPath(new URL("../../../scripts/check-arrows.mjs", import.meta.url))

const roots: Array<string> = []
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true })
})

/** A monorepo with one core package whose `src/` holds `files` (path under src → text); returns its root. */
const monorepo = (files: Readonly<Record<string, string>>): string => {
  const root = mkdtempSync(join(tmpdir(), "lathe-arrows-"))
  roots.push(root)
  const write = (path: string, text: string) => {
    mkdirSync(dirname(join(root, path)), { recursive: true })
    writeFileSync(join(root, path), text)
  }
  write("package.json", JSON.stringify({ name: "repo", workspaces: ["packages/*"] }))
  write("packages/core/package.json", JSON.stringify({ name: "@lathe/core", nx: { tags: ["layer:core"] } }))
  for (const [path, text] of Object.entries(files)) write(`packages/core/src/${path}`, text)
  return root
}

const check = (root: string) => spawnSync(process.execPath, [script, root], { encoding: "utf8", timeout: 20_000 })

describe("scripts/check-arrows.mjs", () => {
  it("fails on a two-file circle closed by a type-only import, naming both files and the lines that close it", () => {
    const root = monorepo({
      "shape.ts": 'import { build } from "./build.js"\n\nexport interface Shape {\n  readonly n: number\n}\n',
      "build.ts":
        '// a comment: import { x } from "./nowhere.js"\nimport type { Shape } from "./shape.js"\n\n' +
        "export const build = (): Shape => ({ n: 1 })\n"
    })
    const result = check(root)
    expect(result.status).toBe(1)
    expect(result.stderr).toContain("packages/core/src/build.ts ↔ packages/core/src/shape.ts")
    expect(result.stderr).toContain("packages/core/src/build.ts:2 → packages/core/src/shape.ts")
    expect(result.stderr).toContain('import type { Shape } from "./shape.js"')
    expect(result.stderr).toContain("packages/core/src/shape.ts:1 → packages/core/src/build.ts")
    expect(result.stderr).toContain("1 import circle(s)")
  })

  it("counts a dynamic import() and a multi-line re-export as edges of a circle through three files", () => {
    const root = monorepo({
      "a.ts": 'export const a = async () => (await import("./b.js")).b\n',
      "b.ts": 'export {\n  c,\n  type C\n} from "./c.js"\nexport const b = 2\n',
      "c.ts": 'import type { a } from "./a.js"\n\nexport type C = typeof a\nexport const c = 3\n'
    })
    const result = check(root)
    expect(result.status).toBe(1)
    expect(result.stderr).toContain("packages/core/src/a.ts ↔ packages/core/src/b.ts ↔ packages/core/src/c.ts")
    expect(result.stderr).toContain("packages/core/src/a.ts:1 → packages/core/src/b.ts")
    expect(result.stderr).toContain('export { c, type C } from "./c.js"')
  })

  it("passes a package whose imports go one way (subfolders, index files, a shared types file)", () => {
    const root = monorepo({
      "types.ts": "export interface Shape {\n  readonly n: number\n}\n",
      "build.ts": 'import type { Shape } from "./types.js"\n\nexport const build = (): Shape => ({ n: 1 })\n',
      "room/index.ts": 'export { build } from "../build.js"\n',
      "index.ts": 'export * from "./room/index.js"\nexport type { Shape } from "./types.js"\n'
    })
    const result = check(root)
    expect(result.stderr).not.toMatch(/import circles|violation/) // (a note on this repo's allow-list may show)
    expect(result.stdout).toBe("arrows ok (1 packages, no import circles)\n")
    expect(result.status).toBe(0)
  })
})
