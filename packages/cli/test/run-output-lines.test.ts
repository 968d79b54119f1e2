import { execFileSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { linesPerTick } from "../src/commands/run-output.js"

const tick = () => new Promise((done) => setImmediate(done))

describe("--format json's lines, one write per turn of the event loop", () => {
  it("writes the lines of one tick together, in order, and waits for nothing once flushed", async () => {
    const writes: Array<string> = []
    const lines = linesPerTick((text) => writes.push(text))
    lines.write("a\n")
    lines.write("b\n")
    lines.write("c\n")
    expect(writes).toEqual([])
    await tick()
    expect(writes).toEqual(["a\nb\nc\n"])
    lines.write("d\n")
    lines.flush()
    expect(writes).toEqual(["a\nb\nc\n", "d\n"])
    await tick()
    expect(writes).toHaveLength(2)
  })

  it("holds an exit listener only while lines wait", async () => {
    const before = process.listenerCount("exit")
    const lines = linesPerTick(() => undefined)
    lines.write("a\n")
    lines.write("b\n")
    expect(process.listenerCount("exit")).toBe(before + 1)
    await tick()
    expect(process.listenerCount("exit")).toBe(before)
  })

  it("a process that exits right after an event still writes its line", () => {
    const module = fileURLToPath(new URL("../src/commands/run-output.ts", import.meta.url))
    const script = [
      `const { linesPerTick } = await import(${JSON.stringify(module)})`,
      "const lines = linesPerTick((text) => process.stdout.write(text))",
      'lines.write("one\\n")',
      'lines.write("two\\n")',
      "process.exit(3)"
    ].join("\n")
    let out = ""
    try {
      execFileSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
        cwd: fileURLToPath(new URL("..", import.meta.url)),
        encoding: "utf8"
      })
    } catch (error) {
      out = (error as { stdout: string; status: number }).stdout
      expect((error as { status: number }).status).toBe(3)
    }
    expect(out).toBe("one\ntwo\n")
  })
})
