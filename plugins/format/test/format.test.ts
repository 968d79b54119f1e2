import { readFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { definePlugin } from "@lathe/plugin"
import { type PluginTurnToolResult, pluginContext, runPluginTurn } from "@lathe/plugin/testing"
import { createFormatPlugin, findBinary } from "../src/index.js"
import { binDir, linkBiome, pathWith, tempProject, WriteTool } from "./helpers.js"

const UGLY = "const a = {b:1,\n  c:2}\nexport   default a\n"
const PRETTY = "const a = { b: 1, c: 2 };\nexport default a;\n"
const tools = definePlugin({ name: "test-tools", setup: () => ({ tools: [WriteTool] }) })

/** A turn where the model writes `filePath` with `content`, then stops. */
const writeTurn = (
  root: string,
  filePath: string,
  content: string,
  env: Record<string, string | undefined>,
  options: Record<string, unknown> = {}
) =>
  runPluginTurn({
    root,
    plugins: [tools, { plugin: createFormatPlugin({ env }), options }],
    prompt: `write ${filePath}`,
    steps: [{ steps: [{ tool: "write", id: "c1", input: { filePath, content } }] }, { steps: [{ text: "done" }] }]
  })

/** The single tool part of a turn, which must have completed. */
const completed = (results: ReadonlyArray<PluginTurnToolResult>) => {
  const result = results[0]
  assert.strictEqual(result?.status, "completed")
  return { output: result?.output ?? "", metadata: result?.metadata ?? {} }
}

describe("@lathe/format through the loop", () => {
  it("formats a badly formatted file with the project's biome and tells the model", async () => {
    const root = tempProject({ "biome.json": "{}\n" })
    linkBiome(root)
    const { toolResults: tools } = await writeTurn(root, "src/a.ts", UGLY, { PATH: pathWith() })
    assert.strictEqual(readFileSync(join(root, "src/a.ts"), "utf8"), PRETTY)
    const state = completed(tools)
    assert.strictEqual(
      state.output,
      "Wrote src/a.ts.\n\nFormatted with biome: src/a.ts (read it again before the next edit)."
    )
    assert.deepStrictEqual(state.metadata.formatted, [{ formatter: "biome", files: ["src/a.ts"] }])
  })

  it("leaves output and file untouched when the project configures no formatter", async () => {
    const root = tempProject({ "package.json": '{ "name": "x" }\n' })
    linkBiome(root) // biome is installed, but the project has no biome.json: not its formatter
    const { toolResults: tools } = await writeTurn(root, "a.ts", UGLY, { PATH: pathWith() })
    assert.strictEqual(readFileSync(join(root, "a.ts"), "utf8"), UGLY)
    const state = completed(tools)
    assert.strictEqual(state.output, "Wrote a.ts.")
    assert.isUndefined(state.metadata.formatted)
  })

  it("skips silently when the configured formatter's binary is missing", async () => {
    const root = tempProject({ ".prettierrc": "{}\n" })
    // Precondition: no prettier in the project nor on this PATH.
    assert.isUndefined(await findBinary(root, "prettier", { PATH: pathWith() }))
    const { toolResults: tools } = await writeTurn(root, "a.ts", UGLY, { PATH: pathWith() })
    assert.strictEqual(readFileSync(join(root, "a.ts"), "utf8"), UGLY)
    const state = completed(tools)
    assert.strictEqual(state.output, "Wrote a.ts.")
    assert.isUndefined(state.metadata.formatted)
  })

  it("notes a formatter failure in the output; the call still completes", async () => {
    const root = tempProject({ "biome.json": "{}\n" })
    linkBiome(root)
    const { toolResults: tools } = await writeTurn(root, "bad.ts", "const = =\n", { PATH: pathWith() })
    const state = completed(tools)
    assert.match(state.output, /^Wrote bad\.ts\.\n\nFormatter biome failed: exit code 1: × Expected an identifier/)
    assert.isUndefined(state.metadata.formatted)
  })

  it("runs a formatter found on PATH (gofmt for .go) and reports only what changed", async () => {
    const root = tempProject()
    // A stand-in gofmt: `gofmt -w file` rewrites tabs the way the real one would fix indentation.
    const bin = binDir("gofmt", `[ "$1" = "-w" ] || exit 2; shift; for f in "$@"; do sed -i 's/^  /\\t/' "$f"; done`)
    const { toolResults: tools } = await writeTurn(root, "main.go", "package main\nfunc main() {\n  println(1)\n}\n", {
      PATH: pathWith(bin)
    })
    assert.strictEqual(readFileSync(join(root, "main.go"), "utf8"), "package main\nfunc main() {\n\tprintln(1)\n}\n")
    const state = completed(tools)
    assert.deepStrictEqual(state.metadata.formatted, [{ formatter: "gofmt", files: ["main.go"] }])
  })

  it("stops a formatter at the time limit and says so", async () => {
    const root = tempProject()
    const bin = binDir("gofmt", "sleep 5")
    const started = Date.now()
    const { toolResults: tools } = await writeTurn(
      root,
      "main.go",
      "package main\n",
      { PATH: pathWith(bin) },
      { timeoutMs: 300 }
    )
    assert.isBelow(Date.now() - started, 4_000)
    const state = completed(tools)
    assert.strictEqual(
      state.output,
      "Wrote main.go.\n\nFormatter gofmt failed: it did not finish within 300 ms and was stopped"
    )
  })

  it("rejects bad options at load with a message naming the option", async () => {
    const turn = await writeTurn(tempProject(), "a.ts", "", {}, { disabled: ["black"] })
    // Load failures come before the turn's events: the host's warning is in the turn's log.
    const failures = turn.logs.filter((line) => line.level === "warn" && line.message.includes("failed in load"))
    assert.lengthOf(failures, 1)
    assert.match(failures[0]?.message ?? "", /@lathe\/format: invalid options:[\s\S]*disabled[\s\S]*lathe\.json/)
    // The other plugin loaded, and the turn went on.
    assert.strictEqual(turn.toolResults[0]?.status, "completed")
  })

  it("formats every file an apply_patch call left on disk, each with its formatter, in one hook call", async () => {
    const root = tempProject({ "biome.json": "{}\n", "src/a.ts": UGLY, "src/b.ts": UGLY, "notes.txt": "x  y\n" })
    linkBiome(root)
    const hooks = await createFormatPlugin({ env: { PATH: pathWith() } }).setup(pluginContext(root))
    const output = { title: "patch", output: "Applied.", metadata: {} as Record<string, unknown> }
    const patchText = [
      "*** Begin Patch",
      "*** Update File: src/a.ts",
      "*** Update File: src/old.ts",
      "*** Move to: src/b.ts",
      "*** Update File: notes.txt",
      "*** Add File: ../outside.ts",
      "*** End Patch"
    ].join("\n")
    await hooks["tool.after"]?.({ tool: "apply_patch", sessionID: "s", callID: "c", args: { patchText } }, output)
    assert.strictEqual(readFileSync(join(root, "src/b.ts"), "utf8"), PRETTY)
    assert.strictEqual(readFileSync(join(root, "notes.txt"), "utf8"), "x  y\n")
    assert.strictEqual(
      output.output,
      "Applied.\n\nFormatted with biome: src/a.ts, src/b.ts (read them again before the next edit)."
    )
    assert.deepStrictEqual(output.metadata.formatted, [{ formatter: "biome", files: ["src/a.ts", "src/b.ts"] }])
  })
})
