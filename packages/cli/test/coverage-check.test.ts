import { spawnSync } from "node:child_process"
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterEach, describe, expect, it } from "vitest"

// The real scripts/coverage.mjs (the table and the thresholds at the end of scripts/test), pointed at a throwaway
// workspace whose packages hold vitest's json-summary report as a coverage run leaves it.
const script = fileURLToPath(new URL("../../../scripts/coverage.mjs", import.meta.url))

const roots: Array<string> = []
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true })
})

interface Figures {
  readonly lines: number
  readonly branches: number
  readonly functions: number
}

/** `{ total: {...} }` of coverage-summary.json with these percentages (the counts only have to agree with them). */
const summary = (pct: Figures) => {
  const metric = (p: number) => ({ total: 1000, covered: Math.round(p * 10), skipped: 0, pct: p })
  return {
    total: {
      lines: metric(pct.lines),
      statements: metric(pct.lines),
      functions: metric(pct.functions),
      branches: metric(pct.branches),
      branchesTrue: { total: 0, covered: 0, skipped: 0, pct: "Unknown" }
    }
  }
}

/**
 * A workspace of packages/<dir> (`@t/<dir>`); those with figures have a coverage summary, the others did not run.
 * Returns its root; `thresholds` is written as its coverage-thresholds.json when given.
 */
const workspace = (
  packages: Readonly<Record<string, Figures | undefined>>,
  thresholds?: Readonly<Record<string, Partial<Figures>>>
): string => {
  const root = mkdtempSync(join(tmpdir(), "lathe-coverage-"))
  roots.push(root)
  const write = (path: string, value: unknown) => {
    mkdirSync(dirname(join(root, path)), { recursive: true })
    writeFileSync(join(root, path), JSON.stringify(value))
  }
  write("package.json", { name: "repo", workspaces: ["packages/*"] })
  for (const [dir, figures] of Object.entries(packages)) {
    write(`packages/${dir}/package.json`, { name: `@t/${dir}` })
    if (figures) write(`packages/${dir}/coverage/coverage-summary.json`, summary(figures))
  }
  if (thresholds) write("coverage-thresholds.json", thresholds)
  return root
}

const run = (root: string, ...args: Array<string>) =>
  spawnSync(process.execPath, [script, "--root", root, ...args], { encoding: "utf8", timeout: 20_000 })

describe("scripts/coverage.mjs", () => {
  it("prints lines, branches and functions per package and passes at the thresholds reached", () => {
    const root = workspace(
      { core: { lines: 91.27, branches: 80.5, functions: 88 }, tools: { lines: 72.04, branches: 61, functions: 70.9 } },
      { "@t/core": { lines: 91, branches: 80, functions: 88 }, "@t/tools": { lines: 72, branches: 61, functions: 70 } }
    )
    const result = run(root, "--all")
    expect(result.stderr).toBe("")
    expect(result.status).toBe(0)
    expect(result.stdout.split("\n")).toEqual([
      "Coverage (V8, what the tests run in their own process; ! = below the threshold):",
      "  package   lines %  branches %  functions %",
      "  @t/core     91.3        80.5         88.0",
      "  @t/tools    72.0        61.0         70.9   under 80 % lines",
      ""
    ])
  })

  it("fails when a threshold is set above the figure measured, naming the package and the metric", () => {
    const root = workspace(
      { core: { lines: 91.27, branches: 80.5, functions: 88 } },
      { "@t/core": { lines: 92, branches: 80, functions: 88 } }
    )
    const result = run(root)
    expect(result.status).toBe(1)
    expect(result.stdout).toContain("@t/core    91.3!       80.5         88.0")
    expect(result.stderr).toBe("coverage: @t/core: lines 91.3 % is below its threshold of 92 %\n")
  })

  it("fails a package with no threshold, and with --all a package of the thresholds that wrote no summary", () => {
    const root = workspace(
      {
        core: { lines: 90, branches: 80, functions: 85 },
        fresh: { lines: 50, branches: 50, functions: 50 },
        tools: undefined
      },
      { "@t/core": { lines: 90, branches: 80, functions: 85 }, "@t/tools": { lines: 70, branches: 60, functions: 70 } }
    )
    const partial = run(root) // a --projects run: tools did not run, and that is fine
    expect(partial.status).toBe(1)
    expect(partial.stderr).toContain("@t/fresh: no threshold")
    expect(partial.stderr).not.toContain("@t/tools")
    expect(partial.stdout).not.toContain("@t/tools")
    const full = run(root, "--all")
    expect(full.status).toBe(1)
    expect(full.stderr).toContain("@t/tools: no coverage summary")
  })

  it("--ratchet raises each threshold to the whole percent half a point under the figure reached, never lowers one", () => {
    const root = workspace(
      { core: { lines: 93.8, branches: 79.99, functions: 88 }, fresh: { lines: 41.5, branches: 30, functions: 45.2 } },
      { "@t/core": { lines: 91, branches: 81, functions: 88 }, "@t/gone": { lines: 50, branches: 50, functions: 50 } }
    )
    expect(run(root, "--ratchet").status).toBe(0)
    expect(JSON.parse(readFileSync(join(root, "coverage-thresholds.json"), "utf8"))).toEqual({
      "@t/core": { lines: 93, branches: 81, functions: 88 },
      // 41.5 → 41, 30 → 29, 45.2 → 44: at least half a point of room under the figure reached.
      "@t/fresh": { lines: 41, branches: 29, functions: 44 },
      "@t/gone": { lines: 50, branches: 50, functions: 50 }
    })
    // core's branches stayed at 81 above the 79.99 reached: the check still fails until a test brings them back,
    // or --reset sets the figures reached, down too (and leaves a package that did not run as it was).
    expect(run(root).status).toBe(1)
    expect(run(root, "--reset").status).toBe(0)
    expect(JSON.parse(readFileSync(join(root, "coverage-thresholds.json"), "utf8"))).toMatchObject({
      "@t/core": { lines: 93, branches: 79, functions: 87 },
      "@t/gone": { lines: 50, branches: 50, functions: 50 }
    })
    expect(run(root).status).toBe(0)
  })
})
