// Component tests of the interactive UI's views, rendered with Ink's test renderer and driven by Bus events
// recorded from a real `lathe run --format json` session (see fixtures/record-session-events.ts).
import { readFileSync } from "node:fs"
import type { LatheEvent } from "@lathe/plugin/schema"
import { cleanup, render } from "ink-testing-library"
import { createElement } from "react"
import { afterEach, assert, describe, it } from "vitest"
import { createStyle, stripAnsi } from "../src/style.js"
import { Lines, TranscriptPane } from "../src/tui/app.js"
import { TranscriptView } from "../src/tui/blocks.js"
import * as ed from "../src/tui/editor.js"
import { askPanel, editorPanel, footerLine, questionPanel, statusOf } from "../src/tui/panels.js"
import { Transcript } from "../src/tui/transcript.js"
import { displayWidth } from "../src/wrap.js"

const recorded: ReadonlyArray<LatheEvent> = readFileSync(
  new URL("fixtures/session-events.jsonl", import.meta.url),
  "utf8"
)
  .split("\n")
  .filter((line) => line.startsWith("{"))
  .map((line) => JSON.parse(line) as LatheEvent)

const rootID = (() => {
  const first = recorded[0]
  if (first?.type !== "session.created") throw new Error("the fixture starts with session.created")
  return first.session.id
})()

const plain = createStyle(false)
const color = createStyle(true)

/** A transcript fed the first `count` recorded events (all by default). */
const transcriptAfter = (count = recorded.length) => {
  const transcript = new Transcript(rootID)
  for (const event of recorded.slice(0, count)) transcript.apply(event)
  return transcript
}

/** The index just after the first event matching `test`. */
const after = (test: (event: LatheEvent) => boolean) => recorded.findIndex(test) + 1

const pane = (
  transcript: Transcript,
  options: { width?: number; height?: number; scroll?: number; expand?: boolean; style?: typeof plain } = {}
) =>
  render(
    createElement(TranscriptPane, {
      transcript,
      view: new TranscriptView(),
      style: options.style ?? plain,
      width: options.width ?? 80,
      height: options.height ?? 80,
      scroll: options.scroll ?? 0,
      expandReasoning: options.expand ?? false,
      frame: 0
    })
  )

afterEach(() => cleanup())

