#!/usr/bin/env node
// The dependency rule of shared/DESIGN.md §1, checked from each workspace package.json and from the imports
// in its src/ and test/ files; and no import circle among the relative imports of the packages' src/ files
// (packages/*/src, plugins/*/src). Type-only imports, re-exports and dynamic import() count: a circle is a knot
// in the design even when it vanishes at run time. Plain Node, no dependencies. Prints every violation (a circle as
// its files and the import lines that close it) and exits 1, or prints `arrows ok (<n> packages, no import circles)`.
//   node scripts/check-arrows.mjs [ROOT]   ROOT: the monorepo to check (default: this script's repository)
// Imported, it exports `importCircles` and `describeCircle` (scripts/house-figures.mjs counts circles with them).
// Inside core and the CLI it also checks the order of the rooms (folders) of src/: see ROOM_ORDERS.
//
// Layers (package.json `nx.tags`): layer:kit (the author kit, @lathe/plugin: depends on no workspace package),
// layer:core (only layer:kit), layer:service (a host part that implements core's contracts: permission, snapshot,
// stores, workspaces; only layer:core and layer:kit), layer:feature and everything under plugins/ (layer:plugin: only
// layer:kit, in dependencies, devDependencies and the imports of src/ and test/ alike: what they need of the host
// reaches them through the plugin context), layer:app (anything). Only layer:app may depend on a feature package or a
// plugin. A new kind of package needs its layer added here.
import { readdirSync, readFileSync, realpathSync, statSync } from "node:fs"
import { dirname, join, relative, resolve, sep } from "node:path"
import { fileURLToPath } from "node:url"

/**
 * Circles tolerated while they are being cut (none today: keep it that way). Each entry is the files of one circle,
 * repo-relative. A circle passes only while all its files are inside one entry: a circle cut in part still passes,
 * while a new circle, or a new file joining one of these, fails. Delete an entry once its circle is gone (the check
 * prints a note then).
 */
const ALLOWED_CIRCLES = []

/**
 * Reaches past the kit tolerated while they are being cut (none today: keep it that way): a feature package's dependency
 * on a package other than the kit, and the files (repo-relative) that may import it meanwhile, as
 * `{ from: "@lathe/x", to: "@lathe/core", files: ["packages/x/src/a.ts"] }`. A new file importing it, another package, or another
 * target fails; delete a file once it imports the kit alone, and the entry with its last file (the check prints a note).
 */
const ALLOWED_REACHES = []

const LAYERS = new Set(["layer:core", "layer:kit", "layer:service", "layer:feature", "layer:plugin", "layer:app"])
const SOURCE = /\.(?:[cm]?[jt]s|tsx|jsx)$/
const SKIP_DIRS = new Set(["node_modules", "dist", "out-tsc", "coverage", "__fixtures__"])

const readJson = (file) => JSON.parse(readFileSync(file, "utf8"))
const isDir = (path) => statSync(path, { throwIfNoEntry: false })?.isDirectory() ?? false

