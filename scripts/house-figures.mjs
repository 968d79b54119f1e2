#!/usr/bin/env node
// The figures the house review measures, for a tree of this repository (the current one, or an older checkout):
//   node scripts/house-figures.mjs [ROOT]   ROOT: the monorepo to measure (default: this script's repository)
// - import circles among the relative imports of packages/*/src and plugins/*/src (as scripts/check-arrows.mjs finds
//   them: type-only imports, re-exports and import() count), with the imports that close each;
// - the 15 largest functions and closures in those folders by line span (the TypeScript compiler's function-like
//   nodes: function declarations and expressions, arrow functions, methods, accessors, constructors, so the
//   `function*` body of an `Effect.gen` counts on its own); a function that only wraps another one (the two spans
//   differ by 3 lines or less, e.g. `(x) => Effect.gen(function* () { … })`) is shown once, as the outer one;
// - how many names `@lathe/core`'s src/index.ts exports (the checker's `getExportsOfModule`, so `export *` is
//   followed), values and types apart;
// - publish sites (`bus.publish(` and `(yield* Bus).publish(`) and store-write sites (`store.putPart|putMessage|
//   putSession(`) in those folders outside testing/, as the review's appendix greps them, plus every write call
//   on the session state by receiver (store, writer, …).
// Uses the `typescript` package of this script's repository, so ROOT needs no install (e.g. a `git worktree`).
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join, relative, resolve, sep } from "node:path"
import ts from "typescript"
import { describeCircle, importCircles } from "./check-arrows.mjs"

const SOURCE = /\.(?:[cm]?ts|tsx)$/
const SKIP_DIRS = new Set(["node_modules", "dist", "out-tsc", "coverage", "__fixtures__"])
const TOP = 15

const isDir = (path) => statSync(path, { throwIfNoEntry: false })?.isDirectory() ?? false

/** Every TypeScript file under packages/*\/src and plugins/*\/src (no declaration files). */
function srcFiles(root) {
  const walk = (dir) =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
      const path = join(dir, entry.name)
      if (entry.isDirectory()) return SKIP_DIRS.has(entry.name) ? [] : walk(path)
      return SOURCE.test(entry.name) && !entry.name.endsWith(".d.ts") ? [path] : []
    })
  return ["packages", "plugins"]
    .filter((parent) => isDir(join(root, parent)))
    .flatMap((parent) => readdirSync(join(root, parent)).map((name) => join(root, parent, name, "src")))
    .filter(isDir)
    .flatMap(walk)
    .sort()
}

const posix = (root, file) => relative(root, file).split(sep).join("/")

const isFunctionLike = (node) =>
  ts.isFunctionDeclaration(node) ||
  ts.isFunctionExpression(node) ||
  ts.isArrowFunction(node) ||
  ts.isMethodDeclaration(node) ||
  ts.isConstructorDeclaration(node) ||
  ts.isGetAccessorDeclaration(node) ||
  ts.isSetAccessorDeclaration(node)

const kindOf = (node) => {
  if (ts.isArrowFunction(node)) return "arrow"
  if (ts.isFunctionExpression(node)) return node.asteriskToken ? "function*" : "function"
  if (ts.isFunctionDeclaration(node)) return node.asteriskToken ? "function* declaration" : "function declaration"
  if (ts.isConstructorDeclaration(node)) return "constructor"
  if (ts.isGetAccessorDeclaration(node) || ts.isSetAccessorDeclaration(node)) return "accessor"
  return "method"
}

/** The name of a class member's class, or of the object literal's variable, for `Owner.member`. */
const ownerOf = (node) => {
  const owner = node.parent
  if (owner && (ts.isClassDeclaration(owner) || ts.isClassExpression(owner)) && owner.name) return `${owner.name.text}.`
  return ""
}

const nameText = (name) => (name && (ts.isIdentifier(name) || ts.isStringLiteral(name)) ? name.text : name?.getText())

/**
 * The name a reader knows a function by: its own name; else a span name it is given (`Effect.fn("X.y")(function* …)`);
 * else the variable, property or class field it is assigned to, through wrapping calls (`const f = Effect.gen(…)`,
 * `static layer = Layer.effect(X, Effect.gen(…))`), prefixed by the wrapping call (`Effect.gen in f`).
 */
