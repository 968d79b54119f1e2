import { readFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { chunks, Plugins, ScriptedLLM, testLoopLayer } from "@lathe/core/testing"
import { definePlugin } from "@lathe/plugin"
import { pluginContext } from "@lathe/plugin/testing"
import { Effect } from "effect"
import { createFormatPlugin, findBinary } from "../src/index.js"
import { binDir, linkBiome, pathWith, runTurn, tempProject, WriteTool } from "./helpers.js"

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
  testLoopLayer({
    root,
    plugins: [tools, { plugin: createFormatPlugin({ env }), options }],
    steps: [
      [chunks.toolCall("c1", "write", { filePath, content }), chunks.finish({ input: 10, output: 5 }, "tool-calls")],
      [chunks.text("done"), chunks.finish({ input: 10, output: 1 })]
    ]
  })

/** The single tool part of a turn, which must have completed. */
const completed = (tools: ReadonlyArray<{ state: { status: string } }>) => {
  const state = tools[0]?.state
  assert.strictEqual(state?.status, "completed")
  return state as { status: "completed"; output: string; metadata: Record<string, unknown> }
}

describe("@lathe/format through the loop", () => {
  it.live("formats a badly formatted file with the project's biome and tells the model", () => {
    const root = tempProject({ "biome.json": "{}\n" })
    linkBiome(root)
    return Effect.gen(function* () {
      const { tools } = yield* runTurn("write a.ts")
      assert.strictEqual(readFileSync(join(root, "src/a.ts"), "utf8"), PRETTY)
      const state = completed(tools)
      assert.strictEqual(
        state.output,
        "Wrote src/a.ts.\n\nFormatted with biome: src/a.ts (read it again before the next edit)."
      )
      assert.deepStrictEqual(state.metadata.formatted, [{ formatter: "biome", files: ["src/a.ts"] }])
      // The model's next step saw the note.
      const requests = yield* (yield* ScriptedLLM).requests
      assert.include(JSON.stringify(requests[1]?.messages), "Formatted with biome: src/a.ts")
    }).pipe(Effect.provide(writeTurn(root, "src/a.ts", UGLY, { PATH: pathWith() })))
  })

  it.live("leaves output and file untouched when the project configures no formatter", () => {
    const root = tempProject({ "package.json": '{ "name": "x" }\n' })
    linkBiome(root) // biome is installed, but the project has no biome.json: not its formatter
    return Effect.gen(function* () {
      const { tools } = yield* runTurn("write a.ts")
      assert.strictEqual(readFileSync(join(root, "a.ts"), "utf8"), UGLY)
      const state = completed(tools)
      assert.strictEqual(state.output, "Wrote a.ts.")
      assert.isUndefined(state.metadata.formatted)
    }).pipe(Effect.provide(writeTurn(root, "a.ts", UGLY, { PATH: pathWith() })))
  })

  it.live("skips silently when the configured formatter's binary is missing", () => {
    const root = tempProject({ ".prettierrc": "{}\n" })
    return Effect.gen(function* () {
      // Precondition: no prettier in the project nor on this PATH.
      assert.isUndefined(yield* Effect.promise(() => findBinary(root, "prettier", { PATH: pathWith() })))
      const { tools } = yield* runTurn("write a.ts")
      assert.strictEqual(readFileSync(join(root, "a.ts"), "utf8"), UGLY)
      const state = completed(tools)
      assert.strictEqual(state.output, "Wrote a.ts.")
      assert.isUndefined(state.metadata.formatted)
    }).pipe(Effect.provide(writeTurn(root, "a.ts", UGLY, { PATH: pathWith() })))
  })

  it.live("notes a formatter failure in the output; the call still completes", () => {
    const root = tempProject({ "biome.json": "{}\n" })
    linkBiome(root)
    return Effect.gen(function* () {
      const { tools } = yield* runTurn("write bad.ts")
      const state = completed(tools)
      assert.match(state.output, /^Wrote bad\.ts\.\n\nFormatter biome failed: exit code 1: × Expected an identifier/)
      assert.isUndefined(state.metadata.formatted)
    }).pipe(Effect.provide(writeTurn(root, "bad.ts", "const = =\n", { PATH: pathWith() })))
  })

  it.live("runs a formatter found on PATH (gofmt for .go) and reports only what changed", () => {
    const root = tempProject()
    // A stand-in gofmt: `gofmt -w file` rewrites tabs the way the real one would fix indentation.
    const bin = binDir("gofmt", `[ "$1" = "-w" ] || exit 2; shift; for f in "$@"; do sed -i 's/^  /\\t/' "$f"; done`)
    return Effect.gen(function* () {
      const { tools } = yield* runTurn("write main.go")
      assert.strictEqual(readFileSync(join(root, "main.go"), "utf8"), "package main\nfunc main() {\n\tprintln(1)\n}\n")
      const state = completed(tools)
      assert.deepStrictEqual(state.metadata.formatted, [{ formatter: "gofmt", files: ["main.go"] }])
    }).pipe(
      Effect.provide(
        writeTurn(root, "main.go", "package main\nfunc main() {\n  println(1)\n}\n", { PATH: pathWith(bin) })
      )
    )
  })

  it.live("stops a formatter at the time limit and says so", () => {
    const root = tempProject()
    const bin = binDir("gofmt", "sleep 5")
    return Effect.gen(function* () {
      const started = Date.now()
      const { tools } = yield* runTurn("write main.go")
      assert.isBelow(Date.now() - started, 4_000)
      const state = completed(tools)
      assert.strictEqual(
        state.output,
        "Wrote main.go.\n\nFormatter gofmt failed: it did not finish within 300 ms and was stopped"
      )
    }).pipe(Effect.provide(writeTurn(root, "main.go", "package main\n", { PATH: pathWith(bin) }, { timeoutMs: 300 })))
  })

  it.live("rejects bad options at load with a message naming the option", () =>
    Effect.gen(function* () {
      const plugins = yield* Plugins
      assert.deepStrictEqual(
        plugins.list.map((p) => p.name),
        ["test-tools"]
      )
      assert.match(
        plugins.failed[0]?.message ?? "",
        /@lathe\/format: invalid options:[\s\S]*disabled[\s\S]*lathe\.json/
      )
    }).pipe(Effect.provide(writeTurn(tempProject(), "a.ts", "", {}, { disabled: ["black"] })))
  )

  it.live("formats every file an apply_patch call left on disk, each with its formatter, in one hook call", () =>
    Effect.promise(async () => {
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
  )
})
