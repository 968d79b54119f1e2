/**
 * Edit-to-diagnostics benchmark for `@lathe/lsp`: a generated TypeScript project of N files (default 200, each
 * importing the one before, so a change ripples through real type checking), edited through the plugin's `tool.after`
 * hook exactly as the loop calls it after a `write`. Reports the first edit (server start and project load included)
 * and the median of later edits, each introducing or fixing a type error in a file in the middle of the chain.
 *
 *   npx tsx --conditions=@lathe/source bench/lsp.ts [files=200] [edits=10]
 *
 * The server is the one the tests install from the npm registry (`@lathe/lsp/testing`, cached in the temp dir), or the
 * one in LATHE_LSP_BIN (a folder) when set. The temp project is removed at the end.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { createLspPlugin } from "@lathe/lsp"
import { installTestServers } from "@lathe/lsp/testing"
import { setUpPlugin } from "@lathe/plugin/testing"

const files = Number(process.argv[2] ?? 200)
const edits = Number(process.argv[3] ?? 10)
const installed = process.env.LATHE_LSP_BIN ? { bin: process.env.LATHE_LSP_BIN } : installTestServers()
if ("skip" in installed) throw new Error(installed.skip)
const bin = installed.bin
const env = { ...process.env, PATH: `${bin}:${dirname(process.execPath)}:${process.env.PATH ?? ""}` }

const root = await mkdtemp(join(tmpdir(), "lathe-lsp-bench-"))
try {
  await writeFile(join(root, "tsconfig.json"), JSON.stringify({ compilerOptions: { strict: true, noEmit: true } }))
  const source = (i: number, broken = false) =>
    i === 0
      ? "export const v0: number = 0\nexport interface T0 { readonly n: number }\n"
      : `import { v${i - 1}, type T${i - 1} } from "./f${i - 1}.js"\n` +
        `export interface T${i} extends T${i - 1} { readonly s${i}: string }\n` +
        `export const v${i}: number = v${i - 1} + ${broken ? '"x"' : "1"}\n` +
        `export const make${i} = (s: string): T${i} => ({ n: v${i}, ${Array.from({ length: i }, (_, k) => `s${k + 1}: s`).join(", ")} })\n`
  for (let i = 0; i < files; i++) await writeFile(join(root, `f${i}.ts`), source(i))

  const plugin = await setUpPlugin(createLspPlugin({ dataDir: join(root, ".data"), env }), {
    root,
    config: { lsp: { install: false, wait_ms: 30_000 } },
    hookTimeoutMs: 120_000
  })
  const target = `f${Math.floor(files / 2)}.ts`
  const edit = async (broken: boolean): Promise<{ readonly ms: number; readonly text: string }> => {
    await writeFile(join(root, target), source(Math.floor(files / 2), broken))
    const output = { title: target, output: "", metadata: {} }
    const start = performance.now()
    await plugin.hooks["tool.after"]?.(
      { tool: "write", sessionID: "s", callID: "c", args: { filePath: target } },
      output
    )
    return { ms: performance.now() - start, text: output.output }
  }
  const first = await edit(true)
  if (!first.text.includes("TS2322")) throw new Error(`no diagnostic on the first edit:\n${first.text}`)
  const later: Array<number> = []
  for (let i = 0; i < edits; i++) {
    const broken = i % 2 === 1
    const result = await edit(broken)
    if (broken !== result.text.includes("TS2322")) throw new Error(`edit ${i}: unexpected output:\n${result.text}`)
    later.push(result.ms)
  }
  later.sort((a, b) => a - b)
  const median = later[Math.floor(later.length / 2)] ?? 0
  console.log(`files: ${files}`)
  console.log(`first edit (server start + project load + diagnostics): ${first.ms.toFixed(0)} ms`)
  console.log(
    `later edits, edit to diagnostics: median ${median.toFixed(0)} ms, min ${later[0]?.toFixed(0)} ms, max ${later.at(-1)?.toFixed(0)} ms (n=${later.length})`
  )
  await plugin.hooks.dispose?.()
} finally {
  await rm(root, { recursive: true, force: true })
}
