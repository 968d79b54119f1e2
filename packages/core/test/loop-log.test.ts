import { mkdirSync, mkdtempSync, readdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { emptyTokens } from "@lathe/plugin/schema"
import { Effect } from "effect"
import { Bus } from "../src/contracts/bus.js"
import { makeLogWriter, pruneLogFiles } from "../src/loop/log-file.js"
import { loggingBus } from "../src/loop/loop-log.js"

const tempDir = () => mkdtempSync(join(tmpdir(), "lathe-log-"))
const read = (dir: string) =>
  readdirSync(dir)
    .sort()
    .flatMap((name) => readFileSync(join(dir, name), "utf8").split("\n"))
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as Record<string, unknown>)

describe("loop log", () => {
  it.effect("logs retries with their wait and compactions; info leaves out the debug lines", () => {
    const dir = join(tempDir(), "logs")
    return Effect.gen(function* () {
      const bus = yield* Bus
      const next = Date.now() + 2_000
      yield* bus.publish({ type: "step.started", sessionID: "s", messageID: "m", step: 1 })
      yield* bus.publish({
        type: "session.status",
        sessionID: "s",
        status: { type: "retry", attempt: 2, message: "Rate limited.", next }
      })
      yield* bus.publish({ type: "session.compacted", sessionID: "s", messageID: "m2" })
      yield* bus.publish({
        type: "step.finished",
        sessionID: "s",
        messageID: "m",
        step: 1,
        reason: "stop",
        tokens: emptyTokens(),
        cost: 0
      })
      const lines = read(dir)
      assert.deepStrictEqual(
        lines.map((line) => line.message),
        ["retry", "compaction", "step.finish"]
      )
      const [retry, compaction, finish] = lines
      assert.strictEqual(retry?.attempt, 2)
      assert.isAbove(retry?.waitMs as number, 1_000)
      assert.isAtMost(retry?.waitMs as number, 2_000)
      assert.strictEqual(retry?.reason, "Rate limited.")
      assert.strictEqual(compaction?.sessionID, "s")
      assert.isNumber(finish?.durationMs)
    }).pipe(Effect.provide(loggingBus(Bus.layer, { level: "info", dir })), Effect.scoped)
  })

  it("starts the next part when a file is full, and keeps the newest files only", () => {
    const dir = tempDir()
    const write = makeLogWriter(dir, () => new Date("2026-01-02T10:00:00Z"), 100)
    for (let i = 0; i < 5; i++) write(JSON.stringify({ i, pad: "x".repeat(40) }))
    assert.deepStrictEqual(readdirSync(dir).sort(), [
      "lathe-2026-01-02.1.log",
      "lathe-2026-01-02.2.log",
      "lathe-2026-01-02.log"
    ])
    assert.deepStrictEqual(
      read(dir).map((line) => line.i),
      [2, 3, 4, 0, 1] // two lines fill a part; read() sorts by name, ".1" and ".2" before the first part
    )
    const old = tempDir()
    mkdirSync(old, { recursive: true })
    for (let day = 1; day <= 12; day++) {
      const file = join(old, `lathe-2026-01-${String(day).padStart(2, "0")}.log`)
      writeFileSync(file, "{}\n")
      utimesSync(file, day * 86_400, day * 86_400)
    }
    writeFileSync(join(old, "other.txt"), "kept")
    pruneLogFiles(old, 10)
    const left = readdirSync(old).sort()
    assert.lengthOf(left, 11)
    assert.notInclude(left, "lathe-2026-01-01.log")
    assert.notInclude(left, "lathe-2026-01-02.log")
    assert.include(left, "other.txt")
  })
})
