import type { LatheEvent } from "@lathe/core"
import { assert, describe, it } from "vitest"
import { emptyTotals, textRenderer, totalsLine } from "../src/render.js"

const session = (id: string, parentID?: string): LatheEvent => ({
  type: "session.created",
  session: {
    id,
    projectID: "p",
    directory: "/w",
    title: "t",
    time: { created: 0, updated: 0 },
    ...(parentID ? { parentID } : {})
  }
})
const text = (sessionID: string, id: string): LatheEvent => ({
  type: "part.updated",
  part: { id, sessionID, messageID: "m", type: "text", text: "", time: { start: 0 } }
})
const delta = (sessionID: string, partID: string, value: string): LatheEvent => ({
  type: "part.delta",
  sessionID,
  messageID: "m",
  partID,
  field: "text",
  delta: value
})
const tool = (sessionID: string, name: string, title: string): LatheEvent => ({
  type: "tool.completed",
  sessionID,
  messageID: "m",
  partID: `p-${name}`,
  callID: `c-${name}`,
  tool: name,
  state: { status: "completed", input: {}, output: "", title, metadata: {}, time: { start: 0, end: 12 } }
})
const step = (sessionID: string, cost: number): LatheEvent => ({
  type: "step.finished",
  sessionID,
  messageID: "m",
  step: 1,
  reason: "stop",
  tokens: { input: 10, output: 2, reasoning: 0, cache: { read: 0, write: 0 } },
  cost
})

describe("the text renderer", () => {
  it("streams the session's text, shows subagents' calls indented without their text, and totals everything", () => {
    let out = ""
    const totals = emptyTotals()
    const render = textRenderer(
      (t) => (out += t),
      () => {},
      totals
    )
    for (const event of [
      session("ses_main"),
      text("ses_main", "t1"),
      delta("ses_main", "t1", "Looking around."),
      session("ses_child", "ses_main"),
      text("ses_child", "t2"),
      delta("ses_child", "t2", "child chatter"),
      tool("ses_child", "grep", "parser"),
      step("ses_child", 0.001),
      tool("ses_main", "task", "find the parser (@explore)"),
      step("ses_main", 0.002)
    ])
      render(event)
    assert.strictEqual(out, "Looking around.\n    ✓ grep parser (12 ms)\n✓ task find the parser (@explore) (12 ms)\n")
    assert.strictEqual(
      totalsLine(totals),
      "2 steps · tokens in 20, out 4, reasoning 0, cache read 0, cache write 0 · $0.0030"
    )
  })
})
