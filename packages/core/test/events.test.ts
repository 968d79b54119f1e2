import { assert, describe, it } from "@effect/vitest"
import { eventTypes, LatheEvent, toolEventType } from "@lathe/plugin/schema"
import { Schema } from "effect"

describe("events", () => {
  it("names every event once, with dotted names", () => {
    assert.strictEqual(new Set(eventTypes).size, eventTypes.length)
    for (const type of eventTypes) assert.match(type, /^[a-z]+(\.[a-z]+)?$/)
    assert.includeMembers([...eventTypes], ["session.started", "step.finished", "part.updated", "tool.completed"])
  })

  it("round-trips an event through JSON and rejects an unknown type", () => {
    const event = {
      type: "session.status",
      sessionID: "ses_1",
      status: { type: "retry", attempt: 2, message: "429", next: 5 }
    } as const
    const decoded = Schema.decodeUnknownSync(LatheEvent)(JSON.parse(JSON.stringify(event)))
    assert.deepStrictEqual(decoded, event)
    assert.throws(() => Schema.decodeUnknownSync(LatheEvent)({ type: "session.exploded", sessionID: "x" }))
  })

  it("maps tool states to their lifecycle events", () => {
    assert.deepStrictEqual((["pending", "running", "completed", "error"] as const).map(toolEventType), [
      "tool.pending",
      "tool.running",
      "tool.completed",
      "tool.error"
    ])
  })
})
