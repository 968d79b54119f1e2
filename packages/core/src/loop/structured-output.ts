import type { AssistantMessage, MessageError, MessageWithParts } from "@lathe/plugin/schema"
import type { JSONSchema7 } from "ai"
import { Clock, Effect } from "effect"
import { z } from "zod"
import type { Bus } from "../contracts/bus.js"
import type { SessionStore, StoreError } from "../store/session-store.js"
import type { SessionWriter } from "../store/session-writer.js"

/**
 * A turn's output schema (`lathe run --output-schema`): the JSON Schema its final answer must be a JSON value of,
 * and the validator built from it once.
 */
export interface OutputSchema {
  /** The JSON Schema as given. */
  readonly schema: Readonly<Record<string, unknown>>
  /** The errors of `value` against the schema, one line each (`path: what is wrong`); empty when it conforms. */
  readonly validate: (value: unknown) => ReadonlyArray<string>
}

/** How many times a final answer that does not conform is sent back with its errors before the turn fails. */
export const MAX_OUTPUT_RESENDS = 2

const issuePath = (path: ReadonlyArray<PropertyKey>): string =>
  path.length === 0
    ? "(the whole value)"
    : path
        .map((key) => (typeof key === "number" ? `[${key}]` : `.${String(key)}`))
        .join("")
        .replace(/^\./, "")

/**
 * Builds the validator of a JSON Schema (an object, as read from the file); a string says what is wrong with it (an
 * unsupported type or keyword).
 */
export const compileOutputSchema = (schema: unknown): OutputSchema | string => {
  if (typeof schema !== "object" || schema === null || Array.isArray(schema))
    return 'a JSON Schema is an object (for example { "type": "object", "properties": { … } })'
  try {
    const checker = z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0])
    return {
      schema: schema as Record<string, unknown>,
      validate: (value) => {
        const result = checker.safeParse(value)
        return result.success ? [] : result.error.issues.map((issue) => `${issuePath(issue.path)}: ${issue.message}`)
      }
    }
  } catch (error) {
    return error instanceof Error ? error.message : String(error)
  }
}

/** The answer's JSON text: the whole answer, or the one fenced block it is wrapped in (```json … ```). */
const jsonText = (text: string): string => {
  const trimmed = text.trim()
  const fenced = /^```[a-zA-Z]*\n([\s\S]*?)\n?```$/.exec(trimmed)
  return fenced?.[1]?.trim() ?? trimmed
}

/** What a final answer came to against the schema: the JSON value that conforms, or the errors to send back. */
export type AnswerCheck =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly errors: ReadonlyArray<string> }

/** Checks a final answer's text: one JSON value (a fenced block allowed) that validates against the schema. */
export const checkAnswer = (schema: OutputSchema, text: string): AnswerCheck => {
  let value: unknown
  try {
    // Parsed only to be validated against the schema below, never used before.
    value = JSON.parse(jsonText(text))
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error)
    return { ok: false, errors: [`the answer is not a JSON value (${why})`] }
  }
  const errors = schema.validate(value)
  return errors.length === 0 ? { ok: true, value } : { ok: false, errors }
}

/** The final answer's text: the message's own text parts (not the notes Lathe added). */
export const answerText = (message: MessageWithParts): string =>
  message.parts.flatMap((part) => (part.type === "text" && !part.synthetic ? [part.text] : [])).join("\n")

/**
 * The schema as a provider's native structured output takes it: only an object at the root (what OpenAI's and
 * Anthropic's formats accept); another shape is asked for in words alone.
 */
export const nativeSchema = (schema: OutputSchema): JSONSchema7 | undefined =>
  schema.schema.type === "object" ? (schema.schema as JSONSchema7) : undefined

/** The system text that asks for the answer in the schema's shape. */
export const outputInstructions = (schema: OutputSchema): string =>
  "Your final answer (the message that ends your turn, after any tool calls) must be exactly one JSON value that " +
  "validates against the JSON Schema below: no prose, no Markdown, nothing before or after it.\n\n" +
  JSON.stringify(schema.schema, null, 2)

/** The message sending a non-conforming answer back to the model. */
export const resendText = (errors: ReadonlyArray<string>): string =>
  "Your final answer does not validate against the required JSON Schema:\n" +
  errors.map((error) => `- ${error}`).join("\n") +
  "\nAnswer again with only the corrected JSON value: no prose, no Markdown fences."

/** The `OutputSchemaMismatch` error of a final answer that still did not conform. */
export const mismatchError = (errors: ReadonlyArray<string>, resent: number): MessageError => ({
  name: "OutputSchemaMismatch",
  errors: [...errors],
  message:
    `The final answer does not validate against the output schema${resent > 0 ? ` (sent back ${resent} time${resent === 1 ? "" : "s"} with the errors)` : ""}: ` +
    errors.join("; ")
})

/** Records the conforming value on the turn's last message. */
export const recordStructured = (writer: SessionWriter["Service"], message: AssistantMessage, value: unknown) =>
  Effect.gen(function* () {
    const ended: AssistantMessage = { ...message, structured: value }
    yield* writer.putMessage(ended)
    return ended
  })

/** Ends the turn with `OutputSchemaMismatch` on its last message, announced as `session.error`. */
export const recordMismatch = (
  writer: SessionWriter["Service"],
  bus: Bus["Service"],
  message: AssistantMessage,
  errors: ReadonlyArray<string>,
  resent: number
) =>
  Effect.gen(function* () {
    const error = mismatchError(errors, resent)
    const ended: AssistantMessage = {
      ...message,
      error,
      time: { ...message.time, completed: message.time.completed ?? (yield* Clock.currentTimeMillis) }
    }
    yield* writer.putMessage(ended)
    yield* bus.publish({ type: "session.error", sessionID: message.sessionID, error })
    return ended
  })

/**
 * The turn's final answer against its output schema: recorded as the structured value when it conforms; otherwise
 * sent back with its errors (`sendBack` stores them as the person's next message; `resent` true), up to
 * {@link MAX_OUTPUT_RESENDS} times, then the turn fails with the errors. A turn that stopped on a refused call (its
 * last step ended in tool calls) fails at once.
 */
export const checkFinal = Effect.fnUntraced(function* (
  services: {
    readonly store: SessionStore["Service"]
    readonly writer: SessionWriter["Service"]
    readonly bus: Bus["Service"]
  },
  schema: OutputSchema,
  message: AssistantMessage,
  resent: number,
  sendBack: (text: string) => Effect.Effect<void, StoreError>
) {
  const { store, writer, bus } = services
  if (message.finish === "tool-calls") {
    const stopped = "the turn stopped on a tool call that was refused, before a final answer"
    return { message: yield* recordMismatch(writer, bus, message, [stopped], resent), resent: false }
  }
  const stored = yield* store.getMessage(message.sessionID, message.id)
  const checked = checkAnswer(schema, answerText(stored))
  if (checked.ok) return { message: yield* recordStructured(writer, message, checked.value), resent: false }
  if (resent < MAX_OUTPUT_RESENDS) {
    yield* sendBack(resendText(checked.errors))
    return { message, resent: true }
  }
  return { message: yield* recordMismatch(writer, bus, message, checked.errors, resent), resent: false }
})
