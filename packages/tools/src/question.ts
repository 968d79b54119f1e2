import { Tool } from "@lathe/plugin"
import { z } from "zod"
import { loadDescription } from "./description.js"
import { toolSchema } from "./tool-schemas.js"

/** One question as the model writes it. */
export const QuestionSchema = z.object({
  question: z.string().min(1).describe("The full question"),
  header: z.string().max(40).optional().describe("A few words naming the question"),
  options: z
    .array(z.object({ label: z.string().min(1), description: z.string().optional() }))
    .optional()
    .describe("Choices to offer; the user may also type their own answer"),
  multiple: z.boolean().optional().describe("Whether several options may be chosen")
})

/** `question` arguments. */
export const QuestionInput = z.object({ questions: z.array(QuestionSchema).min(1).max(10) })
/** `question` arguments, parsed. */
export type QuestionInput = z.infer<typeof QuestionInput>

/** The answers as the model reads them: each question, then what the user said. */
export const formatAnswers = (input: QuestionInput, answers: ReadonlyArray<ReadonlyArray<string>>): string =>
  input.questions
    .map((q, i) => {
      const answer = answers[i] ?? []
      return `${i + 1}. ${q.question}\n   Answer: ${answer.length > 0 ? answer.join(", ") : "(no answer)"}`
    })
    .join("\n")

/** Builds `question`: asks the person through the host (the CLI shows the questions and reads the answers). */
export const createQuestionTool = () =>
  Tool.define("question", {
    jsonSchema: toolSchema("question"),
    description: loadDescription("question"),
    parameters: QuestionInput,
    mutates: false,
    execute: async (input, ctx) => {
      await ctx.ask({
        permission: "question",
        patterns: ["*"],
        metadata: { questions: input.questions.map((q) => q.question) }
      })
      if (!ctx.question)
        throw new Error("This Lathe host cannot ask the user questions. Decide yourself and say what you chose.")
      const questions = input.questions.map((q) => ({
        question: q.question,
        ...(q.header !== undefined ? { header: q.header } : {}),
        ...(q.options !== undefined
          ? {
              options: q.options.map((o) => ({
                label: o.label,
                ...(o.description ? { description: o.description } : {})
              }))
            }
          : {}),
        ...(q.multiple !== undefined ? { multiple: q.multiple } : {})
      }))
      const answers = await ctx.question(questions)
      return {
        title: `${input.questions.length} question${input.questions.length === 1 ? "" : "s"} answered`,
        output: formatAnswers(input, answers),
        metadata: { answers: answers.map((a) => [...a]) }
      }
    }
  })
