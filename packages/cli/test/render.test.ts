import type { LatheEvent } from "@lathe/plugin/schema"
import { assert, describe, it } from "vitest"
import { liveLine } from "../src/live-line.js"
import { emptyTotals, type TextRendererOptions, textRenderer, totalsLine } from "../src/render.js"
import { createStyle, stripAnsi } from "../src/style.js"
import { answerMarkdown } from "../src/tui/answer-markdown.js"

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

const failed = (name: string, error: string, input: Record<string, unknown>): LatheEvent => ({
  type: "tool.error",
  sessionID: "ses",
  messageID: "m",
  partID: `p-${name}`,
  callID: `c-${name}`,
  tool: name,
  state: { status: "error", input, error, time: { start: 0, end: 404 } }
})
/** A text part of session "ses" arriving in chunks of 3 characters, then ending. */
const answer = (value: string): Array<LatheEvent> => {
  const chunks = value.match(/[\s\S]{1,3}/g) ?? []
  return [
    text("ses", "t"),
    ...chunks.map((chunk) => delta("ses", "t", chunk)),
    {
      type: "part.updated",
      part: { id: "t", sessionID: "ses", messageID: "m", type: "text", text: value, time: { start: 0, end: 1 } }
    }
  ]
}
/** A renderer with no options: what a pipe gets. */
const plain = () => {
  let out = ""
  const render = textRenderer(
    (t) => (out += t),
    () => {},
    emptyTotals()
  )
  return { out: () => out, render }
}

describe("the text renderer", () => {
  it("shows a plain answer without its trailing whitespace, keeping whitespace between words and lines", () => {
    const { out, render } = plain()
    for (const event of answer("Fixed it.  \nTwo lines \n\n  \t\n")) render(event)
    assert.strictEqual(out(), "Fixed it.  \nTwo lines\n")
  })

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
    assert.strictEqual(totalsLine(totals), "2 steps · tokens in 20, out 4 · $0.0030")
  })

  it("shows ✗ with why for a command that exited non-zero, timed out or was killed, and for a failed call", () => {
    const { out, render } = plain()
    const bash = (metadata: Record<string, unknown>, title = "Run the tests"): LatheEvent => ({
      type: "tool.completed",
      sessionID: "ses",
      messageID: "m",
      partID: "p-bash",
      callID: "c-bash",
      tool: "bash",
      state: {
        status: "completed",
        input: { command: "npm test", description: title },
        output: "",
        title,
        metadata,
        time: { start: 0, end: 5300 }
      }
    })
    render(bash({ exitCode: 0, signal: null, timedOut: false }))
    render(bash({ exitCode: 1, signal: null, timedOut: false }))
    render(bash({ exitCode: null, signal: "SIGKILL", timedOut: true }))
    render(bash({ exitCode: null, signal: "SIGTERM", timedOut: false }))
    render(failed("bash", "aborted", { command: "sleep 30", description: "Wait" }))
    render(failed("read", "File not found: a.txt\nDid you mean b.txt?", { filePath: "a.txt" }))
    assert.strictEqual(
      out(),
      [
        "✓ bash Run the tests (5.3 s)",
        "✗ bash Run the tests (5.3 s): exit 1",
        "✗ bash Run the tests (5.3 s): timed out",
        "✗ bash Run the tests (5.3 s): killed by SIGTERM",
        "✗ bash Wait (404 ms): interrupted",
        "✗ read (404 ms): File not found: a.txt",
        ""
      ].join("\n")
    )
  })

  it("names an MCP tool once (its result is titled with its own name), and keeps other titles", () => {
    const { out, render } = plain()
    render(tool("ses", "everything_echo", "everything_echo"))
    render(tool("ses", "everything_progress", "step 2 of 3"))
    assert.strictEqual(out(), "✓ everything_echo (12 ms)\n✓ everything_progress step 2 of 3 (12 ms)\n")
  })

  it("leaves zero fields out of the totals: no reasoning, no cache, no cost when it is unknown", () => {
    const totals = emptyTotals()
    assert.strictEqual(totalsLine(totals), "0 steps")
    totals.steps = 1
    totals.tokens = { input: 1200, output: 30, reasoning: 0, cache: { read: 0, write: 0 } }
    assert.strictEqual(totalsLine(totals), "1 step · tokens in 1,200, out 30")
    totals.tokens = { input: 1200, output: 30, reasoning: 7, cache: { read: 1000, write: 0 } }
    totals.cost = 0.01234
    assert.strictEqual(totalsLine(totals), "1 step · tokens in 1,200, out 30, reasoning 7, cache read 1,000 · $0.0123")
    totals.tokens = { input: 0, output: 0, reasoning: 0, cache: { read: 0, write: 5 } }
    assert.strictEqual(totalsLine(totals), "1 step · tokens cache write 5 · $0.0123")
  })

  it("piped, the answer streams as it comes, Markdown and all, with no escape codes", () => {
    const { out, render } = plain()
    for (const event of answer("# Title\n\nSome **bold** text.\n\n```js\nconst a = 1\n```\n")) render(event)
    assert.strictEqual(out(), "# Title\n\nSome **bold** text.\n\n```js\nconst a = 1\n```\n")
  })

  it("the model's escapes and control characters are removed from its text, piped or at a terminal", () => {
    let out = ""
    const render = textRenderer(
      (t) => (out += t),
      () => {},
      emptyTotals()
    )
    // Arriving 3 characters at a time, the escapes are split across deltas: each lone ESC, BEL and CR goes, and what
    // is left of the sequences is harmless text.
    for (const event of answer("plain \x1b[2J\x1b]0;pwned\x07text\rover\n")) render(event)
    assert.strictEqual(out, "plain J0;pwnedtextover\n")
  })

  it("on a terminal, the answer is terminal Markdown, printed a block at a time as each block completes", () => {
    let out = ""
    const render = textRenderer(
      (t) => (out += t),
      () => {},
      emptyTotals(),
      {
        style: createStyle(true),
        markdown: answerMarkdown(createStyle(true)),
        columns: () => 60
      }
    )
    const events = answer("# Title\n\nSome **bold** text\nand more.\n\n- one\n- two\n\n```js\nconst a = 1\n```")
    const shown: Array<string> = []
    for (const event of events) {
      render(event)
      shown.push(stripAnsi(out))
    }
    // After "# Title\n" the heading is complete: it shows before the paragraph has finished arriving.
    const headingAt = shown.findIndex((s) => s.includes("Title"))
    const paragraphAt = shown.findIndex((s) => s.includes("Some bold text and more."))
    assert.isAbove(headingAt, -1)
    assert.isAbove(paragraphAt, headingAt)
    assert.notInclude(shown[paragraphAt - 1] ?? "", "Some")
    render.finish()
    assert.strictEqual(stripAnsi(out), "Title\n\nSome bold text and more.\n\n• one\n• two\n\n  js\n  const a = 1\n")
    assert.include(out, "\x1b[1m") // bold, for the heading and **bold**
    assert.notInclude(out, "**")
    assert.notInclude(out, "# ")
  })
})

