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

/** A monorepo of the kit, core and the given packages, each with a `src/index.ts` importing its dependencies. */
const monorepo = (packages: ReadonlyArray<Pkg>): string => {
  const root = mkdtempSync(join(tmpdir(), "lathe-kit-arrows-"))
  roots.push(root)
  const write = (path: string, text: string) => {
    mkdirSync(dirname(join(root, path)), { recursive: true })
    writeFileSync(join(root, path), text)
  }
  write("package.json", JSON.stringify({ name: "repo", workspaces: ["packages/*", "plugins/*"] }))
  const all: ReadonlyArray<Pkg> = [
    { dir: "packages/plugin", name: "@lathe/plugin", layer: "layer:kit" },
    { dir: "packages/core", name: "@lathe/core", layer: "layer:core", deps: ["@lathe/plugin"] },
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
  it("lets plugins and feature packages depend on the kit, and host services on core", () => {
    const result = check(
      monorepo([
        { dir: "plugins/shout", name: "@lathe/shout", layer: "layer:plugin", deps: ["@lathe/plugin"] },
        { dir: "packages/lint", name: "@lathe/lint", layer: "layer:feature", deps: ["@lathe/plugin"] },
        { dir: "packages/store", name: "@lathe/store", layer: "layer:service", deps: ["@lathe/plugin", "@lathe/core"] }
      ])
    )
    expect(result.stderr).not.toContain("@lathe/")
    expect(result.stdout).toContain("arrows ok (5 packages")
    expect(result.status).toBe(0)
  })

  it("fails a feature package that reaches core: a devDependency, and an import in src/ and in test/", () => {
    // Written through JSON.stringify so that this test file does not itself import core in the check's eyes.
    const core = JSON.stringify("@lathe/core")
    const root = monorepo([
      { dir: "packages/lint", name: "@lathe/lint", layer: "layer:feature", deps: ["@lathe/plugin"] }
    ])
    writeFileSync(
      join(root, "packages/lint/package.json"),
      JSON.stringify({
        name: "@lathe/lint",
        nx: { tags: ["layer:feature"] },
        dependencies: { "@lathe/plugin": "0.0.0" },
        devDependencies: { "@lathe/core": "0.0.0" }
      })
    )
    writeFileSync(
      join(root, "packages/lint/src/paths.ts"),
      `import { dataDir } from ${core}
export const d = dataDir
`
    )
    mkdirSync(join(root, "packages/lint/test"))
    writeFileSync(
      join(root, "packages/lint/test/lint.test.ts"),
      `import { Config } from ${core}
export { Config }
`
    )
    const result = check(root)
    expect(result.status).toBe(1)
    expect(result.stderr).toContain(
      "@lathe/lint: depends on @lathe/core (devDependencies), but a feature package depends on the author kit " +
        "(@lathe/plugin) alone, in its dependencies and devDependencies, its src/ and its test/; what it needs of the " +
        "host reaches it through the plugin context (ctx)"
    )
    expect(result.stderr).toContain(
      "@lathe/lint: packages/lint/src/paths.ts imports @lathe/core: a feature package imports the author kit alone"
    )
    expect(result.stderr).toContain(
      "@lathe/lint: packages/lint/test/lint.test.ts imports @lathe/core: a feature package imports the author kit alone"
    )
    expect(result.stderr).toContain("arrows: 3 violation(s)")
  })

  it("fails a plugin whose test imports core through its devDependencies", () => {
    const root = monorepo([
      { dir: "plugins/shout", name: "@lathe/shout", layer: "layer:plugin", deps: ["@lathe/plugin"] }
    ])
    writeFileSync(
      join(root, "plugins/shout/package.json"),
      JSON.stringify({
        name: "@lathe/shout",
        nx: { tags: ["layer:plugin"] },
        dependencies: { "@lathe/plugin": "0.0.0" },
        devDependencies: { "@lathe/core": "0.0.0" }
      })
    )
    mkdirSync(join(root, "plugins/shout/test"))
    const line = `import { testLayer } from ${JSON.stringify("@lathe/core/testing")}`
    writeFileSync(
      join(root, "plugins/shout/test/shout.test.ts"),
      `${line}
export { testLayer }
`
    )
    const result = check(root)
    expect(result.status).toBe(1)
    expect(result.stderr).toContain("@lathe/shout: depends on @lathe/core (devDependencies), but a plugin depends on")
    expect(result.stderr).toContain(
      "@lathe/shout: plugins/shout/test/shout.test.ts imports @lathe/core: a plugin imports the author kit alone"
    )
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
      "@lathe/shout: depends on @lathe/tools (dependencies), but a plugin depends on the author kit (@lathe/plugin) alone"
    )
  })

  it("fails a kit that depends on core or a feature package: the kit stands on nothing of ours", () => {
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
      "@lathe/plugin: depends on @lathe/core, but the author kit depends on no other @lathe/* package"
    )
    expect(result.stderr).toContain(
      "@lathe/plugin: depends on @lathe/tools, but the author kit depends on no other @lathe/* package"
    )
  })

  it("fails core depending on anything of ours but the kit, and a kit source file importing core", () => {
    const root = monorepo([{ dir: "packages/tools", name: "@lathe/tools", layer: "layer:feature" }])
    writeFileSync(
      join(root, "packages/core/package.json"),
      JSON.stringify({
        name: "@lathe/core",
        nx: { tags: ["layer:core"] },
        dependencies: { "@lathe/plugin": "0.0.0", "@lathe/tools": "0.0.0" }
      })
    )
    // Written through JSON.stringify so that this test file does not itself import core in the check's eyes.
    const line = `export type { Config } from ${JSON.stringify("@lathe/core")}`
    writeFileSync(join(root, "packages/plugin/src/index.ts"), `${line}\n`)
    const result = check(root)
    expect(result.status).toBe(1)
    expect(result.stderr).toContain(
      "@lathe/core: depends on @lathe/tools, but core may depend only on the author kit (@lathe/plugin)"
    )
    expect(result.stderr).toContain(
      "@lathe/plugin: packages/plugin/src/index.ts imports @lathe/core, which is not in its package.json dependencies"
    )
  })
})
