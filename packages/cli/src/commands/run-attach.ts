import type { LatheEvent, PermissionReply } from "@lathe/core"
import { createLatheClient, type LatheClient, type SessionInfo } from "@lathe/sdk"
import type { CliIO } from "../io.js"
import { answerAsk, answerQuestions } from "./run.js"

/** What `lathe run --attach` was asked to do. */
export interface AttachRun {
  /** The server's address (what `lathe serve` printed). */
  readonly url: string
  readonly token: string | undefined
  readonly message: string
  readonly session?: string | undefined
  readonly continue?: boolean | undefined
  readonly agent?: string | undefined
  readonly model?: string | undefined
  readonly yes: boolean
}

/** How events reach the person, and the Ctrl-C signal. */
export interface AttachIO {
  /** The same renderer as the local run (text or JSON lines). */
  readonly render: (event: LatheEvent) => void
  /** Aborts the server's turn (`POST /sessions/:id/abort`); the run then exits 130. */
  readonly signal: AbortSignal
}

const errorText = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/** How long an aborted run waits for the server to report the turn over before it exits anyway. */
const ABORT_GRACE_MS = 5_000

/**
 * `lathe run --attach <url>`: the same turn as `lathe run`, run by a server. Contract: prints what the local run
 * prints for the same events (the caller's renderer), answers asks the same way over HTTP, and returns the same exit
 * codes: 0 done, 1 failed (including a server that cannot be reached or refuses the token) or an ask rejected for
 * want of a terminal, 130 aborted.
 */
export const runAttached = async (run: AttachRun, io: CliIO, attach: AttachIO): Promise<number> => {
  const client = createLatheClient({ baseUrl: run.url, token: run.token })
  const follow = new AbortController()
  const pending = new Set<Promise<unknown>>()
  let noTerminal = 0
  let graceTimer: ReturnType<typeof setTimeout> | undefined
  /** The session this run made: removed again when the run fails before anything is stored in it. */
  let created: string | undefined
  let ok = false
  try {
    const session = await resolveSession(client, run, attach, follow.signal)
    const id = session.info.id
    if (session.created) created = id
    // Subscribe first, then prompt: the subscription is open before the turn's first event.
    const events = client.events({ sessionID: id, signal: follow.signal, lastEventId: session.after })
    await events.ready
    const accepted = await client.sessions.prompt(id, {
      text: run.message,
      ...(run.agent ? { agent: run.agent } : {}),
      ...(run.model ? { model: run.model } : {})
    })
    const onAbort = () => {
      void client.sessions.abort(id).catch(() => undefined)
      graceTimer = setTimeout(() => follow.abort(), ABORT_GRACE_MS)
    }
    if (attach.signal.aborted) onAbort()
    else attach.signal.addEventListener("abort", onAbort, { once: true })
    let answer: AssistantMessage | undefined
    let sessionError: string | undefined
    try {
      for await (const event of events) {
        attach.render(event)
        if (event.type === "permission.asked") {
          const send = (reply: PermissionReply) => client.permissions.reply(event.id, toHttpReply(reply))
          track(
            pending,
            answerAsk(event, send, io, run.yes).then((r) => {
              if (r === "rejected-no-terminal") noTerminal++
            })
          )
        } else if (event.type === "question.asked")
          track(
            pending,
            answerQuestions(event, io, {
              reply: (answers) => client.questions.reply(event.id, { answers }),
              dismiss: (dismissed) => client.questions.reply(event.id, { dismissed })
            })
          )
        else if (event.type === "message.updated" && event.message.role === "assistant") {
          if (event.message.parentID === accepted.messageID) answer = event.message
        } else if (event.type === "session.error" && event.sessionID === id) sessionError = event.error.message
        // An idle before our message was answered ends an earlier turn: ours is queued behind it.
        else if (event.type === "session.idle" && event.sessionID === id) {
          if (answer !== undefined || sessionError !== undefined || attach.signal.aborted) break
        }
      }
    } finally {
      attach.signal.removeEventListener("abort", onAbort)
    }
    await Promise.allSettled(pending)
    if (answer?.error) {
      if (answer.error.name === "Aborted") return 130
      io.stderr(`lathe: ${answer.error.message}\n`)
      return 1
    }
    if (attach.signal.aborted) return 130
    if (answer === undefined) {
      io.stderr(`lathe: ${sessionError ?? "the server's event stream ended before the turn did."}\n`)
      return 1
    }
    ok = true
    return noTerminal > 0 ? 1 : 0
  } catch (error) {
    if (attach.signal.aborted) return 130
    io.stderr(`lathe: the server at ${run.url}: ${errorText(error)}\n`)
    return 1
  } finally {
    clearTimeout(graceTimer)
    follow.abort()
    if (!ok && created !== undefined) await discardIfEmpty(client, created)
  }
}

/**
 * Deletes a session this run made when nothing is stored in it (the prompt failed before it was stored: an unknown
 * model, a server that refused it), as the local run does; a session that cannot be read or deleted is left alone.
 */
const discardIfEmpty = async (client: LatheClient, id: string): Promise<void> => {
  try {
    if ((await client.sessions.messages(id)).length === 0) await client.sessions.delete(id)
  } catch {
    // the server is gone or refused: nothing more to do from here
  }
}

type AssistantMessage = Extract<Extract<LatheEvent, { type: "message.updated" }>["message"], { role: "assistant" }>

const track = (pending: Set<Promise<unknown>>, promise: Promise<unknown>) => {
  pending.add(promise)
  void promise.finally(() => pending.delete(promise))
}

/** The HTTP form of a reply (who answered is not sent: the server records a person's reply). */
const toHttpReply = (reply: PermissionReply) =>
  reply.type === "reject" && reply.message !== undefined
    ? { reply: reply.type, message: reply.message }
    : { reply: reply.type }

/** How long a new session's `session.created` event is awaited before going on without printing it. */
const CREATED_WAIT_MS = 2_000

/**
 * The session to prompt: `--session`, the latest with `--continue`, or a new one (`created`). A new session's
 * `session.created` event is rendered (as the local run prints it) and its ID returned as `after`, so the session's
 * own subscription resumes right after it.
 */
const resolveSession = async (
  client: LatheClient,
  run: AttachRun,
  attach: AttachIO,
  signal: AbortSignal
): Promise<{ readonly info: SessionInfo; readonly after?: string | undefined; readonly created?: boolean }> => {
  if (run.session !== undefined) return { info: await client.sessions.get(run.session) }
  if (run.continue) {
    const [latest] = await client.sessions.list({ limit: 1 })
    if (latest !== undefined) return { info: latest }
  }
  const watch = new AbortController()
  const stop = () => watch.abort()
  signal.addEventListener("abort", stop, { once: true })
  try {
    const all = client.events({ signal: watch.signal })
    await all.ready
    const info = await client.sessions.create(run.agent ? { agent: run.agent } : {})
    const timer = setTimeout(stop, CREATED_WAIT_MS)
    let after: string | undefined
    for await (const event of all) {
      if (event.type === "session.created" && event.session.id === info.id) {
        attach.render(event)
        after = all.lastEventId
        break
      }
    }
    clearTimeout(timer)
    return { info, after, created: true }
  } finally {
    signal.removeEventListener("abort", stop)
    watch.abort()
  }
}