describe("transcript view (recorded session)", () => {
  it("shows the prompt, collapsed reasoning, text, every tool block with its compact result, and the markdown answer", () => {
    const frame = pane(transcriptAfter()).lastFrame() ?? ""
    assert.include(frame, "› make greet use a template string")
    assert.match(frame, /∴ The user wants a template string\. \(\+1 lines, ctrl\+r to show\)/)
    assert.notInclude(frame, "First find where greet is used")
    assert.include(frame, "Let me look around first.")
    // The subagent's call nested under its task call.
    assert.match(frame, /✓ task find greet users \(@explore\)[^\n]*\n\s+│ ✓ grep/)
    assert.match(frame, /✓ bash List files/)
    assert.include(frame, "checking")
    assert.match(frame, /✓ edit greet\.ts\s+\+1 -1/)
    assert.match(frame, /- export const greet = \(name: string\) => "Hello " \+ name/)
    assert.match(frame, /\+ export const greet = \(name: string\) => `Hello \$\{name\}`/)
    assert.include(frame, "[x] Use a template string")
    assert.include(frame, "[ ] Run the tests")
    // Markdown rendered: the heading without its hashes, bullets, the code block without fences.
    assert.match(frame, /^Done$/m)
    assert.notInclude(frame, "## Done")
    assert.include(frame, "• uses a template string")
    assert.notInclude(frame, "```")
  })

  it("ctrl+r expands reasoning", () => {
    const frame = pane(transcriptAfter(), { expand: true }).lastFrame() ?? ""
    assert.include(frame, "First find where greet is used.")
  })

  it("streams: mid-way through the events the answer so far and running tools are shown", () => {
    const running = after((e) => e.type === "tool.running" && e.tool === "bash")
    const frame = pane(transcriptAfter(running)).lastFrame() ?? ""
    assert.match(frame, /[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] bash List files/)
    assert.notInclude(frame, "Done")
  })

  it("a running subagent shows its progress under the task call", () => {
    const childCall = after((e) => e.type === "tool.completed" && e.tool === "grep")
    const transcript = transcriptAfter(childCall)
    const frame = pane(transcript).lastFrame() ?? ""
    assert.match(frame, /[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] task find greet users/)
    assert.match(frame, /│ ✓ grep/)
  })

  it("text deltas append to the part as they arrive", () => {
    const transcript = new Transcript(rootID)
    for (const event of recorded.slice(
      0,
      after((e) => e.type === "session.started")
    ))
      transcript.apply(event)
    const message = recorded.find((e) => e.type === "message.updated" && e.message.role === "assistant")
    assert.isDefined(message)
    if (message) transcript.apply(message)
    if (message?.type !== "message.updated") return
    const part = { id: "prt_stream", sessionID: rootID, messageID: message.message.id, type: "text" as const, text: "" }
    transcript.apply({ type: "part.updated", part })
    for (const delta of ["Hel", "lo, ", "**wor", "ld**"])
      transcript.apply({
        type: "part.delta",
        sessionID: rootID,
        messageID: part.messageID,
        partID: part.id,
        field: "text",
        delta
      })
    assert.include(pane(transcript).lastFrame() ?? "", "Hello, world")
  })

  it("fits any width, and has no escape codes without colour", () => {
    const transcript = transcriptAfter()
    for (const width of [40, 80, 120]) {
      const view = new TranscriptView()
      const { lines } = view.window(
        transcript,
        { width, style: color, expandReasoning: true, now: Date.now(), frame: 0 },
        500,
        0
      )
      for (const line of lines) assert.isAtMost(displayWidth(line), width, `at ${width}: ${stripAnsi(line)}`)
      const bare = view.window(
        transcript,
        { width, style: plain, expandReasoning: true, now: Date.now(), frame: 0 },
        500,
        0
      )
      assert.notInclude(bare.lines.join("\n"), "\u001b")
    }
  })

  it("draws only the window it is asked for, and scrolls back", () => {
    const transcript = transcriptAfter()
    const bottom = pane(transcript, { height: 5 }).lastFrame() ?? ""
    assert.strictEqual(bottom.split("\n").length, 5)
    assert.notInclude(bottom, "make greet")
    const top = pane(transcript, { height: 5, scroll: 200 }).lastFrame() ?? ""
    assert.include(top, "make greet use a template string")
  })

  it("undone messages are hidden until redo", () => {
    const transcript = transcriptAfter()
    const assistant = transcript.messages().find((m) => m.info.role === "assistant")
    const session = recorded.findLast((e) => e.type === "session.updated" && e.session.id === rootID)
    if (!assistant || session?.type !== "session.updated") throw new Error("fixture")
    transcript.apply({
      type: "session.updated",
      session: { ...session.session, revert: { messageID: assistant.info.id } }
    })
    const frame = pane(transcript).lastFrame() ?? ""
    assert.include(frame, "make greet")
    assert.notInclude(frame, "Let me look around first.")
  })
})

describe("permission ask panel", () => {
  const edit = recorded.find((e) => e.type === "tool.completed" && e.tool === "edit")
  const diff = edit?.type === "tool.completed" && edit.state.status === "completed" ? edit.state.metadata.diff : ""
  const ask = (id: string, callID?: string): Extract<LatheEvent, { type: "permission.asked" }> => ({
    type: "permission.asked",
    id,
    sessionID: rootID,
    ...(callID ? { callID } : {}),
    permission: "edit",
    patterns: ["greet.ts"],
    always: ["greet.ts"],
    metadata: {
      tool: "edit",
      diff,
      checks: [
        {
          permission: "edit",
          pattern: "greet.ts",
          rule: { permission: "edit", pattern: "*", action: "ask", source: "lathe.json" }
        }
      ]
    }
  })

  it("shows what is asked, why (the deciding rule), the diff and the answers; queued asks are counted", () => {
    const transcript = transcriptAfter()
    transcript.apply(ask("per_1"))
    transcript.apply(ask("per_2"))
    const lines = askPanel(
      transcript.permissions[0] ?? ask("x"),
      transcript.permissions.length,
      undefined,
      80,
      plain,
      transcript
    )
    const frame = render(createElement(Lines, { lines })).lastFrame() ?? ""
    assert.include(frame, "Permission")
    assert.include(frame, "1 of 2")
    assert.include(frame, "Permission needed: edit")
    assert.include(frame, "greet.ts")
    assert.match(frame, /why: rule edit "\*": ask \(from lathe\.json\)/)
    assert.match(frame, /- export const greet/)
    assert.include(frame, "[a]lways")
    transcript.apply({ type: "permission.replied", id: "per_1", sessionID: rootID, reply: "always" })
    assert.strictEqual(transcript.permissions.length, 1)
  })

  it("a command's escapes are shown, not obeyed: `\\e[8m` cannot hide what follows it", () => {
    const hidden = "echo hi \x1b[8m; touch pwned"
    const asked = ask("per_5")
    const lines = askPanel(
      { ...asked, permission: "bash", patterns: [hidden], metadata: { tool: "bash", command: hidden } },
      1,
      undefined,
      80,
      plain
    )
    const frame = render(createElement(Lines, { lines })).lastFrame() ?? ""
    assert.include(frame, "command: echo hi ␛[8m; touch pwned")
    assert.notInclude(frame, "\x1b")
  })

  it("a reject reason being typed replaces the answer keys", () => {
    const lines = askPanel(ask("per_3"), 1, "use the other file", 80, plain)
    const frame = render(createElement(Lines, { lines })).lastFrame() ?? ""
    assert.include(frame, "reject, because: use the other file")
  })

  it("a tool waiting on an ask says so in its block", () => {
    const running = after((e) => e.type === "tool.running" && e.tool === "edit")
    const transcript = transcriptAfter(running)
    const call = recorded[running - 1]
    if (call?.type !== "tool.running") throw new Error("fixture")
    transcript.apply(ask("per_4", call.callID))
    assert.match(pane(transcript).lastFrame() ?? "", /\? edit greet\.ts.*waiting for you/)
  })
})

