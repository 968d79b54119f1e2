import { assert, describe, it } from "@effect/vitest"
import type { LatheEvent } from "@lathe/plugin/schema"
import { Effect, Fiber, Stream } from "effect"
import { Bus } from "../src/contracts/bus.js"

const idle = (sessionID: string): LatheEvent => ({ type: "session.idle", sessionID })

describe("Bus", () => {
  it.effect("delivers every event to every subscriber in publish order", () =>
    Effect.gen(function* () {
      const bus = yield* Bus
      const a = yield* bus.subscribe
      const b = yield* bus.subscribe
      const collectA = yield* a.pipe(Stream.take(100), Stream.runCollect, Effect.forkChild)
      const collectB = yield* b.pipe(Stream.take(100), Stream.runCollect, Effect.forkChild)
      for (let i = 0; i < 100; i++) yield* bus.publish(idle(`s${i}`))
      const seenA = (yield* Fiber.join(collectA)).map((event) => (event.type === "session.idle" ? event.sessionID : ""))
      const seenB = (yield* Fiber.join(collectB)).map((event) => (event.type === "session.idle" ? event.sessionID : ""))
      const expected = Array.from({ length: 100 }, (_, i) => `s${i}`)
      assert.deepStrictEqual(seenA, expected)
      assert.deepStrictEqual(seenB, expected)
    }).pipe(Effect.scoped, Effect.provide(Bus.layer))
  )

  it.effect("a subscriber sees nothing published before it subscribed", () =>
    Effect.gen(function* () {
      const bus = yield* Bus
      yield* bus.publish(idle("before"))
      const events = yield* bus.subscribe
      yield* bus.publish(idle("after"))
      const [first] = yield* events.pipe(Stream.take(1), Stream.runCollect)
      assert.deepStrictEqual(first, idle("after"))
    }).pipe(Effect.scoped, Effect.provide(Bus.layer))
  )

  it.live("listen filters by type, keeps order, and survives a throwing handler", () =>
    Effect.gen(function* () {
      const bus = yield* Bus
      const seen: Array<string> = []
      let calls = 0
      const listener = yield* bus.listen(
        (event) => {
          calls++
          if (calls === 2) throw new Error("renderer bug")
          if (event.type === "session.idle") seen.push(event.sessionID)
        },
        ["session.idle"]
      )
      yield* bus.publish(idle("1"))
      yield* bus.publish({ type: "notice", level: "info", message: "not for this listener" })
      yield* bus.publish(idle("2"))
      yield* bus.publish(idle("3"))
      yield* Effect.promise(() => waitFor(() => calls === 3))
      assert.deepStrictEqual(seen, ["1", "3"])
      yield* Effect.promise(() => listener.close())
      yield* bus.publish(idle("4"))
      yield* Effect.sleep("20 millis")
      assert.strictEqual(calls, 3)
    }).pipe(Effect.scoped, Effect.provide(Bus.layer))
  )
})

const waitFor = async (condition: () => boolean, timeoutMs = 2_000) => {
  const start = performance.now()
  while (!condition()) {
    if (performance.now() - start > timeoutMs) throw new Error("condition not met in time")
    await new Promise((resolve) => setTimeout(resolve, 2))
  }
}
