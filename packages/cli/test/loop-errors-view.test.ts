// How the interactive session shows a turn the loop ended: a stopped doom loop (threshold, repeated call, what to do)
// and the step cap (how many steps ran, how to go on), from the events the loop publishes.

import { doomLoopReport, stepLimitError } from "@lathe/core"
import type { AssistantMessage, LatheEvent, UserMessage } from "@lathe/plugin/schema"
import { cleanup, render } from "ink-testing-library"
import { createElement } from "react"
import { afterEach, assert, describe, it } from "vitest"
import { createStyle } from "../src/style.js"
import { TranscriptPane } from "../src/tui/app.js"
import { TranscriptView } from "../src/tui/blocks.js"
import { Transcript } from "../src/tui/transcript.js"

afterEach(() => cleanup())

const sessionID = "ses_1"
const model = { providerID: "env", modelID: "m" }
const user: UserMessage = { id: "msg_1", sessionID, role: "user", time: { created: 1 }, agent: "build", model }
const assistant = (error: AssistantMessage["error"]): AssistantMessage => ({
  id: "msg_2",
  sessionID,
  role: "assistant",
  parentID: user.id,
  agent: "build",
  model,
  path: { cwd: "/p", root: "/p" },
  time: { created: 2, completed: 3 },
  tokens: { input: 0, output: 0, reasoning: 0, cache: { read: 0, write: 0 } },
  cost: 0,
  ...(error ? { error } : {})
})

const frameOf = (error: AssistantMessage["error"]) => {
  const transcript = new Transcript(sessionID)
  const events: ReadonlyArray<LatheEvent> = [
    { type: "message.updated", message: user },
    { type: "message.updated", message: assistant(error) }
  ]
  for (const event of events) transcript.apply(event)
  return (
    render(
      createElement(TranscriptPane, {
        transcript,
        view: new TranscriptView(),
        style: createStyle(false),
        width: 100,
        height: 40,
        scroll: 0,
        expandReasoning: false,
        frame: 0
      })
    ).lastFrame() ?? ""
  )
}

describe("the interactive session shows why the loop stopped", () => {
  it("a doom loop: the threshold, the repeated call and the suggestion", () => {
    const input = '{"filePath":"a.txt"}'
    const report = doomLoopReport(
      "read",
      3,
      3,
      [1, 2, 3].map(() => ({ tool: "read", input }))
    )
    const frame = frameOf({ name: "DoomLoopDetected", ...report, calls: [...report.calls] })
    assert.include(frame, "called read 3 times in a row")
    assert.include(frame, "threshold")
    assert.include(frame, `Repeated call (×3): read ${input}`)
    assert.include(frame, "doom_loop.ignored_tools")
  })

  it("the step cap: how many steps ran and how to go on", () => {
    const frame = frameOf(stepLimitError(200))
    assert.include(frame, "Stopped after 200 steps")
    assert.include(frame, 'lathe run -c "continue"')
  })
})
