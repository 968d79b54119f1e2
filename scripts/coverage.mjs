#!/usr/bin/env node
// Usage: node scripts/coverage.mjs [--all] [--ratchet] [--root <dir>] [--thresholds <file>]
// The per-package coverage table of the last test run, checked against coverage-thresholds.json.
//
// It reads <package>/coverage/coverage-summary.json of every workspace package (vitest's json-summary report,
// written when LATHE_COVERAGE=1: see vitest.shared.ts) and prints lines, branches and functions % per package.
// It exits 1 when a package that ran falls below its threshold, or has none; with --all (a full run) also when a
// package of the thresholds file has no summary at all. A package whose tests did not run (a --projects run) is
// left out of the table.
//   --ratchet         raise each package's thresholds to the whole percent it reached (never lowers them); lowering
//                     one is a deliberate edit of coverage-thresholds.json, or:
//   --reset           set the thresholds of the packages that ran to the whole percent reached, up or down (the
//                     first recording, or after a change that moves code between packages)
//   --root <dir>      the workspace (default: this repository); --thresholds <file> (default <root>/coverage-thresholds.json)
// Thresholds are whole percents at least half a point under the measured figure (91.0 → 90, 91.7 → 91): a run that
// covers a branch or two less by chance (a retry path, a race the test tolerates) stays above them, a test or a file
// of tests removed does not.
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"

const METRICS = ["lines", "branches", "functions"]

const args = process.argv.slice(2)
const flag = (name) => args.includes(name)
const option = (name) => {
  const at = args.indexOf(name)
  return at >= 0 ? args[at + 1] : undefined
}
const root = resolve(option("--root") ?? join(dirname(fileURLToPath(import.meta.url)), ".."))
const thresholdsFile = resolve(option("--thresholds") ?? join(root, "coverage-thresholds.json"))

/** The workspace packages (`packages/*`, `plugins/*` of the root package.json), in order: [{ name, dir }]. */
const workspacePackages = () => {
  const globs = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).workspaces ?? []
  const out = []
  for (const glob of globs) {
    if (!glob.endsWith("/*")) continue // the workspaces here are all `folder/*`
    const parent = join(root, glob.slice(0, -2))
    if (!existsSync(parent)) continue
    for (const entry of readdirSync(parent, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const manifest = join(parent, entry.name, "package.json")
      if (!entry.isDirectory() || !existsSync(manifest)) continue
      out.push({ name: JSON.parse(readFileSync(manifest, "utf8")).name, dir: join(parent, entry.name) })
    }
  }
  return out
}

/** The totals of a package's coverage-summary.json: { lines, branches, functions } in %, or undefined. */
const readSummary = (dir) => {
  const file = join(dir, "coverage", "coverage-summary.json")
  if (!existsSync(file)) return undefined
  const total = JSON.parse(readFileSync(file, "utf8")).total
  const out = {}
  // istanbul gives "Unknown" for a metric with nothing to count (a package of types only): nothing is uncovered.
  for (const m of METRICS) out[m] = typeof total[m].pct === "number" ? total[m].pct : 100
  return out
}

const thresholds = existsSync(thresholdsFile) ? JSON.parse(readFileSync(thresholdsFile, "utf8")) : {}
const measured = workspacePackages()
  .map((p) => ({ ...p, pct: readSummary(p.dir) }))
  .filter((p) => p.pct !== undefined)

const problems = []
const rows = measured.map(({ name, pct }) => {
  const floor = thresholds[name]
  if (!floor) problems.push(`${name}: no threshold in ${thresholdsFile} (node scripts/coverage.mjs --ratchet adds it)`)
  const cells = METRICS.map((m) => {
    const below = floor?.[m] !== undefined && pct[m] < floor[m]
    if (below) problems.push(`${name}: ${m} ${pct[m].toFixed(1)} % is below its threshold of ${floor[m]} %`)
    return `${pct[m].toFixed(1)}${below ? "!" : " "}`
  })
  return [name, ...cells, pct.lines < 80 ? "under 80 % lines" : ""]
})
if (flag("--all")) {
  const ran = new Set(measured.map((p) => p.name))
  for (const name of Object.keys(thresholds)) {
    if (!ran.has(name)) problems.push(`${name}: no coverage summary (its tests did not run with LATHE_COVERAGE=1)`)
  }
}

const header = ["package", "lines %", "branches %", "functions %", ""]
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)))
const line = (cells) =>
  cells
    .map((c, i) => (i === 0 || i === cells.length - 1 ? c.padEnd(widths[i]) : c.padStart(widths[i])))
    .join("  ")
    .trimEnd()
console.log("Coverage (V8, what the tests run in their own process; ! = below the threshold):")
if (rows.length === 0) console.log("  no package wrote coverage/coverage-summary.json")
else for (const r of [header, ...rows]) console.log(`  ${line(r)}`)

/** The threshold a measured percentage sets: the whole percent at least half a point under it. */
const floorOf = (pct) => Math.max(0, Math.floor(pct - 0.5))

if (flag("--ratchet") || flag("--reset")) {
  const next = { ...thresholds }
  for (const { name, pct } of measured) {
    const entry = { ...next[name] }
    for (const m of METRICS) {
      entry[m] = flag("--reset") ? floorOf(pct[m]) : Math.max(entry[m] ?? 0, floorOf(pct[m]))
    }
    next[name] = entry
  }
  const sorted = Object.fromEntries(
    Object.keys(next)
      .sort()
      .map((k) => [k, next[k]])
  )
  writeFileSync(thresholdsFile, `${JSON.stringify(sorted, null, 2)}\n`)
  console.log(`Thresholds ${flag("--reset") ? "set" : "raised"} to the figures reached: ${thresholdsFile}`)
  process.exit(0)
}
for (const p of problems) console.error(`coverage: ${p}`)
process.exit(problems.length > 0 ? 1 : 0)
