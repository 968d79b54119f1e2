// The run build's imports, taken from the module that defines each name instead of through a barrel.
import { readFileSync } from "node:fs"
import { dirname } from "node:path"
import ts from "typescript"

/**
 * Barrels whose named imports the run build takes from the defining module: `effect`'s index (one namespace per
 * module: `Effect`, `Layer`, `Cron`, …) and the entries of Lathe's own packages (`@lathe/core`, `@lathe/plugin`, …).
 */
export const DIRECT_IMPORT_BARRELS = /^(effect|@lathe\/[\w-]+(\/[\w-]+)*)$/

/** Lathe's own TypeScript sources: the files whose imports are rewritten. */
export const DIRECT_IMPORT_SOURCES = /[\\/](packages|plugins)[\\/][\w-]+[\\/]src[\\/].*\.tsx?$/

/**
 * Where each imported name of `source` comes from: `import { Effect, Layer } from "effect"` becomes
 * `import * as Effect from "<…>/effect/dist/Effect.js"; import * as Layer from "<…>/Layer.js"`, and
 * `import { Config, type Paths } from "@lathe/core"` becomes `import { Config } from "<…>/core/src/config/config.ts"`.
 *
 * Why: the run build is CommonJS with lazily initialised modules (esbuild wraps every module a dynamic `import()`
 * reaches), and initialising a barrel initialises everything it re-exports. Through `@lathe/core`'s index and
 * `effect`'s, a one-request `lathe run` initialised ~490 modules, ~300 of which never ran a function of their own
 * (effect's Cron, crypto and HTTP modules, zod's locales…): each cost its evaluation, its share of the code cache and
 * the garbage it left. Taken directly, esbuild initialises what is used. Type-only names are dropped (they are erased);
 * a name the barrel defines itself, or one not found, stays on the barrel import, so the result is never wrong, at
 * worst as slow as before.
 *
 * `resolve(specifier, fromDir)` gives the file a specifier names (esbuild's resolution, with the build's conditions).
 * Returns undefined when nothing changes.
 */
export const rewriteBarrelImports = async (source, file, resolve) => {
  if (!/from\s*["'](effect|@lathe\/)/.test(source)) return undefined
  const parsed = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true, scriptKind(file))
  const edits = []
  for (const statement of parsed.statements) {
    if (!ts.isImportDeclaration(statement) || !ts.isStringLiteral(statement.moduleSpecifier)) continue
    const specifier = statement.moduleSpecifier.text
    const clause = statement.importClause
    if (!DIRECT_IMPORT_BARRELS.test(specifier) || clause === undefined || clause.isTypeOnly) continue
    if (clause.name !== undefined || clause.namedBindings === undefined) continue
    if (!ts.isNamedImports(clause.namedBindings)) continue
    const barrel = await resolve(specifier, dirname(file))
    if (barrel === undefined) continue
    const kept = []
    const direct = []
    for (const element of clause.namedBindings.elements) {
      if (element.isTypeOnly) continue
      const imported = (element.propertyName ?? element.name).text
      const local = element.name.text
      const origin = await originOf(barrel, imported, resolve)
      if (origin === undefined || origin.file === barrel) kept.push(element.getText(parsed))
      else if (origin.name === "*") direct.push(`import * as ${local} from ${JSON.stringify(origin.file)};`)
      else
        direct.push(
          `import { ${origin.name === local ? local : `${origin.name} as ${local}`} } from ${JSON.stringify(origin.file)};`
        )
    }
    if (direct.length === 0 && kept.length === clause.namedBindings.elements.length) continue
    const statements = [
      ...(kept.length > 0 ? [`import { ${kept.join(", ")} } from ${JSON.stringify(specifier)};`] : []),
      ...direct
    ]
    edits.push({ start: statement.getStart(parsed), end: statement.end, text: statements.join(" ") })
  }
  if (edits.length === 0) return undefined
  let out = source
  for (const edit of edits.reverse()) out = out.slice(0, edit.start) + edit.text + out.slice(edit.end)
  return out
}

const scriptKind = (file) =>
  file.endsWith(".tsx") ? ts.ScriptKind.TSX : /\.[mc]?js$/.test(file) ? ts.ScriptKind.JS : ts.ScriptKind.TS

/** A module's exports as written: local names, re-exports by name, namespace re-exports and `export *` targets. */
const exportsCache = new Map()
const exportsOf = (file) => {
  const cached = exportsCache.get(file)
  if (cached !== undefined) return cached
  const parsed = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true, scriptKind(file))
  const table = { local: new Set(), named: new Map(), stars: [] }
  for (const statement of parsed.statements) {
    if (ts.isExportDeclaration(statement)) {
      if (statement.isTypeOnly) continue
      const from =
        statement.moduleSpecifier && ts.isStringLiteral(statement.moduleSpecifier)
          ? statement.moduleSpecifier.text
          : undefined
      const clause = statement.exportClause
      if (clause === undefined) {
        if (from !== undefined) table.stars.push(from)
      } else if (ts.isNamespaceExport(clause)) {
        if (from !== undefined) table.named.set(clause.name.text, { from, name: "*" })
      } else
        for (const element of clause.elements) {
          if (element.isTypeOnly) continue
          const exported = element.name.text
          if (from === undefined) table.local.add(exported)
          else table.named.set(exported, { from, name: (element.propertyName ?? element.name).text })
        }
      continue
    }
    const exported = ts.canHaveModifiers(statement)
      ? ts.getModifiers(statement)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)
      : false
    if (!exported) continue
    if (ts.isVariableStatement(statement))
      for (const declaration of statement.declarationList.declarations)
        collectBindingNames(declaration.name, table.local)
    else if (
      (ts.isFunctionDeclaration(statement) || ts.isClassDeclaration(statement) || ts.isEnumDeclaration(statement)) &&
      statement.name
    )
      table.local.add(statement.name.text)
  }
  exportsCache.set(file, table)
  return table
}