function nameOf(node, enclosingName) {
  if (ts.isConstructorDeclaration(node)) return `${ownerOf(node)}constructor`
  if (!ts.isArrowFunction(node) && !ts.isFunctionExpression(node) && node.name)
    return `${ownerOf(node)}${nameText(node.name)}`
  let current = node
  let span
  let wrapper
  while (current.parent) {
    const parent = current.parent
    if (ts.isCallExpression(parent)) {
      const callee = parent.expression
      if (ts.isCallExpression(callee) && callee.arguments[0] && ts.isStringLiteralLike(callee.arguments[0]))
        span ??= callee.arguments[0].text // Effect.fn("Name")(function* …)
      else if (parent.arguments.includes(current) && current === node) wrapper = callee.getText()
      current = parent
      continue
    }
    if (
      ts.isParenthesizedExpression(parent) ||
      ts.isAsExpression(parent) ||
      ts.isSatisfiesExpression(parent) ||
      ts.isNonNullExpression(parent)
    ) {
      current = parent
      continue
    }
    let assigned
    if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) assigned = nameText(parent.name)
    else if (ts.isPropertyDeclaration(parent)) assigned = `${ownerOf(parent)}${nameText(parent.name)}`
    else if (ts.isExportAssignment(parent)) assigned = "export default"
    if (span) return span
    if (assigned) return wrapper ? `${wrapper} in ${assigned}` : assigned
    break
  }
  if (span) return span
  const where = enclosingName ? ` in ${enclosingName}` : ""
  return wrapper ? `${wrapper}(…)${where}` : `(anonymous)${where}`
}

/**
 * Whether `outer` only wraps `inner`: `inner` is, through calls, what `outer` returns, as its expression body or as
 * the one statement of its block (`(x) => Effect.gen(function* () { … })`, `() => { return Layer.effect(…) }`).
 */
function wraps(outer, inner) {
  let node = inner
  for (;;) {
    if (node === outer.body) return true
    const parent = node.parent
    if (!parent || parent === outer) return false
    if (ts.isReturnStatement(parent)) return parent.parent === outer.body && outer.body.statements.length === 1
    const passes =
      ts.isCallExpression(parent) ||
      ts.isParenthesizedExpression(parent) ||
      ts.isAsExpression(parent) ||
      ts.isSatisfiesExpression(parent) ||
      ts.isNonNullExpression(parent)
    if (!passes) return false
    node = parent
  }
}

/** Every function-like node of the src files: `{ file, line, lines, name, kind }`, wrappers folded (see above). */
function functions(root) {
  const found = []
  for (const file of srcFiles(root)) {
    const text = readFileSync(file, "utf8")
    const kind = file.endsWith("x") ? ts.ScriptKind.TSX : ts.ScriptKind.TS
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, kind)
    const lineOf = (pos) => source.getLineAndCharacterOfPosition(pos).line + 1
    const visit = (node, enclosing) => {
      let next = enclosing
      if (isFunctionLike(node) && node.body) {
        const start = lineOf(node.getStart(source))
        const entry = { file: posix(root, file), line: start, lines: lineOf(node.end) - start + 1, node }
        entry.name = nameOf(node, enclosing?.name)
        entry.kind = kindOf(node)
        // A function that is all its enclosing function returns is that function's body: fold it into it.
        if (enclosing && wraps(enclosing.node, node)) {
          if (enclosing.name.startsWith("(anonymous)")) enclosing.name = entry.name
          enclosing.kind = `${enclosing.kind} → ${entry.kind}`
        } else {
          found.push(entry)
          next = entry
        }
      }
      ts.forEachChild(node, (child) => visit(child, next))
    }
    visit(source, undefined)
  }
  return found
}

