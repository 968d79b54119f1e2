import type { AssistantMessage, Part, UserMessage } from "@lathe/plugin/schema"
import { assert, describe, it } from "vitest"
import type { SessionDocument } from "../src/session-document.js"
import { renderMarkdown } from "../src/session-markdown.js"
import { renderSession } from "../src/session-text.js"

// The text and Markdown renderings of a session document, from a document built by hand: what a stored error
// carries, an undone turn, cut output, and model text that tries to drive the terminal.
const model = { providerID: "local", modelID: "m" }
const user = (id: string, created: number): UserMessage => ({
  id,
  sessionID: "ses_1",
  role: "user",
  time: { created },
  agent: "build",
  model
})
const text = (id: string, messageID: string, value: string): Part => ({
  id,
  sessionID: "ses_1",
  messageID,
  type: "text",
  text: value
})
const output = Array.from({ length: 30 }, (_, i) => `row ${i + 1}`).join("\n")
const assistant: AssistantMessage = {
  id: "msg_2",
  sessionID: "ses_1",
  role: "assistant",
  parentID: "msg_1",
  agent: "build",
  model,
  path: { cwd: "/p", root: "/p" },
  time: { created: 2_000, completed: 3_500 },
  tokens: { input: 10, output: 5, reasoning: 0, cache: { read: 0, write: 0 } },
  cost: 0.001,
  error: {
    name: "DoomLoopDetected",
    message: "The same call was made 3 times in a row.",
    tool: "read",
    count: 3,
    threshold: 3,
    calls: [{ tool: "read", input: '{"filePath":"a.ts"}' }],
    suggestion: "Tell it what to do differently."
  }
}
const doc: SessionDocument = {
  format: "lathe.session",
  version: 1,
  session: {
    id: "ses_1",
    projectID: "prj",
    directory: "/p",
    title: "Fix\nthe loop",
    time: { created: 1_000, updated: 9_000 },
    revert: { messageID: "msg_3" }
  },
  messages: [
    { info: user("msg_1", 1_000), parts: [{ part: text("prt_1", "msg_1", "go") }] },
    {
      info: assistant,
      parts: [
        { part: text("prt_2", "msg_2", "\x1b]0;owned\x07Hello \x1b[31mthere\x1b[0m") },
        {
          part: {
            id: "prt_3",
            sessionID: "ses_1",
            messageID: "msg_2",
            type: "tool",
            callID: "call_1",
            tool: "bash",
            state: {
              status: "completed",
              input: { command: "seq 30" },
              output: `${output}\n\`\`\`\nend`,
              title: "seq 30",
              metadata: {},
              time: { start: 2_100, end: 2_350 }
            }
          },
          decisions: [
            {
              time: 2_100,
              sessionID: "ses_1",
              callID: "call_1",
              permission: "bash",
              pattern: "seq 30",
              decision: "once",
              by: "reply"
            }
          ]
        }
      ]
    },
    { info: user("msg_3", 4_000), parts: [{ part: text("prt_4", "msg_3", "then this") }] }
  ],
  subagents: []
}

describe("session text", () => {
  it("prints what a stored error carries, marks the undone turn, cuts long output, and strips escape sequences", () => {
    const out = renderSession(doc)
    assert.include(out, "Session ses_1 · Fix the loop")
    assert.include(out, "  ✗ DoomLoopDetected: The same call was made 3 times in a row.")
    assert.include(out, "  ✗   threshold: 3")
    assert.include(out, '  ✗     - read {"filePath":"a.ts"}')
    assert.include(out, "  ✗   suggestion: Tell it what to do differently.")
    assert.include(out, "◀ build · local/m")
    assert.include(out, "· 1.5 s")
    assert.include(out, "✓ bash seq 30 · completed · 250 ms")
    assert.include(out, 'permission: bash "seq 30": once by reply')
    assert.include(out, "│ row 12\n")
    assert.include(out, "… 20 more lines (--full shows all)")
    assert.notInclude(out, "row 13")
    assert.include(out, "Hello there")
    assert.notInclude(out, "\x1b")
    assert.notInclude(out, "\x07")
    const [before, after] = out.split("then this")
    assert.include(before?.split("▶ you").at(-1) ?? "", "undone (lathe redo brings it back)")
    assert.notInclude(before?.split("▶ you")[1] ?? "", "undone")
    assert.isDefined(after)
    assert.include(renderSession(doc, { full: true }), "row 30")
  })

  it("Markdown keeps everything, fences output that holds backticks, and strips escape sequences", () => {
    const md = renderMarkdown(doc)
    assert.match(md, /^# Fix the loop\n/)
    assert.include(md, "row 30")
    assert.include(md, "````\nrow 1\n")
    assert.include(md, "**Error** DoomLoopDetected: The same call was made 3 times in a row.")
    assert.include(md, "- undone from message `msg_3` on")
    assert.notInclude(md, "\x1b")
  })
})
