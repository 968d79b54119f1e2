import type { MessageWithParts } from "@lathe/plugin/schema"
import { Cause, Effect, Exit, Schema } from "effect"
import { FetchHttpClient } from "effect/http"
import {
  type AbortResult,
  type AgentSummary,
  CreateSession,
  type Health,
  type PendingPermission,
  type PendingQuestion,
  PermissionReply,
  type PromptAccepted,
  PromptRequest,
  QuestionReply,
  type RevertResult,
  type SessionDiff,
  type SessionInfo,
  type SessionSummaries,
  type TurnInfo,
  type UndoRequest
} from "./api.js"
import { type LatheEffectClient, makeLatheClient } from "./client.js"
import { LatheApiError, toLatheApiError } from "./errors.js"
import { type EventsOptions, type LatheEventStream, subscribeEvents } from "./events.js"

/** Options of {@link createLatheClient}. */
export interface LatheClientOptions {
  /** The server's address, e.g. `http://127.0.0.1:4096` (what `lathe serve` prints). */
  readonly baseUrl: string
  /** The bearer token the server was started with, if any. */
  readonly token?: string | undefined
  /** The `fetch` to use (default: the global one), e.g. one with a proxy agent or a test double. */
  readonly fetch?: typeof globalThis.fetch | undefined
}

/** The Promise client of a Lathe server. Every failed call rejects with a {@link LatheApiError}. */
export interface LatheClient {
  /** `{ ok: true, version }` when the server is up (and the token, if one is needed, is right). */
  health(): Promise<Health>
  /** The agents a prompt can name. */
  agents(): Promise<ReadonlyArray<AgentSummary>>
  readonly sessions: {
    /** Creates a session (in the server's directory unless `directory` names another). */
    create(input?: CreateSession): Promise<SessionInfo>
    /** Top-level sessions, newest first. */
    list(query?: { readonly directory?: string; readonly limit?: number }): Promise<ReadonlyArray<SessionInfo>>
    get(id: string): Promise<SessionInfo>
    /** Deletes a session and its messages (409 while a turn runs). */
    delete(id: string): Promise<void>
    /**
     * Stores the message and starts a turn in the background (or queues the message for the running turn);
     * follow {@link LatheClient.events} to see it run.
     */
    prompt(id: string, input: string | PromptRequest): Promise<PromptAccepted>
    /** Ends the running turn, if any. */
    abort(id: string): Promise<AbortResult>
    messages(id: string): Promise<ReadonlyArray<MessageWithParts>>
    /**
     * The session's changes to the work tree, as a unified diff and per file; with `from` (and `to`), between two
     * snapshots the session recorded (a step's, a turn's).
     */
    diff(id: string, range?: { readonly from: string; readonly to?: string }): Promise<SessionDiff>
    /** A page of the sessions `list` gives, each with its totals (steps, tokens, cost, files, agent, model, time). */
    summaries(query?: {
      readonly directory?: string
      readonly limit?: number
      readonly offset?: number
    }): Promise<SessionSummaries>
    /** The session's turns, oldest first, with the files each changed and whether it is undone. */
    turns(id: string): Promise<ReadonlyArray<TurnInfo>>
    /**
     * Undoes the last turn that is not undone (or back to before `turn`, or only the last changing `step`): files put
     * back, messages hidden from the model. Rejects with a 409 naming files changed since, unless `force`.
     */
    undo(id: string, options?: UndoRequest): Promise<RevertResult>
    /** Brings back what undo took; a 409 names files changed since the undo, unless `force`. */
    redo(id: string, options?: { readonly force?: boolean }): Promise<RevertResult>
  }
  readonly permissions: {
    /** Permission asks waiting for a reply. */
    list(query?: { readonly sessionID?: string }): Promise<ReadonlyArray<PendingPermission>>
    reply(requestID: string, reply: PermissionReply): Promise<void>
  }
  readonly questions: {
    /** Questions a tool asked, waiting for answers. */
    list(query?: { readonly sessionID?: string }): Promise<ReadonlyArray<PendingQuestion>>
    reply(requestID: string, reply: QuestionReply): Promise<void>
  }
  /** The server's events, typed and resumed after dropped connections; see {@link subscribeEvents}. */
  events(options?: EventsOptions): LatheEventStream
}

/**
 * Creates the Promise client: a thin layer over the Effect client ({@link makeLatheClient}), so paths, payloads and
 * answers are encoded and decoded with the API's own schemas. Works wherever `fetch` does (Node, Deno, Bun,
 * browsers).
 *
 * ```ts
 * const lathe = createLatheClient({ baseUrl: "http://127.0.0.1:4096", token: process.env.LATHE_SERVER_TOKEN })
 * const session = await lathe.sessions.create()
 * await lathe.sessions.prompt(session.id, "fix the failing test")
 * ```
 */