/** Workspace package folders from the root package.json (`dir/*` globs and plain paths). */
function workspaceDirs(root) {
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

/**
 * The text with its comments blanked (every character but line breaks becomes a space) and its string literals
 * kept, so `// from "@lathe/x"` in a doc comment doesn't count and offsets and line numbers stay those of the file.
 */
function withoutComments(text) {
  return text.replace(
    /("(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|`(?:\\.|[^`\\])*`)|\/\*[\s\S]*?\*\/|\/\/[^\n]*/g,
    (match, str) => str ?? match.replace(/[^\n]/g, " ")
  )
}

/** Import, re-export, dynamic import() and require() specifiers: group 1 is the keyword part, group 2 the string. */
const SPECIFIER = /(\bfrom\s*|\bimport\s*\(\s*|\bimport\s+|\brequire\s*\(\s*)["']([^"']+)["']/g

/** The `@lathe/*` package names a source file imports, re-exports or requires (comments are ignored). */
function latheImports(text) {
  const found = new Set()
  for (const m of withoutComments(text).matchAll(SPECIFIER)) {
    const name = /^@lathe\/[^/]+/.exec(m[2])?.[0]
    if (name) found.add(name)
  }
  return found
}

/** The workspace packages with their folder, layer tags and declared `@lathe/*` dependencies. */
function workspacePackages(root) {
  return workspaceDirs(root)
    .filter((dir) => statSync(join(dir, "package.json"), { throwIfNoEntry: false })?.isFile())
    .map((dir) => {
      const pkg = readJson(join(dir, "package.json"))
      const rel = relative(root, dir)
      const tags = pkg.nx?.tags ?? []
      const kinds = ["dependencies", "devDependencies", "peerDependencies", "optionalDependencies"]
      /** Each declared `@lathe/*` dependency and the field that declares it (the first, when several do). */
      const depKinds = {}
      for (const kind of kinds.toReversed())
        for (const dep of Object.keys(pkg[kind] ?? {})) if (dep.startsWith("@lathe/")) depKinds[dep] = kind
      return {
        name: pkg.name ?? rel,
        dir,
        rel,
        plugin: rel.startsWith("plugins/"),
        layers: tags.filter((t) => t.startsWith("layer:")),
        deps: Object.keys(depKinds),
        depKinds
      }
    })
}

/** The tolerated reach from package `from` to `to` (see ALLOWED_REACHES), if any. */
const reachOf = (from, to) => ALLOWED_REACHES.find((entry) => entry.from === from && entry.to === to)

/** Every break of the dependency rule, one line each; `used` collects the ALLOWED_REACHES files still importing. */
function arrowViolations(root, packages, used = new Set()) {
  const byName = new Map(packages.map((p) => [p.name, p]))
  const violations = []
  const report = (p, what) => violations.push(`${p.name}: ${what} (see DESIGN.md §1, the dependency rule)`)
  const kitOnly = (p) => p.layers[0] === "layer:feature" || p.plugin
  const kitOnlyText = (p) =>
    `a ${p.plugin ? "plugin" : "feature package"} depends on the author kit (@lathe/plugin) alone, in its ` +
    "dependencies and devDependencies, its src/ and its test/; what it needs of the host reaches it through the " +
    "plugin context (ctx)"

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
    if (p.name === "@lathe/plugin" && layer !== "layer:kit") report(p, `must be tagged layer:kit, is ${layer}`)

    for (const dep of p.deps) {
      const target = byName.get(dep)
      if (dep === p.name) report(p, "depends on itself")
      else if (!target) report(p, `depends on ${dep}, which is not a workspace package`)
      else if (layer === "layer:kit")
        report(p, `depends on ${dep}, but the author kit depends on no other @lathe/* package`)
      else if (layer === "layer:core" && !target.layers.includes("layer:kit"))
        report(p, `depends on ${dep}, but core may depend only on the author kit (@lathe/plugin)`)
      else if (layer === "layer:service" && !target.layers.some((t) => t === "layer:core" || t === "layer:kit"))
        report(p, `depends on ${dep}, but a host service may depend only on @lathe/core and the author kit`)
      else if (kitOnly(p) && !target.layers.includes("layer:kit") && !reachOf(p.name, dep))
        report(p, `depends on ${dep} (${p.depKinds[dep]}), but ${kitOnlyText(p)}`)
      else if (layer !== "layer:app" && (target.layers.includes("layer:feature") || target.plugin))
        report(
          p,
          `depends on ${dep} (${target.layers.join(",")}), but only layer:app may depend on feature packages and plugins`
        )
    }

    const allowed = new Set([p.name, ...p.deps])
    const kit = new Set([p.name, ...packages.filter((q) => q.layers.includes("layer:kit")).map((q) => q.name)])
    for (const file of ["src", "test"].flatMap((d) => sourceFiles(join(p.dir, d)))) {
      const rel = relative(root, file).split(sep).join("/")
      for (const imported of latheImports(readFileSync(file, "utf8"))) {
        if (!allowed.has(imported))
          report(p, `${rel} imports ${imported}, which is not in its package.json dependencies`)
        else if (kitOnly(p) && !kit.has(imported)) {
          if (reachOf(p.name, imported)?.files.includes(rel)) used.add(rel)
          else
            report(
              p,
              `${rel} imports ${imported}: a ${p.plugin ? "plugin" : "feature package"} imports the author kit alone`
            )
        }
      }
    }
  }
  return violations
}

/** The file a relative specifier points at among `files` (`./x.js` is `x.ts` or `x.tsx`, as TypeScript resolves it). */
function resolveRelative(from, specifier, files) {
  const target = resolve(dirname(from), specifier)
  const stem = target.replace(/\.(?:[cm]?js|jsx)$/, "")
  const candidates = [target, `${stem}.ts`, `${stem}.tsx`, `${stem}.mts`, `${stem}.cts`, join(target, "index.ts")]
  return candidates.find((candidate) => files.has(candidate))
}

/**
 * The statement holding the specifier at `at`, on one line. A static import or re-export spans from the line that
 * starts with `import`/`export` (it may run over several lines); a dynamic import() or require() is shown by its line.
 */
function statementAt(text, at, isStatic) {
  let start = text.lastIndexOf("\n", at - 1) + 1
  if (isStatic) {
    for (let line = start, n = 0; n < 60; n++) {
      if (/^\s*(?:import|export)\b/.test(text.slice(line, line + 200))) {
        start = line
        break
      }
      if (line === 0) break
      line = text.lastIndexOf("\n", line - 2) + 1
    }
  }
  const end = text.indexOf("\n", at)
  return text
    .slice(start, end < 0 ? undefined : end)
    .replace(/\s+/g, " ")
    .trim()
}

/** The relative imports of every package's src/ file: `Map<file, Array<{ to, line, statement }>>` (absolute paths). */
function importGraph(root) {
  const files = new Set(workspaceDirs(root).flatMap((dir) => sourceFiles(join(dir, "src"))))
  const graph = new Map()
  for (const file of files) {
    const text = readFileSync(file, "utf8")
    const code = withoutComments(text)
    const edges = []
    for (const m of code.matchAll(SPECIFIER)) {
      if (!m[2].startsWith(".")) continue
      const to = resolveRelative(file, m[2], files)
      if (to === undefined) continue
      const at = m.index + m[1].length
      const isStatic = !m[1].includes("(")
      edges.push({ to, line: code.slice(0, at).split("\n").length, statement: statementAt(text, at, isStatic) })
    }
    graph.set(file, edges)
  }
  return graph
}

/** The strongly connected components of `graph` (Tarjan's, iterative: a long import chain must not overflow). */
function components(graph) {
  const index = new Map()
  const low = new Map()
  const onStack = new Set()
  const stack = []
  const found = []
  const visit = (node) => {
    index.set(node, index.size)
    low.set(node, index.get(node))
    stack.push(node)
    onStack.add(node)
  }
  for (const start of graph.keys()) {
    if (index.has(start)) continue
    visit(start)
    const work = [{ node: start, next: 0 }]
    while (work.length > 0) {
      const frame = work[work.length - 1]
      const edges = graph.get(frame.node)
      if (frame.next < edges.length) {
        const { to } = edges[frame.next++]
        if (!index.has(to)) {
          visit(to)
          work.push({ node: to, next: 0 })
        } else if (onStack.has(to)) low.set(frame.node, Math.min(low.get(frame.node), index.get(to)))
        continue
      }
      work.pop()
      const parent = work[work.length - 1]
      if (parent) low.set(parent.node, Math.min(low.get(parent.node), low.get(frame.node)))
      if (low.get(frame.node) !== index.get(frame.node)) continue
      const component = []
      let member
      do {
        member = stack.pop()
        onStack.delete(member)
        component.push(member)
      } while (member !== frame.node)
      found.push(component)
    }
  }
  return found
}

/**
 * The import circles among the relative imports of the workspace packages' src/ files: each strongly connected
 * component of the file graph with two files or more (or one importing itself), as `{ files, edges }` with
 * repo-relative paths: `files` sorted, `edges` every import inside the circle as `{ from, line, to, statement }`.
 */
export function importCircles(root) {
  const graph = importGraph(root)
  const rel = (file) => relative(root, file).split(sep).join("/")
  return components(graph)
    .filter((component) => component.length > 1 || graph.get(component[0]).some((edge) => edge.to === component[0]))
    .map((component) => {
      const members = new Set(component)
      const edges = component
        .flatMap((from) =>
          graph
            .get(from)
            .filter((edge) => members.has(edge.to))
            .map((edge) => ({ from: rel(from), line: edge.line, to: rel(edge.to), statement: edge.statement }))
        )
        .sort((a, b) => a.from.localeCompare(b.from) || a.line - b.line)
      return { files: component.map(rel).sort(), edges }
    })
    .sort((a, b) => a.files[0].localeCompare(b.files[0]))
}

/** A circle as a person reads it to cut it: its files, then each import that closes it (file:line → file, the line). */
export function describeCircle(circle) {
  const edges = circle.edges.map((edge) => `    ${edge.from}:${edge.line} → ${edge.to}\n      ${edge.statement}`)
  return [`  ${circle.files.join(" ↔ ")}`, ...edges].join("\n")
}

/**
 * Room orders (DESIGN.md §1: "the rooms stand in one order, lower rooms never importing higher ones"). Inside `src`,
 * a file's room is its first folder (`src/loop/step.ts` is in `loop`; a file directly in `src` is in `.`). A file may
 * import (type-only, re-export and import() included) files of its own room and of rooms listed before it, never of a
 * room listed after it. The package's entries stand above every room (the files in `roof`, or every file directly in
 * `src` when `.` is not a room): they may import any room, and no room imports them. A new folder under `src` needs
 * its floor here. An order applies where its package has at least one of its folders (a throwaway test repository
 * without them is not held to this one's plan).
 */
const ROOM_ORDERS = [
  {
    src: "packages/core/src",
    rooms: [
      "schema",
      "contracts",
      "process",
      "provider",
      "config",
      "catalog",
      "llm",
      "store",
      "plugin-host",
      "loop",
      "testing"
    ]
  },
  {
    src: "packages/cli/src",
    rooms: [".", "tui", "acp", "commands"],
    roof: ["bin.ts", "launch.ts", "main.ts", "index.ts"]
  }
]

/** Every import against a room order, one line each: both files, the import's line, and the rule it breaks. */
export function roomViolations(root, orders = ROOM_ORDERS, graph = importGraph(root)) {
  const rel = (file) => relative(root, file).split(sep).join("/")
  const violations = []
  for (const order of orders) {
    if (!order.rooms.some((room) => room !== "." && isDir(join(root, order.src, room)))) continue
    const src = `${order.src}/`
    const roof = order.roof ?? []
    const label = (room) => (room === "." ? "src/*" : `${room}/`)
    const chain = order.rooms.map(label).join(" → ")
    const place = (file) => {
      const path = rel(file)
      if (!path.startsWith(src)) return undefined
      const inside = path.slice(src.length)
      const room = inside.includes("/") ? inside.slice(0, inside.indexOf("/")) : "."
      if (room === "." && (!order.rooms.includes(".") || roof.includes(inside)))
        return { room: "roof", floor: Number.POSITIVE_INFINITY, path }
      return { room, floor: order.rooms.indexOf(room), path }
    }
    const unplaced = new Set()
    for (const [file, edges] of graph) {
      const from = place(file)
      if (from === undefined) continue
      if (from.floor < 0) {
        if (!unplaced.has(from.room))
          violations.push(
            `${from.path}: room ${label(from.room)} has no floor in ${order.src}'s room order (${chain}); give it one in ROOM_ORDERS (scripts/check-arrows.mjs)`
          )
        unplaced.add(from.room)
        continue
      }
      for (const edge of edges) {
        const to = place(edge.to)
        if (to === undefined || to.floor < 0 || to.room === from.room) continue
        if (to.room === "roof")
          violations.push(
            `${from.path}:${edge.line} imports ${to.path}, an entry of ${order.src}: entries stand above every room, nothing imports them\n      ${edge.statement}`
          )
        else if (to.floor > from.floor)
          violations.push(
            `${from.path}:${edge.line} imports ${to.path}: ${label(from.room)} stands below ${label(to.room)} in ${order.src}'s room order (${chain}), and a lower room never imports a higher one (DESIGN.md §1)\n      ${edge.statement}`
          )
      }
    }
  }
  return violations
}

const isMain = () => {
  try {
    return process.argv[1] !== undefined && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)
  } catch {
    return false
  }
}

if (isMain()) {
  const root = resolve(process.argv[2] ?? join(import.meta.dirname, ".."))
  const packages = workspacePackages(root)
  const usedReaches = new Set()
  const violations = arrowViolations(root, packages, usedReaches)
  const circles = importCircles(root)
  const allowedBy = (circle) => ALLOWED_CIRCLES.findIndex((entry) => circle.files.every((file) => entry.includes(file)))
  const unexpected = circles.filter((circle) => allowedBy(circle) < 0)
  const used = new Set(circles.map(allowedBy))
  ALLOWED_CIRCLES.forEach((entry, i) => {
    if (!used.has(i))
      console.error(`note: the allowed circle ${entry.join(" ↔ ")} is gone; delete it from ALLOWED_CIRCLES`)
  })
  // Notes only for this repository's list: a checked copy elsewhere (the tests' throwaway monorepos) has other files.
  const present = new Set(packages.map((p) => p.name))
  for (const entry of ALLOWED_REACHES.filter((e) => present.has(e.from)))
    for (const file of entry.files.filter((f) => !usedReaches.has(f)))
      console.error(`note: ${file} no longer imports ${entry.to}; delete it from ALLOWED_REACHES`)
  for (const v of violations) console.error(v)
  const rooms = roomViolations(root)
  if (rooms.length > 0) console.error(`room order (${rooms.length}): a room imports a room above it or an entry:`)
  for (const v of rooms) console.error(`  ${v}`)
  if (unexpected.length > 0) {
    console.error(
      `import circles (${unexpected.length}): a file imports, directly or through others, a file that imports it ` +
        "(type-only imports and import() count). Cut each by moving what both sides need into a file below them:"
    )
    for (const circle of unexpected) console.error(describeCircle(circle))
  }
  if (violations.length > 0 || unexpected.length > 0 || rooms.length > 0) {
    console.error(
      `arrows: ${violations.length} violation(s), ${unexpected.length} import circle(s), ${rooms.length} room-order break(s)`
    )
    process.exit(1)
  }
  const allowed = circles.length > 0 ? `${circles.length} allow-listed import circle(s)` : "no import circles"
  console.log(`arrows ok (${packages.length} packages, ${allowed})`)
}