/** The names `packages/core/src/index.ts` exports, through `export *`: `{ total, values, types }`. */
function coreExports(root) {
  const index = join(root, "packages/core/src/index.ts")
  const options = {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    noEmit: true,
    skipLibCheck: true,
    types: []
  }
  // Only core's own files: packages (effect, ai, …) are left unresolved, which names no export of core's and keeps
  // the program small (the names core re-exports from a package would show up as unresolved, and core has none).
  const host = ts.createCompilerHost(options)
  host.resolveModuleNameLiterals = (literals, containingFile, _redirect, compilerOptions) =>
    literals.map((literal) =>
      literal.text.startsWith(".")
        ? ts.resolveModuleName(literal.text, containingFile, compilerOptions, host)
        : { resolvedModule: undefined }
    )
  const program = ts.createProgram([index], options, host)
  const checker = program.getTypeChecker()
  const source = program.getSourceFile(index)
  const module = source && checker.getSymbolAtLocation(source)
  if (!module) throw new Error(`${index}: not a module the TypeScript compiler can read`)
  const names = checker.getExportsOfModule(module)
  const isValue = (symbol) => {
    const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol
    return (target.flags & ts.SymbolFlags.Value) !== 0
  }
  const values = names.filter(isValue).length
  return { total: names.length, values, types: names.length - values }
}

/** Lines of the src files (outside testing/ folders) that match `pattern`, as `file:line` strings. */
function sites(root, pattern, skip = () => false) {
  const hits = []
  for (const file of srcFiles(root)) {
    const rel = posix(root, file)
    if (rel.includes("/testing/") || skip(rel)) continue
    readFileSync(file, "utf8")
      .split("\n")
      .forEach((line, i) => {
        for (const m of line.matchAll(pattern)) hits.push({ at: `${rel}:${i + 1}`, file: rel, match: m })
      })
  }
  return hits
}

const byFile = (hits) => {
  const counts = new Map()
  for (const hit of hits) counts.set(hit.file, (counts.get(hit.file) ?? 0) + 1)
  return [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
}

const root = resolve(process.argv[2] ?? join(import.meta.dirname, ".."))
const out = []
const say = (line = "") => out.push(line)

say(`House figures for ${root}`)
say()

const circles = importCircles(root)
say(`Import circles: ${circles.length}`)
for (const circle of circles) say(describeCircle(circle))
say()

const largest = functions(root)
  .sort((a, b) => b.lines - a.lines || a.file.localeCompare(b.file) || a.line - b.line)
  .slice(0, TOP)
say(`The ${TOP} largest functions and closures (line span; a wrapper and the function it wraps count once):`)
for (const f of largest) say(`  ${String(f.lines).padStart(4)}  ${f.file}:${f.line}  ${f.name}  (${f.kind})`)
say()

const exported = coreExports(root)
say(
  `@lathe/core src/index.ts exports ${exported.total} names (${exported.values} values, ${exported.types} types only)`
)
say()

const publishes = sites(root, /bus\.publish\(|\(yield\* Bus\)\.publish\(/g)
say(`Publish sites (bus.publish( and (yield* Bus).publish(, src outside testing/): ${publishes.length}`)
say(
  `  by file: ${byFile(publishes)
    .map(([file, n]) => `${file} ${n}`)
    .join(", ")}`
)
say()

const storeWrites = sites(root, /store\.put(?:Part|Message|Session)\(/g, (rel) => rel.endsWith("transcript.ts"))
say(
  `Store-write sites (store.putPart|putMessage|putSession(, src outside testing/ and transcript.ts): ${storeWrites.length}`
)
say(
  `  by file: ${byFile(storeWrites)
    .map(([file, n]) => `${file} ${n}`)
    .join(", ")}`
)
const WRITE =
  /([A-Za-z_$][\w$]*|\(yield\* [A-Za-z_$][\w$]*\))\.(put(?:Part|Message|Session)|remove(?:Part|Message)|deleteSession)\(/g
const writes = sites(root, WRITE)
const receivers = new Map()
for (const { match } of writes) receivers.set(match[1], (receivers.get(match[1]) ?? 0) + 1)
say(
  `Every session-state write call (put/remove/delete, any receiver): ${writes.length}; by receiver: ` +
    [...receivers]
      .sort((a, b) => b[1] - a[1])
      .map(([receiver, n]) => `${receiver} ${n}`)
      .join(", ")
)

console.log(out.join("\n"))