export const createLatheClient = (options: LatheClientOptions): LatheClient => {
  const baseUrl = options.baseUrl.replace(/\/+$/, "")
  const fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init))
  const client: LatheEffectClient = Effect.runSync(
    makeLatheClient({ baseUrl, token: options.token }).pipe(Effect.provide(FetchHttpClient.layer))
  )
  const run = async <A>(what: string, call: (client: LatheEffectClient) => Effect.Effect<A, unknown>) => {
    const exit = await Effect.runPromiseExit(call(client).pipe(Effect.provideService(FetchHttpClient.Fetch, fetch)))
    if (Exit.isSuccess(exit)) return exit.value
    throw toLatheApiError(exit.cause, what, baseUrl)
  }
  return {
    health: () => run("GET /health", (c) => c.system.health()),
    agents: () => run("GET /agents", (c) => c.system.agents()),
    sessions: {
      create: async (input = {}) => {
        const payload = checked(CreateSession, input, "sessions.create")
        return run("POST /sessions", (c) => c.sessions.create({ payload }))
      },
      list: (query = {}) => run("GET /sessions", (c) => c.sessions.list({ query })),
      get: (id) => run(`GET /sessions/${id}`, (c) => c.sessions.get({ params: { id } })),
      delete: (id) => run(`DELETE /sessions/${id}`, (c) => c.sessions.delete({ params: { id } })),
      prompt: async (id, input) => {
        const payload = checked(PromptRequest, typeof input === "string" ? { text: input } : input, "sessions.prompt")
        return run(`POST /sessions/${id}/prompt`, (c) => c.sessions.prompt({ params: { id }, payload }))
      },
      abort: (id) => run(`POST /sessions/${id}/abort`, (c) => c.sessions.abort({ params: { id } })),
      messages: (id) => run(`GET /sessions/${id}/messages`, (c) => c.sessions.messages({ params: { id } })),
      diff: (id, range) =>
        run(`GET /sessions/${id}/diff`, (c) =>
          c.sessions.diff({
            params: { id },
            query: range ? { from: range.from, ...(range.to !== undefined ? { to: range.to } : {}) } : {}
          })
        ),
      summaries: (query = {}) => run("GET /sessions/summaries", (c) => c.sessions.summaries({ query })),
      turns: (id) => run(`GET /sessions/${id}/turns`, (c) => c.sessions.turns({ params: { id } })),
      undo: (id, options = {}) =>
        run(`POST /sessions/${id}/undo`, (c) =>
          c.sessions.undo({
            params: { id },
            query: {
              ...(options.step ? { step: "true" as const } : {}),
              ...(options.turn !== undefined ? { turn: options.turn } : {}),
              ...(options.force ? { force: "true" as const } : {})
            }
          })
        ),
      redo: (id, options = {}) =>
        run(`POST /sessions/${id}/redo`, (c) =>
          c.sessions.redo({ params: { id }, query: options.force ? { force: "true" as const } : {} })
        )
    },
    permissions: {
      list: (query = {}) => run("GET /permissions", (c) => c.permissions.list({ query })),
      reply: async (requestID, reply) => {
        const payload = checked(PermissionReply, reply, "permissions.reply")
        return run(`POST /permissions/${requestID}/reply`, (c) =>
          c.permissions.reply({ params: { requestID }, payload })
        )
      }
    },
    questions: {
      list: (query = {}) => run("GET /questions", (c) => c.permissions.questions({ query })),
      reply: async (requestID, reply) => {
        const payload = checked(QuestionReply, reply, "questions.reply")
        return run(`POST /questions/${requestID}/reply`, (c) =>
          c.permissions.answer({ params: { requestID }, payload })
        )
      }
    },
    events: (eventsOptions) => subscribeEvents({ baseUrl, token: options.token, fetch }, eventsOptions)
  }
}

/** Checks a caller's input before sending it, so a bad argument fails with `bad_request` naming the method. */
const checked = <S extends Schema.Top & { readonly DecodingServices: never }>(
  schema: S,
  input: unknown,
  method: string
): S["Type"] => {
  const exit = Schema.decodeUnknownExit(schema)(input)
  if (Exit.isSuccess(exit)) return exit.value
  throw new LatheApiError({
    status: 0,
    code: "bad_request",
    message: `client.${method}: the argument does not match the API: ${String(Cause.squash(exit.cause))}`
  })
}