describe("question panel, editor and footer", () => {
  it("a question lists its options and the answer being typed", () => {
    const lines = questionPanel(
      {
        type: "question.asked",
        id: "que_1",
        sessionID: rootID,
        questions: [
          {
            question: "Which style?",
            header: "Style",
            options: [{ label: "Template", description: "modern" }, { label: "Concat" }]
          },
          { question: "Tests too?" }
        ]
      },
      0,
      "1",
      80,
      plain
    )
    const frame = render(createElement(Lines, { lines })).lastFrame() ?? ""
    assert.include(frame, "Question 1 of 2")
    assert.include(frame, "[Style] Which style?")
    assert.include(frame, "1. Template — modern")
    assert.include(frame, "answer: 1")
  })

  it("the editor shows the placeholder, multi-line text with the cursor, and a collapsed paste", () => {
    const empty = editorPanel(ed.emptyEditor, 80, plain, { placeholder: "Ask Lathe", maxRows: 5 })
    assert.include(empty.join("\n"), "Ask Lathe")
    const multi = ed.newline(ed.insert(ed.emptyEditor, "first"))
    const lines = editorPanel(ed.insert(multi, "second"), 80, plain, { placeholder: "", maxRows: 5 })
    assert.deepStrictEqual(lines.slice(1), ["› first", "  second "])
    const pasted = ed.paste(ed.emptyEditor, Array.from({ length: 20 }, (_, i) => `line ${i}`).join("\n"))
    assert.include(
      editorPanel(pasted, 80, plain, { placeholder: "", maxRows: 5 }).join("\n"),
      "[Pasted text #1 +20 lines]"
    )
    assert.include(ed.submitText(pasted), "line 19")
  })

  it("the footer shows agent, model, context %, cost and the status: working, retrying, waiting", () => {
    const transcript = transcriptAfter()
    const info = { agent: "build", model: "env/test-model", contextUsed: 50_000, contextLimit: 200_000, cost: 0.0123 }
    const ready = footerLine({ ...info, ...statusOf(transcript, false, Date.now()) }, 80, plain)
    assert.match(ready, /^build · env\/test-model · ctx 25% · \$0\.0123 +ready$/)
    assert.strictEqual(displayWidth(ready), 80)
    transcript.apply({ type: "session.status", sessionID: rootID, status: { type: "busy" } })
    assert.match(footerLine({ ...info, ...statusOf(transcript, true, Date.now()) }, 80, plain), /working$/)
    const now = Date.now()
    transcript.apply({
      type: "session.status",
      sessionID: rootID,
      status: { type: "retry", attempt: 2, message: "429", next: now + 3_000 }
    })
    assert.match(
      footerLine({ ...info, ...statusOf(transcript, true, now) }, 80, plain),
      /retrying in 3s \(attempt 2\)$/
    )
    transcript.apply({ type: "question.asked", id: "q", sessionID: rootID, questions: [{ question: "?" }] })
    assert.match(footerLine({ ...info, ...statusOf(transcript, true, now) }, 80, plain), /waiting for you$/)
  })
})
