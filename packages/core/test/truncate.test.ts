import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { cleanupTruncationDir, truncateOutput, truncationDir } from "../src/plugin-host/truncate.js"

const tempDir = () => mkdtempSync(join(tmpdir(), "lathe-truncate-"))

/** The text is valid UTF-16 that survives a UTF-8 round trip, with no replacement characters. */
const assertWhole = (text: string) => {
  assert.strictEqual(Buffer.from(text).toString(), text)
  assert.notInclude(text, "\uFFFD")
}

describe("truncateOutput", () => {
  it.effect("an output within both limits is unchanged and nothing is written", () =>
    Effect.gen(function* () {
      const dir = join(tempDir(), "out")
      const text = "a\nb\nc\n"
      const result = yield* truncateOutput(text, { dir, name: "t", maxLines: 3, maxBytes: 6 })
      assert.deepStrictEqual(result, { content: text, truncated: false })
      assert.isFalse(existsSync(dir))
    })
  )

  it.effect("keeps whole head lines, saves the full text privately and names the file", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(1_700_000_000_000)
      const dir = join(tempDir(), "nested", "out")
      const text = Array.from({ length: 3000 }, (_, i) => `line ${i + 1}`).join("\n")
      const result = yield* truncateOutput(text, { dir, name: "bash" })
      const path = result.outputPath ?? ""
      assert.match(path, /\/bash-1700000000000-[0-9a-f]{6}\.txt$/)
      assert.strictEqual(readFileSync(path, "utf8"), text)
      assert.strictEqual(statSync(path).mode & 0o777, 0o600)
      const head = Array.from({ length: 2000 }, (_, i) => `line ${i + 1}`).join("\n")
      assert.strictEqual(
        result.content,
        `${head}\n\n... 1000 more lines truncated (output was 3000 lines, ${Buffer.byteLength(text)} bytes). ` +
          `The full output is saved at ${path}. Read it with the read tool using offset and limit, ` +
          `or search it with grep, instead of asking for it all again.`
      )
    })
  )

  it.effect("the byte limit never splits a multi-byte character or a surrogate pair", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const line = "é€😀".repeat(20) // 2 + 3 + 4 bytes per group
      const lines = Array.from({ length: 50 }, () => line)
      const result = yield* truncateOutput(lines.join("\n"), { dir, name: "t", maxBytes: 1000 })
      const kept = result.content.split("\n\n")[0] ?? ""
      assertWhole(result.content)
      assert.strictEqual(kept, lines.slice(0, 5).join("\n")) // 5 × 180 + 4 newlines = 904 ≤ 1000 < 1085
      assert.include(result.content, "... 45 more lines truncated (output was 50 lines, 9049 bytes).")

      // one line longer than the limit is cut at a character boundary, from either end
      const single = "😀é".repeat(100)
      const head = yield* truncateOutput(single, { dir, name: "t", maxBytes: 11 })
      assert.isTrue(head.content.startsWith("😀é😀\n\n... 1 more lines truncated"))
      const tail = yield* truncateOutput(single, { dir, name: "t", maxBytes: 11, direction: "tail" })
      assert.isTrue(tail.content.endsWith("\n\né😀é"))
      assertWhole(head.content)
      assertWhole(tail.content)
    })
  )

  it.effect("tail keeps the last lines and puts the note first", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const text = `${Array.from({ length: 10 }, (_, i) => `l${i + 1}`).join("\n")}\n`
      const result = yield* truncateOutput(text, { dir, name: "log", maxLines: 3, direction: "tail" })
      assert.strictEqual(
        result.content,
        `... 7 earlier lines truncated (output was 10 lines, 31 bytes). The full output is saved at ` +
          `${result.outputPath}. Read it with the read tool using offset and limit, or search it with grep, ` +
          `instead of asking for it all again.\n\nl8\nl9\nl10`
      )
    })
  )

  it.effect("a dir that cannot be created still truncates, and says why the text was not saved", () =>
    Effect.gen(function* () {
      const file = join(tempDir(), "file")
      writeFileSync(file, "")
      const result = yield* truncateOutput("1\n2\n3", { dir: join(file, "out"), name: "t", maxLines: 1 })
      assert.isTrue(result.truncated)
      assert.isUndefined(result.outputPath)
      assert.match(result.content, /^1\n\n\.\.\. 2 more lines truncated \(output was 3 lines, 5 bytes\)\. /)
      assert.match(result.content, /The full output could not be saved \(ENOTDIR: .*\)\.$/)
    })
  )
})

describe("cleanupTruncationDir", () => {
  it.effect("deletes files older than the max age and keeps newer ones, by the Effect clock", () =>
    Effect.gen(function* () {
      const day = 24 * 60 * 60 * 1000
      const now = 100 * day
      const dir = truncationDir(tempDir())
      yield* TestClock.setTime(now)
      yield* truncateOutput("a\nb", { dir, name: "old", maxLines: 1 })
      yield* truncateOutput("a\nb", { dir, name: "new", maxLines: 1 })
      const [old, fresh] = readdirSync(dir).sort((a, b) => (a.startsWith("old") ? -1 : b.startsWith("old") ? 1 : 0))
      utimesSync(join(dir, old ?? ""), (now - 8 * day) / 1000, (now - 8 * day) / 1000)
      utimesSync(join(dir, fresh ?? ""), (now - day) / 1000, (now - day) / 1000)
      yield* cleanupTruncationDir(dir)
      assert.deepStrictEqual(readdirSync(dir), [fresh])
      yield* cleanupTruncationDir(dir, day / 2)
      assert.deepStrictEqual(readdirSync(dir), [])
      yield* cleanupTruncationDir(join(dir, "missing"))
    })
  )
})
