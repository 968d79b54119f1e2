import { assert, describe, it } from "@effect/vitest"
import { DoomLoopGuard } from "../src/loop/doom-loop.js"

describe("DoomLoopGuard window", () => {
  it("remembers a fixed window however many calls the turn makes", () => {
    const guard = new DoomLoopGuard({ threshold: 3, ignoredTools: [] })
    for (let i = 0; i < 5_000; i++) {
      assert.strictEqual(guard.record("read", { path: `f${i}` }), 1)
      assert.isAtMost(guard.size, 3)
    }
    assert.strictEqual(guard.size, 3)
    assert.deepStrictEqual(
      guard.last(5_000).map((call) => call.input),
      ['{"path":"f4997"}', '{"path":"f4998"}', '{"path":"f4999"}']
    )
  })

  it("counts a run longer than the window and reports the window's calls", () => {
    const guard = new DoomLoopGuard({ threshold: 3, ignoredTools: [] })
    let count = 0
    for (let i = 0; i < 5_000; i++) count = guard.record("bash", { command: "ls", cwd: "." })
    assert.strictEqual(count, 5_000)
    assert.isTrue(guard.triggers(count))
    assert.strictEqual(guard.size, 3)
    assert.lengthOf(guard.last(count), 3)
  })

  it("detects the same runs as before: keys sorted, a different call restarts, ignored tools do not break a run", () => {
    const guard = new DoomLoopGuard({ threshold: 3, ignoredTools: ["todowrite"] })
    assert.strictEqual(guard.record("edit", { a: 1, b: 2 }), 1)
    assert.strictEqual(guard.record("edit", { b: 2, a: 1 }), 2)
    assert.strictEqual(guard.record("todowrite", { todos: [] }), 0)
    assert.strictEqual(guard.record("edit", { a: 1, b: 2 }), 3)
    assert.isTrue(guard.triggers(3))
    assert.strictEqual(guard.record("edit", { a: 2 }), 1)
    assert.strictEqual(guard.record("edit", { a: 1, b: 2 }), 1)
    assert.deepStrictEqual(guard.last(2), [
      { tool: "edit", input: '{"a":2}' },
      { tool: "edit", input: '{"a":1,"b":2}' }
    ])
  })

  it("off (threshold 0) remembers nothing", () => {
    const guard = new DoomLoopGuard({ threshold: 0, ignoredTools: [] })
    for (let i = 0; i < 100; i++) assert.strictEqual(guard.record("read", {}), 0)
    assert.strictEqual(guard.size, 0)
  })
})
