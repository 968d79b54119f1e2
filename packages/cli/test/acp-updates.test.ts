import type { AssistantMessage } from "@lathe/plugin/schema"
import { assert, describe, it } from "vitest"
import { diffContent, planOf, stopReason, toolKind, toolLocations } from "../src/acp/updates.js"

// How Lathe's parts and turn endings read as ACP updates (the pure half of `lathe acp`; acp.e2e.test.ts drives the
// whole of it).

const answer = (fields: Partial<AssistantMessage>): AssistantMessage => ({ ...(fields as AssistantMessage) })

describe("acp updates", () => {
  it("maps a turn's end to the protocol's stop reasons", () => {
    assert.strictEqual(stopReason(answer({ finish: "stop" }), false), "end_turn")
    assert.strictEqual(stopReason(answer({ finish: "length" }), false), "max_tokens")
    assert.strictEqual(stopReason(answer({ finish: "content-filter" }), false), "refusal")
    assert.strictEqual(
      stopReason(answer({ error: { name: "StepLimit", message: "cap", steps: 3 } }), false),
      "max_turn_requests"
    )
    assert.strictEqual(stopReason(answer({ error: { name: "Aborted", message: "stop" } }), false), "cancelled")
    assert.strictEqual(stopReason(answer({ finish: "stop" }), true), "cancelled")
    // A failure is a JSON-RPC error with its message, not a stop reason.
    assert.isUndefined(stopReason(answer({ error: { name: "Unknown", message: "boom" } }), false))
  })

  it("splits a unified diff into old and new text per file; a new file has none old", () => {
    const diff = [
      "Index: a.txt",
      "===================================================================",
      "--- a.txt",
      "+++ a.txt",
      "@@ -1,3 +1,3 @@",
      " keep",
      "-hello",
      "--- not a header",
      "+goodbye",
      "+++ nor this",
      "--- b.txt",
      "+++ b.txt",
      "@@ -0,0 +1,1 @@",
      "+new file"
    ].join("\n")
    assert.deepEqual(diffContent(diff, "/p"), [
      {
        type: "diff",
        path: "/p/a.txt",
        oldText: "keep\nhello\n-- not a header",
        newText: "keep\ngoodbye\n++ nor this"
      },
      { type: "diff", path: "/p/b.txt", oldText: null, newText: "new file" }
    ])
  })

  it("gives kinds, absolute locations and the todo list as a plan", () => {
    assert.strictEqual(toolKind("apply_patch"), "edit")
    assert.strictEqual(toolKind("bash"), "execute")
    assert.strictEqual(toolKind("grep"), "search")
    assert.strictEqual(toolKind("github_create_issue"), "other")
    assert.deepEqual(
      toolLocations(
        "read",
        { status: "running", input: { filePath: "src/a.ts", offset: 40 }, time: { start: 0 } },
        "/p"
      ),
      [{ path: "/p/src/a.ts", line: 40 }]
    )
    const plan = planOf({
      tool: "todowrite",
      state: {
        status: "completed",
        input: {},
        output: "",
        title: "",
        metadata: { todos: [{ content: "Dropped", status: "cancelled", priority: "low" }] },
        time: { start: 0, end: 0 }
      }
    })
    assert.deepEqual(plan, {
      sessionUpdate: "plan",
      entries: [{ content: "Dropped", status: "completed", priority: "low" }]
    })
  })
})
