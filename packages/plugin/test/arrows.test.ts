import { spawnSync } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterEach, describe, expect, it } from "vitest"

// The real scripts/check-arrows.mjs, pointed at a throwaway monorepo: where the author kit (layer:kit) stands.
const script = fileURLToPath(new URL("../../../scripts/check-arrows.mjs", import.meta.url))

const roots: Array<string> = []
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true })
})

interface Pkg {
  readonly dir: string
  readonly name: string
  readonly layer: string
  readonly deps?: ReadonlyArray<string>
}

/** A monorepo of core, the kit and the given packages, each with a `src/index.ts` importing its dependencies. */
const monorepo = (packages: ReadonlyArray<Pkg>): string => {
  const root = mkdtempSync(join(tmpdir(), "lathe-kit-arrows-"))
  roots.push(root)
  const write = (path: string, text: string) => {
    mkdirSync(dirname(join(root, path)), { recursive: true })
    writeFileSync(join(root, path), text)
  }
  write("package.json", JSON.stringify({ name: "repo", workspaces: ["packages/*", "plugins/*"] }))
  const all: ReadonlyArray<Pkg> = [
    { dir: "packages/core", name: "@lathe/core", layer: "layer:core" },
    { dir: "packages/plugin", name: "@lathe/plugin", layer: "layer:kit", deps: ["@lathe/core"] },
    ...packages
  ]
  for (const p of all) {
    const deps = Object.fromEntries((p.deps ?? []).map((d) => [d, "0.0.0"]))
    write(`${p.dir}/package.json`, JSON.stringify({ name: p.name, nx: { tags: [p.layer] }, dependencies: deps }))
    write(`${p.dir}/src/index.ts`, `${(p.deps ?? []).map((d) => `export * from "${d}"\n`).join("")}export {}\n`)
  }
  return root
}

const check = (root: string) => spawnSync(process.execPath, [script, root], { encoding: "utf8", timeout: 20_000 })

describe("the author kit in scripts/check-arrows.mjs", () => {
  it("lets plugins and feature packages depend on the kit and core", () => {
    const result = check(
      monorepo([
        { dir: "plugins/shout", name: "@lathe/shout", layer: "layer:plugin", deps: ["@lathe/plugin"] },
        { dir: "packages/tools", name: "@lathe/tools", layer: "layer:feature", deps: ["@lathe/plugin", "@lathe/core"] }
      ])
    )
    expect(result.stderr).not.toContain("@lathe/")
    expect(result.stdout).toContain("arrows ok (4 packages")
    expect(result.status).toBe(0)
  })

  it("keeps the kit on core alone, and plugins off feature packages", () => {
    const result = check(
      monorepo([
        { dir: "packages/tools", name: "@lathe/tools", layer: "layer:feature", deps: ["@lathe/plugin"] },
        { dir: "plugins/shout", name: "@lathe/shout", layer: "layer:plugin", deps: ["@lathe/plugin", "@lathe/tools"] }
      ])
    )
    expect(result.status).toBe(1)
    expect(result.stderr).toContain(
      "@lathe/shout: depends on @lathe/tools, but a plugin may depend only on @lathe/core and the author kit"
    )
  })

  it("fails a kit that depends on a feature package", () => {
    const root = monorepo([{ dir: "packages/tools", name: "@lathe/tools", layer: "layer:feature" }])
    const kit = join(root, "packages/plugin/package.json")
    writeFileSync(
      kit,
      JSON.stringify({
        name: "@lathe/plugin",
        nx: { tags: ["layer:kit"] },
        dependencies: { "@lathe/core": "0.0.0", "@lathe/tools": "0.0.0" }
      })
    )
    const result = check(root)
    expect(result.status).toBe(1)
    expect(result.stderr).toContain(
      "@lathe/plugin: depends on @lathe/tools, but the author kit may depend only on layer:core"
    )
  })
})