describe("the text renderer with its terminal parts given later", () => {
  it("holds the model's text and what follows until they come, then shows it all in order as Markdown", async () => {
    let out = ""
    let give: (late: Pick<TextRendererOptions, "markdown">) => void = () => {}
    const later = new Promise<Pick<TextRendererOptions, "markdown">>((resolve) => {
      give = resolve
    })
    const render = textRenderer(
      (t) => (out += t),
      () => {},
      emptyTotals(),
      { style: createStyle(true), columns: () => 60, later }
    )
    render(session("ses"))
    for (const event of answer("# Title\n\nSome **bold** text.\n")) render(event)
    render(tool("ses", "read", "a.txt"))
    assert.strictEqual(out, "", "nothing of the answer shows before the Markdown renderer has come")
    give({ markdown: answerMarkdown(createStyle(true)) })
    await render.ready
    render(tool("ses", "grep", "b"))
    render.finish()
    assert.strictEqual(stripAnsi(out), "Title\n\nSome bold text.\n✓ read a.txt (12 ms)\n✓ grep b (12 ms)\n")
    assert.notInclude(out, "**")
  })

  it("shows what it held plainly when the run ends before they come", () => {
    let out = ""
    const render = textRenderer(
      (t) => (out += t),
      () => {},
      emptyTotals(),
      { later: new Promise(() => {}) }
    )
    render(session("ses"))
    for (const event of answer("Some **bold** text.\n")) render(event)
    assert.strictEqual(out, "")
    render.finish()
    assert.strictEqual(out, "Some **bold** text.\n")
  })
})

describe("the live line", () => {
  it("draws the text in place at the start of a line, cut to the width, and erases it before other output", async () => {
    let out = ""
    let text: string | undefined = "bash Run a very long command description that does not fit · 3s"
    let atLineStart = true
    const live = liveLine((t) => (out += t), {
      text: (spinner) => (text === undefined ? undefined : `${spinner} ${text}`),
      columns: () => 30,
      atLineStart: () => atLineStart,
      intervalMs: 5
    })
    await new Promise((resolve) => setTimeout(resolve, 40))
    const drawn = out
    assert.isTrue(drawn.startsWith("\r⠋ bash Run a very long comma…\x1b[K"), JSON.stringify(drawn))
    assert.isAtMost(stripAnsi(drawn.split("\r")[1] ?? "").length, 29)
    live.clear()
    assert.isTrue(out.endsWith("\r\x1b[2K"))
    // Mid-line (text being streamed), nothing is drawn over it.
    atLineStart = false
    out = ""
    await new Promise((resolve) => setTimeout(resolve, 30))
    assert.strictEqual(out, "")
    atLineStart = true
    text = undefined
    await new Promise((resolve) => setTimeout(resolve, 30))
    assert.strictEqual(out, "")
    text = "bash · 4s"
    await new Promise((resolve) => setTimeout(resolve, 30))
    live.stop()
    assert.include(out, "bash · 4s")
    assert.isTrue(out.endsWith("\r\x1b[2K"))
    const after = out
    await new Promise((resolve) => setTimeout(resolve, 30))
    assert.strictEqual(out, after, "stopped: no more redraws")
  })
})
