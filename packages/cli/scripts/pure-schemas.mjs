// The AI SDK's module-level zod schemas, marked side-effect free so the bundle drops the ones nothing uses.
import ts from "typescript"

/**
 * Which top-level constants count as schemas: `const x = z.object(…)` (any `z`/`z$1`… namespace), and the SDK's
 * wrappers around one (`lazySchema(…)`, `zodSchema(…)`, `withJsonValueCheck(…)`).
 */
const SCHEMA_INITIALISER = /^(z(\$\d+)?\.|lazySchema\b|zodSchema\b|withJsonValueCheck\b)/

/**
 * `source` (an ES module, the `ai` package's dist/index.js) with every call inside a top-level schema constant's
 * initialiser marked `/* @__PURE__ *\/`, and how many calls were marked. esbuild keeps a module-level call it cannot
 * prove free of side effects even when its result is never used, so the run build evaluated every schema the SDK
 * defines (UI message chunks, realtime events, …) at every start; building a zod schema has no effect outside the
 * schema, so one whose constant nothing reads can go. A used schema is built exactly as before.
 */
export const pureTopLevelSchemas = (source) => {
  const file = ts.createSourceFile("index.js", source, ts.ScriptTarget.Latest, true, ts.ScriptKind.JS)
  const starts = new Set()
  const mark = (node) => {
    if (ts.isCallExpression(node)) starts.add(node.getStart(file))
    ts.forEachChild(node, mark)
  }
  for (const statement of file.statements) {
    if (!ts.isVariableStatement(statement)) continue
    for (const declaration of statement.declarationList.declarations) {
      const init = declaration.initializer
      if (init !== undefined && ts.isCallExpression(init) && SCHEMA_INITIALISER.test(init.expression.getText(file)))
        mark(init)
    }
  }
  let out = source
  for (const at of [...starts].sort((a, b) => b - a)) out = `${out.slice(0, at)}/* @__PURE__ */ ${out.slice(at)}`
  return { contents: out, marked: starts.size }
}
