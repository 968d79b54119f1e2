#!/usr/bin/env node
// The dependency rule of shared/DESIGN.md §1, checked from each workspace package.json and from the imports
// in its src/ and test/ files. Plain Node, no dependencies. Prints every violation and exits 1, or prints
// `arrows ok (<n> packages)`.
//
// Layers (package.json `nx.tags`): layer:core (depends on no workspace package), layer:feature and
// everything under plugins/ (only @lathe/core), layer:app (anything). Only layer:app may depend on a feature
// package or a plugin. A new kind of package needs its layer added here.
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join, relative } from "node:path"

const root = join(import.meta.dirname, "..")
const LAYERS = new Set(["layer:core", "layer:feature", "layer:plugin", "layer:app"])
const SOURCE = /\.(?:[cm]?[jt]s|tsx|jsx)$/
const SKIP_DIRS = new Set(["node_modules", "dist", "out-tsc", "coverage", "__fixtures__"])

const readJson = (file) => JSON.parse(readFileSync(file, "utf8"))
const isDir = (path) => statSync(path, { throwIfNoEntry: false })?.isDirectory() ?? false

/** Workspace package folders from the root package.json (`dir/*` globs and plain paths). */
function workspaceDirs() {
  const globs = readJson(join(root, "package.json")).workspaces ?? []
  return globs.flatMap((glob) => {
    if (!glob.endsWith("/*")) return [join(root, glob)]
    const parent = join(root, glob.slice(0, -2))
    return isDir(parent) ? readdirSync(parent).map((d) => join(parent, d)) : []
  })
}

/** Every source file under dir, recursively, skipping build output. */
function sourceFiles(dir) {
  if (!isDir(dir)) return []
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return SKIP_DIRS.has(entry.name) ? [] : sourceFiles(path)
    return SOURCE.test(entry.name) && !entry.name.endsWith(".d.ts") ? [path] : []
  })
}

/** The `@lathe/*` package names a source file imports, re-exports or requires (comments are ignored). */
function latheImports(text) {
  // Drop comments but keep string literals intact, so `// from "@lathe/x"` in a doc comment doesn't count.
  const code = text.replace(
    /("(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|`(?:\\.|[^`\\])*`)|\/\*[\s\S]*?\*\/|\/\/[^\n]*/g,
    (_m, str) => str ?? " "
  )
  const found = new Set()
  const re = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+|\brequire\s*\(\s*)["'](@lathe\/[^"'/]+)/g
  for (const m of code.matchAll(re)) found.add(m[1])
  return found
}

const packages = workspaceDirs()
  .filter((dir) => statSync(join(dir, "package.json"), { throwIfNoEntry: false })?.isFile())
  .map((dir) => {
    const pkg = readJson(join(dir, "package.json"))
    const rel = relative(root, dir)
    const tags = pkg.nx?.tags ?? []
    const declared = {
      ...pkg.dependencies,
      ...pkg.devDependencies,
      ...pkg.peerDependencies,
      ...pkg.optionalDependencies
    }
    return {
      name: pkg.name ?? rel,
      dir,
      rel,
      plugin: rel.startsWith("plugins/"),
      layers: tags.filter((t) => t.startsWith("layer:")),
      deps: Object.keys(declared).filter((d) => d.startsWith("@lathe/"))
    }
  })
const byName = new Map(packages.map((p) => [p.name, p]))

const violations = []
const report = (p, what) => violations.push(`${p.name}: ${what} (see DESIGN.md §1, the dependency rule)`)

for (const p of packages) {
  if (p.layers.length !== 1) {
    report(p, `needs exactly one layer:* tag in package.json nx.tags, has ${JSON.stringify(p.layers)}`)
    continue
  }
  const [layer] = p.layers
  if (!LAYERS.has(layer)) {
    report(p, `has unknown tag ${layer}; add the new kind of package to scripts/check-arrows.mjs`)
    continue
  }
  if (p.plugin && layer !== "layer:plugin") report(p, `lives under plugins/ but is tagged ${layer}, not layer:plugin`)
  if (p.name === "@lathe/core" && layer !== "layer:core") report(p, `must be tagged layer:core, is ${layer}`)

  for (const dep of p.deps) {
    const target = byName.get(dep)
    if (dep === p.name) report(p, "depends on itself")
    else if (!target) report(p, `depends on ${dep}, which is not a workspace package`)
    else if (layer === "layer:core") report(p, `depends on ${dep}, but core depends on no other @lathe/* package`)
    else if ((layer === "layer:feature" || p.plugin) && dep !== "@lathe/core")
      report(p, `depends on ${dep}, but a ${p.plugin ? "plugin" : "feature package"} may depend only on @lathe/core`)
    else if (layer !== "layer:app" && (target.layers.includes("layer:feature") || target.plugin))
      report(
        p,
        `depends on ${dep} (${target.layers.join(",")}), but only layer:app may depend on feature packages and plugins`
      )
  }

  const allowed = new Set([p.name, ...p.deps])
  for (const file of ["src", "test"].flatMap((d) => sourceFiles(join(p.dir, d)))) {
    for (const imported of latheImports(readFileSync(file, "utf8"))) {
      if (!allowed.has(imported))
        report(p, `${relative(root, file)} imports ${imported}, which is not in its package.json dependencies`)
    }
  }
}

if (violations.length > 0) {
  for (const v of violations) console.error(v)
  console.error(`arrows: ${violations.length} violation(s)`)
  process.exit(1)
}
console.log(`arrows ok (${packages.length} packages)`)
