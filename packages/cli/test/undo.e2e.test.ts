import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { afterEach, assert, describe, it } from "vitest"
import { runLathe, sandbox } from "./helpers.js"

// Undo and redo through the real snapshot layer (a shadow git repository in the data dir).
let server: ScriptedServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

describe("lathe undo --step / lathe redo", () => {
  it("a step's file changes are recorded, undone, redone, and an undo is final after the next prompt", async () => {
    server = await startScriptedServer([
      { steps: [{ tool: "bash", input: { command: "echo new > b.txt && rm a.txt", description: "change files" } }] },
      { steps: [{ text: "Changed b and removed a." }] },
      { steps: [{ text: "Starting over." }] }
    ])
    const box = sandbox()
    writeFileSync(join(box.project, "a.txt"), "original a\n")
    const env = { ...box.env, LATHE_BASE_URL: server.url, LATHE_MODEL: "m" }
    const at = (file: string) => join(box.project, file)

    const run = await runLathe(["run", "--format", "json", "--yes", "rework the files"], { cwd: box.project, env })
    assert.strictEqual(run.code, 0, run.stderr)
    const patch = run.events.find((e) => e.type === "part.updated" && e.part.type === "patch")
    assert.deepStrictEqual(
      patch?.type === "part.updated" && patch.part.type === "patch" ? [...patch.part.files].sort() : [],
      ["a.txt", "b.txt"]
    )
    assert.isFalse(existsSync(at("a.txt")))

    const undo = await runLathe(["undo", "--step"], { cwd: box.project, env })
    assert.strictEqual(undo.code, 0, undo.stderr)
    assert.include(undo.stdout, "Restored 2 files")
    assert.strictEqual(readFileSync(at("a.txt"), "utf8"), "original a\n")
    assert.isFalse(existsSync(at("b.txt")))

    const redo = await runLathe(["redo"], { cwd: box.project, env })
    assert.strictEqual(redo.code, 0, redo.stderr)
    assert.include(redo.stdout, "Re-applied 2 files")
    assert.strictEqual(readFileSync(at("b.txt"), "utf8"), "new\n")
    assert.isFalse(existsSync(at("a.txt")))

    const nothing = await runLathe(["redo"], { cwd: box.project, env })
    assert.strictEqual(nothing.code, 1)
    assert.include(nothing.stderr, "nothing was undone")

    // Undo again, then prompt: the undone step is gone from what the model sees (its turn's prompt stays).
    assert.strictEqual((await runLathe(["undo", "--step"], { cwd: box.project, env })).code, 0)
    const next = await runLathe(["run", "--format", "json", "-c", "start over"], { cwd: box.project, env })
    assert.strictEqual(next.code, 0, next.stderr)
    const body = JSON.stringify(server.requests[2]?.body)
    assert.include(body, "rework the files")
    assert.include(body, "start over")
    assert.notInclude(body, "echo new > b.txt")
    assert.isTrue(next.events.some((e) => e.type === "message.removed"))
  })

  it("undoing twice walks back through two steps that changed the same file", async () => {
    server = await startScriptedServer([
      { steps: [{ tool: "bash", input: { command: "echo two > a.txt", description: "v2" } }] },
      { steps: [{ tool: "bash", input: { command: "echo three > a.txt", description: "v3" } }] },
      { steps: [{ text: "Done." }] }
    ])
    const box = sandbox()
    const file = join(box.project, "a.txt")
    writeFileSync(file, "one\n")
    const env = { ...box.env, LATHE_BASE_URL: server.url, LATHE_MODEL: "m" }
    assert.strictEqual((await runLathe(["run", "--yes", "edit twice"], { cwd: box.project, env })).code, 0)
    assert.strictEqual(readFileSync(file, "utf8"), "three\n")
    assert.strictEqual((await runLathe(["undo", "--step"], { cwd: box.project, env })).code, 0)
    assert.strictEqual(readFileSync(file, "utf8"), "two\n")
    assert.strictEqual((await runLathe(["undo", "--step"], { cwd: box.project, env })).code, 0)
    assert.strictEqual(readFileSync(file, "utf8"), "one\n")
    const third = await runLathe(["undo", "--step"], { cwd: box.project, env })
    assert.strictEqual(third.code, 1)
    assert.include(third.stderr, "Nothing to undo")
    assert.strictEqual((await runLathe(["redo"], { cwd: box.project, env })).code, 0)
    assert.strictEqual(readFileSync(file, "utf8"), "three\n")
  })

  it("says so when there is nothing to undo", async () => {
    const box = sandbox()
    const run = await runLathe(["undo"], { cwd: box.project, env: box.env })
    assert.strictEqual(run.code, 1)
    assert.include(run.stderr, "no session yet")
  })
})
