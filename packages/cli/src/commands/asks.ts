import { createInterface } from "node:readline/promises"
import type { PendingAsk, PermissionReply } from "@lathe/core"
import { describeAsk, isPersonOnly, personOnlyMessage } from "@lathe/permission"
import type { LatheEvent } from "@lathe/plugin/schema"
import type { Backend } from "../backend.js"
import type { CliIO } from "../io.js"
import { plainText, visibleText } from "../terminal-text.js"

/** A permission ask as the front-ends see it. */
export type PermissionAskedEvent = Extract<LatheEvent, { type: "permission.asked" }>

/** A tool's questions as the front-ends see them. */
export type QuestionAskedEvent = Extract<LatheEvent, { type: "question.asked" }>

/** The events a front-end answers: a permission ask, or a tool's questions. */
export type AskEvent = PermissionAskedEvent | QuestionAskedEvent

const errorText = (error: unknown): string =>
  typeof error === "object" && error !== null && "message" in error && typeof error.message === "string"
    ? error.message
    : String(error)

/**
 * Whether a blanket `--yes` may allow this ask without a person: never for an ask only a person may approve (a rerun
 * outside the sandbox, a write to a protected path, a command Lathe cannot know statically while deny rules exist).
 * The one place that decides it, for every front-end.
 */
export const mayAutoApprove = (event: PermissionAskedEvent, yes: boolean): boolean => yes && !isPersonOnly(event)

/**
 * Answers one permission ask through `send` (the local engine, or a server over HTTP): `--yes` allows it, a terminal
 * asks the person, anything else rejects it. An ask only a person may approve ({@link mayAutoApprove}) is never
 * allowed by `--yes`: a terminal asks the person; without one it is rejected and the model is told why and what to do
 * instead.
 */
export const answerAsk = async (
  event: PermissionAskedEvent,
  send: (reply: PermissionReply) => Promise<void>,
  io: CliIO,
  yes: boolean
): Promise<"answered" | "rejected-no-terminal"> => {
  const reply = async (value: PermissionReply) => {
    await send(value)
    return "answered" as const
  }
  if (mayAutoApprove(event, yes)) return reply({ type: "once", by: "yes" })
  const ask: PendingAsk = {
    id: event.id,
    sessionID: event.sessionID,
    permission: event.permission,
    patterns: event.patterns,
    always: event.always,
    metadata: event.metadata,
    ...(event.callID ? { callID: event.callID } : {})
  }
  const input = io.stdinIsTTY ? io.stdin : undefined
  if (!input && isPersonOnly(event)) {
    io.stderr(
      `lathe: rejected ${/^[aeiou]/.test(event.permission) ? "an" : "a"} ${event.permission} ask (${visibleText(event.patterns.join(", "))}): only a person may approve it ` +
        "(--yes does not), and there is no terminal.\n"
    )
    const why = personOnlyMessage(ask, "no-terminal")
    await reply({ type: "reject", message: why, ...(yes ? { by: "yes" as const } : {}) })
    return "rejected-no-terminal"
  }
  if (!input) {
    io.stderr(
      `lathe: rejected ${/^[aeiou]/.test(event.permission) ? "an" : "a"} ${event.permission} ask (${visibleText(event.patterns.join(", "))}): no terminal to ask you. ` +
        "Re-run with --yes to allow asks (deny rules still apply), or allow it in lathe.json.\n"
    )
    await reply({ type: "reject" })
    return "rejected-no-terminal"
  }
  const rl = createInterface({ input, output: process.stderr })
  try {
    // Shown, not obeyed: a command's escapes (`\e[8m` hiding what follows) appear as `␛[8m`.
    const text = (await rl.question(`\n${visibleText(describeAsk(ask))}> `)).trim()
    const lower = text.toLowerCase()
    if (lower === "o" || lower === "once" || lower === "y" || lower === "yes") return reply({ type: "once" })
    if (lower === "a" || lower === "always") return reply({ type: "always" })
    if (lower === "r" || lower === "reject" || lower === "n" || lower === "no" || text === "")
      return reply({ type: "reject" })
    return reply({ type: "reject", message: text })
  } finally {
    rl.close()
  }
}

