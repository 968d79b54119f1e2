import { build } from "esbuild"
import { assert, describe, it } from "vitest"

interface PureSchemas {
  readonly pureTopLevelSchemas: (source: string) => { readonly contents: string; readonly marked: number }
}

const script = new URL("../scripts/pure-schemas.mjs", import.meta.url).href

/** `source` bundled as the CLI's builds bundle a dependency: what esbuild keeps of it. */
const bundled = async (source: string): Promise<string> => {
  const result = await build({
    stdin: { contents: source, loader: "js" },
    bundle: true,
    write: false,
    format: "esm",
    platform: "node",
    logLevel: "silent"
  })
  return result.outputFiles[0]?.text ?? ""
}

describe("the AI SDK's module-level schemas", () => {
  it("are dropped when nothing uses them, kept (and built as before) when something does", async () => {
    const { pureTopLevelSchemas } = (await import(script)) as PureSchemas
    const source = [
      "const z = { object: (shape) => ({ shape }), string: () => ({ kind: 'string' }) }",
      "const lazySchema = (make) => make",
      "const usedSchema = z.object({ text: z.string() })",
      "const unusedSchema = z.object({ UNUSED_FIELD: z.string() })",
      "const unusedLazy = lazySchema(() => z.object({ UNUSED_LAZY: z.string() }))",
      "const notASchema = globalThis.register('KEPT_SIDE_EFFECT')",
      "export const read = (value) => usedSchema.shape.text.kind + value"
    ].join("\n")
    const { contents, marked } = pureTopLevelSchemas(source)
    // Every call inside the three schema constants' initialisers (three at the top, their nested calls too).
    assert.strictEqual(marked, 7)
    const before = await bundled(source)
    const after = await bundled(contents)
    assert.include(before, "UNUSED_FIELD", "without the marks esbuild keeps an unused schema")
    assert.notInclude(after, "UNUSED_FIELD")
    assert.notInclude(after, "UNUSED_LAZY")
    assert.include(after, "usedSchema")
    assert.include(after, "KEPT_SIDE_EFFECT", "a call that is not a schema keeps its place")
  })
})
