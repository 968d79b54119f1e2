import { PassThrough } from "node:stream"
import type { ReplySource } from "@lathe/core"
import { assert, describe, it } from "vitest"
import type { Backend } from "../src/backend.js"
import {
  type AskEvent,
  askAnswerer,
  mayAutoApprove,
  type PermissionAskedEvent,
  type QuestionAskedEvent
} from "../src/commands/asks.js"
import type { CliIO } from "../src/io.js"

/** An ask as the permission engine publishes it. */
const ask = (permission: string, metadata: Record<string, unknown> = {}): PermissionAskedEvent => ({
  type: "permission.asked",
  id: `per_${permission}`,
  sessionID: "ses_1",
  permission,
  patterns: ["touch made"],
  always: ["touch *"],
  metadata
})

const questions: QuestionAskedEvent = {
  type: "question.asked",
  id: "que_1",
  sessionID: "ses_1",
  questions: [{ question: "Which one?", header: "Pick", options: [{ label: "a" }, { label: "b" }] }]
}

/** What a front-end sent to its backend, in order. */
type Sent =
  | {
      readonly kind: "permission"
      readonly id: string
      readonly reply: string
      readonly message?: string
      readonly by?: ReplySource
    }
  | {
      readonly kind: "question"
      readonly id: string
      readonly answers?: ReadonlyArray<ReadonlyArray<string>>
      readonly reason?: string
    }

/** A backend that records the replies it is given (the two methods the answerer calls). */
const recording = (refuse = false) => {
  const sent: Array<Sent> = []
  const backend: Pick<Backend, "replyPermission" | "replyQuestion"> = {
    replyPermission: async (id, reply, message, by) => {
      sent.push({
        kind: "permission",
        id,
        reply,
        ...(message !== undefined ? { message } : {}),
        ...(by !== undefined ? { by } : {})
      })
      return refuse ? { ok: false, message: "no such ask" } : { ok: true, value: undefined }
    },
    replyQuestion: async (id, answers, reason) => {
      sent.push({
        kind: "question",
        id,
        ...(answers !== undefined ? { answers } : {}),
        ...(reason !== undefined ? { reason } : {})
      })
      return { ok: true, value: undefined }
    }
  }
  return { backend, sent }
}

/** An io without a terminal (a pipe), or with one whose typed lines are `typed`; stderr is kept. */
const ioWith = (typed?: string) => {
  const stderr: Array<string> = []
  const stdin = new PassThrough()
  if (typed !== undefined) stdin.end(typed)
  const io: CliIO = {
    stdout: () => undefined,
    stderr: (text) => stderr.push(text),
    env: {},
    cwd: "/",
    isTTY: typed !== undefined,
    ...(typed !== undefined ? { stdin, stdinIsTTY: true } : {})
  }
  return { io, stderr }
}

const answerAll = async (events: ReadonlyArray<AskEvent>, yes: boolean, io: CliIO, refuse = false) => {
  const { backend, sent } = recording(refuse)
  const answerer = askAnswerer(backend, io, yes)
  for (const event of events) answerer.answer(event)
  await answerer.settled()
  return { sent, rejected: answerer.rejectedForNoTerminal() }
}

describe("asks: the one place a front-end decides and sends its answers", () => {
  it("--yes may approve an ordinary ask, never a person-only one (flagged by the engine or by its permission)", () => {
    assert.isTrue(mayAutoApprove(ask("bash"), true))
    assert.isFalse(mayAutoApprove(ask("bash"), false))
    assert.isFalse(mayAutoApprove(ask("bash", { requiresPerson: true }), true))
    assert.isFalse(mayAutoApprove(ask("sandbox_escape"), true))
    assert.isFalse(mayAutoApprove(ask("protected_path"), true))
  })

  it("with --yes and no terminal: the ordinary ask is allowed by --yes, the person-only one rejected with why", async () => {
    const { io, stderr } = ioWith()
    const { sent, rejected } = await answerAll([ask("bash"), ask("bash", { requiresPerson: true })], true, io)
    assert.strictEqual(sent.length, 2)
    assert.deepEqual(sent[0], { kind: "permission", id: "per_bash", reply: "once", by: "yes" })
    const refused = sent[1]
    assert.strictEqual(refused?.kind === "permission" ? refused.reply : "", "reject")
    assert.strictEqual(refused?.kind === "permission" ? refused.by : undefined, "yes")
    assert.isAbove(refused?.kind === "permission" ? (refused.message ?? "").length : 0, 0)
    assert.strictEqual(rejected, 1)
    assert.include(stderr.join(""), "only a person may approve it (--yes does not), and there is no terminal.")
  })

  it("without --yes or a terminal: asks are rejected (saying how to allow them) and questions dismissed", async () => {
    const { io, stderr } = ioWith()
    const { sent, rejected } = await answerAll([ask("bash"), questions], false, io)
    assert.deepEqual(sent, [
      { kind: "permission", id: "per_bash", reply: "reject" },
      {
        kind: "question",
        id: "que_1",
        reason: "There is no terminal to ask the user; decide yourself and say what you chose."
      }
    ])
    assert.strictEqual(rejected, 1)
    assert.include(stderr.join(""), "Re-run with --yes to allow asks")
    assert.include(stderr.join(""), "there is no terminal to answer them; it was told to decide.")
  })

  it("at a terminal the person answers what --yes may not: typed words reject with them as the reason", async () => {
    const { io } = ioWith("not that file\n")
    const { sent, rejected } = await answerAll([ask("bash"), ask("edit", { requiresPerson: true })], true, io)
    assert.deepEqual(sent, [
      { kind: "permission", id: "per_bash", reply: "once", by: "yes" },
      { kind: "permission", id: "per_edit", reply: "reject", message: "not that file" }
    ])
    assert.strictEqual(rejected, 0)
  })

  it("at a terminal a number picks a question's option", async () => {
    const { io } = ioWith("2\n")
    const { sent } = await answerAll([questions], false, io)
    assert.deepEqual(sent, [{ kind: "question", id: "que_1", answers: [["b"]] }])
  })

  it("a reply the backend refuses is said on stderr, and the next ask is still answered", async () => {
    const { io, stderr } = ioWith()
    const { sent } = await answerAll([ask("bash"), ask("read")], true, io, true)
    assert.strictEqual(sent.length, 2)
    assert.include(stderr.join(""), "lathe: cannot answer permission.asked: no such ask")
  })
})