/**
 * Asks the person a tool's questions at the terminal (numbers pick options, anything else is the answer) and sends
 * the answers through `send`; without a terminal the questions are dismissed and the model told to decide.
 */
export const answerQuestions = async (
  event: QuestionAskedEvent,
  io: CliIO,
  send: {
    readonly reply: (answers: Array<Array<string>>) => Promise<void>
    readonly dismiss: (reason: string) => Promise<void>
  }
): Promise<void> => {
  const input = io.stdinIsTTY ? io.stdin : undefined
  if (!input) {
    io.stderr("lathe: the model asked questions, but there is no terminal to answer them; it was told to decide.\n")
    await send.dismiss("There is no terminal to ask the user; decide yourself and say what you chose.")
    return
  }
  const rl = createInterface({ input, output: process.stderr })
  try {
    const answers: Array<Array<string>> = []
    for (const item of event.questions) {
      const options = item.options ?? []
      const lines = [
        `\n${item.header ? `[${plainText(item.header)}] ` : ""}${plainText(item.question)}`,
        ...options.map(
          (o, i) => `  ${i + 1}. ${plainText(o.label)}${o.description ? ` — ${plainText(o.description)}` : ""}`
        ),
        options.length > 0
          ? `  answer with ${item.multiple ? "numbers (e.g. 1,3)" : "a number"}, or type your own answer`
          : "  type your answer"
      ]
      const text = (await rl.question(`${lines.join("\n")}\n> `)).trim()
      const picks = /^\d+(\s*,\s*\d+)*$/.test(text)
        ? text.split(",").map((n) => options[Number(n.trim()) - 1]?.label)
        : undefined
      answers.push(picks?.every((label) => label !== undefined) ? (picks as Array<string>) : text ? [text] : [])
    }
    await send.reply(answers)
  } finally {
    rl.close()
  }
}

/** Answers a front-end's asks through a {@link Backend}, one at a time, in the order they were published. */
export interface AskAnswerer {
  /** Queues the answer to `event`; it is sent after every answer queued before it. */
  readonly answer: (event: AskEvent) => void
  /** Resolves once every queued answer was sent (or failed, which was said on stderr). */
  readonly settled: () => Promise<void>
  /** How many asks were rejected because no person could be asked (no terminal). */
  readonly rejectedForNoTerminal: () => number
}

/**
 * `lathe run`'s answers: permission asks by {@link answerAsk} (`yes`: the `--yes` flag), questions by
 * {@link answerQuestions}, each sent to `backend`; a reply the backend refuses is said on `io.stderr`.
 */
export const askAnswerer = (
  backend: Pick<Backend, "replyPermission" | "replyQuestion">,
  io: CliIO,
  yes: boolean
): AskAnswerer => {
  let chain: Promise<void> = Promise.resolve()
  let noTerminal = 0
  const sent = async (outcome: Promise<{ readonly ok: true } | { readonly ok: false; readonly message: string }>) => {
    const result = await outcome
    if (!result.ok) throw new Error(result.message)
  }
  const answerOne = async (event: AskEvent): Promise<void> => {
    if (event.type === "question.asked")
      return answerQuestions(event, io, {
        reply: (answers) => sent(backend.replyQuestion(event.id, answers)),
        dismiss: (reason) => sent(backend.replyQuestion(event.id, undefined, reason))
      })
    const send = (reply: PermissionReply) =>
      sent(
        backend.replyPermission(
          event.id,
          reply.type,
          reply.type === "reject" ? reply.message : undefined,
          ...(reply.by === undefined ? [] : [reply.by])
        )
      )
    if ((await answerAsk(event, send, io, yes)) === "rejected-no-terminal") noTerminal++
  }
  return {
    answer: (event) => {
      chain = chain
        .then(() => answerOne(event))
        .catch((error: unknown) => io.stderr(`lathe: cannot answer ${event.type}: ${plainText(errorText(error))}\n`))
    },
    settled: () => chain,
    rejectedForNoTerminal: () => noTerminal
  }
}
