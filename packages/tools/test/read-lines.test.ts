/**
 * `read` takes a file by bytes: lines split as readline splits them, each kept to a cap, the rest of a long line
 * skipped as it streams past (a file of one huge line never sits in memory whole). Real files in temp dirs.
 */
import { closeSync, createReadStream, openSync, writeFileSync, writeSync } from "node:fs"
import { join } from "node:path"
import { createInterface } from "node:readline"
import { describe, expect, it } from "@effect/vitest"
import { createReadTool, MAX_LINE_BYTES, MAX_LINE_LENGTH } from "../src/read.js"
import { boundedLines, READ_CHUNK_BYTES } from "../src/read-lines.js"
import { ToolState } from "../src/state.js"
import { harness, run, tempDir } from "./helpers.js"

const collect = async (path: string, cap: number) => {
  const lines: Array<{ text: string; cut: boolean }> = []
  for await (const line of boundedLines(path, cap)) lines.push({ text: line.head.toString("utf8"), cut: line.cut })
  return lines
}

const readlineLines = async (path: string): Promise<Array<string>> => {
  const lines: Array<string> = []
  const input = createInterface({ input: createReadStream(path, "utf8"), crlfDelay: Number.POSITIVE_INFINITY })
  for await (const line of input) lines.push(line)
  return lines
}

/** Writes `count` MB of `byte` (and then `tail`) to `path`, one megabyte at a time. */
const writeLong = (path: string, count: number, byte: string, tail = "") => {
  const fd = openSync(path, "w")
  const mb = Buffer.alloc(1024 * 1024, byte)
  for (let i = 0; i < count; i++) writeSync(fd, mb)
  if (tail) writeSync(fd, tail)
  closeSync(fd)
}

describe("boundedLines", () => {
  it("splits on \\n, \\r\\n and \\r as readline does, also where a terminator straddles a chunk", async () => {
    const dir = tempDir()
    const pad = "x".repeat(READ_CHUNK_BYTES - 1)
    const cases = [
      "a\r\nb\rc\n\nd",
      "one\ntwo\n",
      "\n\n",
      "",
      "no newline",
      `${pad}\r\nnext\r\n`, // \r ends the first chunk, \n opens the second
      `${pad}\rnext`,
      `${pad}x\r\r\nz`,
      `${"é".repeat(READ_CHUNK_BYTES)}\nend\r`
    ]
    for (const [i, text] of cases.entries()) {
      const path = join(dir, `case-${i}.txt`)
      writeFileSync(path, text)
      const ours = await collect(path, 1 << 20)
      expect(
        ours.map((line) => line.text),
        JSON.stringify(text.slice(0, 20))
      ).toEqual(await readlineLines(path))
      expect(ours.every((line) => !line.cut)).toBe(true)
    }
  })

  it("keeps at most the cap of each line and marks it cut, then goes on with the next line", async () => {
    const path = join(tempDir(), "long.txt")
    writeFileSync(path, `${"a".repeat(3 * READ_CHUNK_BYTES + 17)}\nshort\n${"b".repeat(10)}`)
    const lines = await collect(path, 100)
    expect(lines).toEqual([
      { text: "a".repeat(100), cut: true },
      { text: "short", cut: false },
      { text: "b".repeat(10), cut: false }
    ])
  })
})

describe("read: one huge line", () => {
  it("a 50 MB one-line file is read by bytes: the line is cut at 2,000 characters with a marker", async () => {
    const h = harness()
    writeLong(h.path("one-line.min.js"), 50, "q")
    // The stream keeps a bounded head of the line, never the whole of it.
    for await (const line of boundedLines(h.path("one-line.min.js"), MAX_LINE_BYTES)) {
      expect(line.head.length).toBe(MAX_LINE_BYTES)
      expect(line.cut).toBe(true)
    }
    const out = await run(createReadTool(new ToolState()), { filePath: "one-line.min.js" }, h.ctx())
    expect(out.output).toBe(
      `     1\t${"q".repeat(MAX_LINE_LENGTH)}... (line cut at 2000 chars)\n\n(End of file: 1 lines.)`
    )
  })

  it("lines after a huge line are numbered and read as usual, from an offset too", async () => {
    const h = harness()
    writeLong(h.path("data.txt"), 3, "é", "\nsecond\nthird\n")
    const tool = createReadTool(new ToolState())
    const all = await run(tool, { filePath: "data.txt" }, h.ctx())
    expect(all.output).toBe(
      `     1\t${"é".repeat(MAX_LINE_LENGTH)}... (line cut at 2000 chars)\n     2\tsecond\n     3\tthird\n\n` +
        "(End of file: 3 lines.)"
    )
    const window = await run(tool, { filePath: "data.txt", offset: 2, limit: 1 }, h.ctx())
    expect(window.output).toBe("     2\tsecond\n\n(Showing lines 2-2. More lines remain: read on with offset=3.)")
  })
})