const collectBindingNames = (name, into) => {
  if (ts.isIdentifier(name)) into.add(name.text)
  else
    for (const element of name.elements) if (!ts.isOmittedExpression(element)) collectBindingNames(element.name, into)
}

/**
 * The module that defines `name` as exported by `file` (followed through re-exports and `export *`), and its name
 * there (`*` for a namespace re-export); undefined when not found.
 */
const originOf = async (file, name, resolve, seen = new Set()) => {
  const key = `${file}\0${name}`
  if (seen.has(key)) return undefined
  seen.add(key)
  const table = exportsOf(file)
  if (table.local.has(name)) return { file, name }
  const named = table.named.get(name)
  if (named !== undefined) {
    const target = await resolve(named.from, dirname(file))
    if (target === undefined) return undefined
    if (named.name === "*") return { file: target, name: "*" }
    return (await originOf(target, named.name, resolve, seen)) ?? { file: target, name: named.name }
  }
  for (const from of table.stars) {
    const target = await resolve(from, dirname(file))
    if (target === undefined) continue
    const found = await originOf(target, name, resolve, seen)
    if (found !== undefined) return found
  }
  return undefined
}

/**
 * The esbuild plugin: Lathe's sources with their barrel imports rewritten (see `rewriteBarrelImports`), after the
 * source `patches` of the build (`{ filter, patch(contents, path) }`: what those files' own plugins would do, since
 * esbuild takes one loader per file). Put it after the build's other plugins: a file another plugin loads keeps it.
 */
export const directImportsPlugin = (patches = []) => ({
  name: "direct-imports",
  setup(b) {
    const resolve = async (specifier, resolveDir) => {
      const result = await b.resolve(specifier, { kind: "import-statement", resolveDir })
      return result.errors.length > 0 || result.external || result.namespace !== "file" ? undefined : result.path
    }
    b.onLoad({ filter: DIRECT_IMPORT_SOURCES }, async (args) => {
      const read = readFileSync(args.path, "utf8")
      const patched = patches.reduce(
        (contents, { filter, patch }) => (filter.test(args.path) ? patch(contents, args.path) : contents),
        read
      )
      const contents = (await rewriteBarrelImports(patched, args.path, resolve)) ?? patched
      return contents === read ? undefined : { contents, loader: args.path.endsWith(".tsx") ? "tsx" : "ts" }
    })
  }
})
