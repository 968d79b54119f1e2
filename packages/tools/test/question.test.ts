import { describe, expect, it } from "@effect/vitest"
import { QuestionDismissed, type QuestionItem } from "@lathe/plugin"
import { createQuestionTool } from "../src/question.js"
import { harness, run, runError } from "./helpers.js"

const input = {
  questions: [
    { header: "Database", question: "Which database?", options: [{ label: "SQLite" }, { label: "Postgres" }] },
    { question: "Anything else?" }
  ]
}

describe("question", () => {
  it("asks the question permission, passes the questions to the host, and returns the answers", async () => {
    const h = harness()
    const seen: Array<ReadonlyArray<QuestionItem>> = []
    const out = await run(
      createQuestionTool(),
      input,
      h.ctx({
        question: async (questions) => {
          seen.push(questions)
          return [["Postgres"], ["Keep it simple"]]
        }
      })
    )
    expect(h.asks).toEqual([
      { permission: "question", patterns: ["*"], metadata: { questions: ["Which database?", "Anything else?"] } }
    ])
    expect(seen[0]?.[0]).toEqual({
      header: "Database",
      question: "Which database?",
      options: [{ label: "SQLite" }, { label: "Postgres" }]
    })
    expect(out.output).toBe("1. Which database?\n   Answer: Postgres\n2. Anything else?\n   Answer: Keep it simple")
    expect(out.title).toBe("2 questions answered")
    expect(createQuestionTool().mutates).toBe(false)
  })

  it("a denied permission (the default) tells the model to decide itself", async () => {
    const h = harness()
    h.mode = "deny"
    const error = await runError(createQuestionTool(), input, h.ctx({ question: async () => [] }))
    expect(error._tag).toBe("PermissionDenied")
    expect(error.message).toContain('Permission "question" is denied')
  })

  it("a host that cannot ask, and a dismissal, are errors the model can act on", async () => {
    const h = harness()
    const noHost = await runError(createQuestionTool(), input, h.ctx())
    expect(noHost.message).toBe(
      "This Lathe host cannot ask the user questions. Decide yourself and say what you chose."
    )
    const dismissed = await runError(
      createQuestionTool(),
      input,
      h.ctx({
        question: async () => {
          throw new QuestionDismissed({ message: "The user dismissed the questions without answering." })
        }
      })
    )
    expect(dismissed.message).toBe("The user dismissed the questions without answering.")
  })
})
