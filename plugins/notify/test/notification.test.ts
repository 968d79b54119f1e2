import { describe, expect, it } from "@effect/vitest"
import type { LatheEvent } from "@lathe/plugin"
import { encode, sanitize, summarize } from "../src/notification.js"

const events = {
  idle: { type: "session.idle", sessionID: "s1" },
  error: { type: "session.error", sessionID: "s1", error: { name: "Unknown", message: "The model\nwent away" } },
  permission: {
    type: "permission.asked",
    id: "p1",
    sessionID: "s1",
    permission: "edit",
    patterns: ["src/a.ts", "src/b.ts"],
    always: [],
    metadata: {}
  },
  question: {
    type: "question.asked",
    id: "q1",
    sessionID: "s1",
    questions: [{ question: "Which database should I use?", header: "Database" }, { question: "Port?" }]
  }
} satisfies Record<string, LatheEvent>

describe("summarize", () => {
  it("says what each waiting event needs, on one line", () => {
    expect(summarize(events.idle)).toBe("Done: waiting for your next message")
    expect(summarize(events.error)).toBe("Failed: The model went away")
    expect(summarize(events.permission)).toBe("Permission needed: edit src/a.ts, src/b.ts")
    expect(summarize(events.question)).toBe("Question: Database (+1 more)")
  })

  it("ignores every other event and clips long summaries to 200 characters", () => {
    expect(summarize({ type: "session.deleted", sessionID: "s1" })).toBeUndefined()
    const long = summarize({ ...events.error, error: { name: "Unknown", message: "x".repeat(500) } })
    expect(long).toHaveLength(200)
    expect(long?.endsWith("…")).toBe(true)
  })
})

describe("encode", () => {
  it("produces BEL, OSC 9 and OSC 777 bytes", () => {
    expect(encode("bell", "Lathe", "Done")).toBe("\x07")
    expect(encode("osc9", "Lathe", "Done")).toBe("\x1b]9;Lathe: Done\x07")
    expect(encode("osc777", "Lathe", "Done")).toBe("\x1b]777;notify;Lathe;Done\x07")
  })

  it("never lets text end the sequence early or forge another one", () => {
    expect(sanitize("a\x07b\x1b]9;evil\u009cc")).toBe("a b ]9;evil c")
    expect(encode("osc777", "La;the", "x\x1b\\y")).toBe("\x1b]777;notify;La,the;x \\y\x07")
  })
})
