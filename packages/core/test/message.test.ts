import { assert, describe, it } from "@effect/vitest"
import { type AssistantMessage, Message, MessageWithParts, Part, Session, ToolState } from "@lathe/plugin/schema"
import { Schema } from "effect"

const ids = { sessionID: "ses_1", messageID: "msg_1" }
const tokens = { input: 10, output: 5, reasoning: 2, cache: { read: 100, write: 0 } }

/** One valid example of every part type, including every tool state. */
const parts: ReadonlyArray<Part> = [
  { ...ids, id: "prt_01", type: "text", text: "héllo 👋", time: { start: 1, end: 2 } },
  { ...ids, id: "prt_02", type: "reasoning", text: "thinking", time: { start: 1 }, metadata: { signature: "x" } },
  {
    ...ids,
    id: "prt_03",
    type: "tool",
    callID: "c1",
    tool: "read",
    state: { status: "pending", input: {}, raw: '{"fi' }
  },
  {
    ...ids,
    id: "prt_04",
    type: "tool",
    callID: "c2",
    tool: "bash",
    state: { status: "running", input: { command: "ls" }, title: "ls", time: { start: 3 } }
  },
  {
    ...ids,
    id: "prt_05",
    type: "tool",
    callID: "c3",
    tool: "read",
    state: {
      status: "completed",
      input: { filePath: "a.ts" },
      output: "1: x",
      title: "a.ts",
      metadata: { truncated: false },
      attachments: [{ mime: "image/png", url: "data:image/png;base64,AA==" }],
      time: { start: 3, end: 4 }
    }
  },
  {
    ...ids,
    id: "prt_06",
    type: "tool",
    callID: "c4",
    tool: "edit",
    state: { status: "error", input: {}, error: "aborted", time: { start: 3, end: 4 } }
  },
  { ...ids, id: "prt_07", type: "step-start", snapshot: "abc123" },
  { ...ids, id: "prt_08", type: "step-finish", reason: "tool-calls", tokens, cost: 0.0012 },
  { ...ids, id: "prt_09", type: "patch", hash: "abc123", files: ["src/a.ts"] },
  { ...ids, id: "prt_10", type: "file", mime: "text/plain", url: "file:///a.txt", filename: "a.txt" },
  { ...ids, id: "prt_11", type: "subtask", agent: "explore", description: "find", prompt: "find x" },
  { ...ids, id: "prt_12", type: "compaction", auto: true },
  { ...ids, id: "prt_13", type: "retry", attempt: 2, message: "429", time: { created: 5 } },
  { ...ids, id: "prt_14", type: "agent", name: "plan" }
]

const assistant: AssistantMessage = {
  id: "msg_2",
  sessionID: "ses_1",
  role: "assistant",
  parentID: "msg_1",
  agent: "build",
  model: { providerID: "local", modelID: "qwen" },
  path: { cwd: "/w", root: "/w" },
  time: { created: 1, completed: 9 },
  tokens,
  cost: 0.5,
  finish: "stop",
  error: {
    name: "ProviderError",
    message: "Rate limited",
    providerID: "local",
    modelID: "qwen",
    reason: { _tag: "RateLimited", retryAfterMs: 2000 }
  }
}

const roundTrip = <S extends Schema.Codec<unknown, unknown>>(schema: S, value: unknown) =>
  Schema.decodeUnknownSync(schema as Schema.Codec<unknown, unknown>)(JSON.parse(JSON.stringify(value)))

describe("message model", () => {
  it("round-trips every part type and tool state through JSON", () => {
    for (const part of parts) assert.deepStrictEqual(roundTrip(Part, part), part)
    assert.deepStrictEqual(new Set(parts.map((p) => p.type)).size, 11)
  })

  it("round-trips sessions and messages with their parts", () => {
    const session: Session = {
      id: "ses_1",
      projectID: "p",
      directory: "/w",
      title: "t",
      time: { created: 1, updated: 2 },
      revert: { messageID: "msg_2", snapshot: "h" }
    }
    assert.deepStrictEqual(roundTrip(Session, session), session)
    assert.deepStrictEqual(roundTrip(Message, assistant), assistant)
    const withParts = { info: assistant, parts }
    assert.deepStrictEqual(roundTrip(MessageWithParts, withParts), withParts)
  })

  it("rejects malformed parts", () => {
    const bad: ReadonlyArray<unknown> = [
      { ...ids, id: "p", type: "text" }, // no text
      { ...ids, id: "p", type: "paragraph", text: "x" }, // unknown type
      { ...ids, id: "p", type: "tool", callID: "c", tool: "read", state: { status: "done", input: {} } },
      {
        ...ids,
        id: "p",
        type: "tool",
        callID: "c",
        tool: "read",
        state: { status: "completed", input: {}, output: "x" }
      },
      { ...ids, id: "p", type: "step-finish", reason: "stop", tokens: { input: 1 }, cost: 0 },
      { ...ids, type: "compaction", auto: true } // no id
    ]
    for (const value of bad) assert.throws(() => Schema.decodeUnknownSync(Part)(value))
    assert.throws(() => Schema.decodeUnknownSync(ToolState)({ status: "running", input: {} })) // no time
  })

  it("rejects a message with an unknown role or a malformed error", () => {
    assert.throws(() => Schema.decodeUnknownSync(Message)({ ...assistant, role: "system" }))
    assert.throws(() => Schema.decodeUnknownSync(Message)({ ...assistant, error: { name: "Oops", message: "x" } }))
  })
})
