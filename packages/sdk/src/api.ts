import { LatheEvent, MessageWithParts, QuestionItem, Session, Tokens } from "@lathe/plugin/schema"
import { Schema } from "effect"
import {
  HttpApi,
  HttpApiEndpoint,
  HttpApiGroup,
  HttpApiMiddleware,
  HttpApiSchema,
  HttpApiSecurity,
  OpenApi
} from "effect/http-api"

/**
 * The Lathe server's HTTP API, defined once: `@lathe/server` implements it, the clients of this package are derived
 * from it, and `/openapi.json` is generated from it, so the three cannot drift apart.
 *
 * JSON in and out. Every error is `{ error: { code, message } }` with a fitting status; `message` is written for the
 * person reading it (what was wrong and how to fix it).
 */

/** The HTTP status each error code is sent with: the API's error schemas, the server and the clients use this table. */
export const errorStatus = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  misdirected: 421,
  server_error: 500,
  unavailable: 503
} as const
/** The code of an API error. */
export type ErrorCode = keyof typeof errorStatus

const errorBody = <const Code extends ErrorCode>(code: Code) =>
  Schema.Struct({ error: Schema.Struct({ code: Schema.Literal(code), message: Schema.String }) }).pipe(
    HttpApiSchema.status(errorStatus[code])
  )

/** 400: the request is malformed or names something invalid (an unknown agent or model, a bad directory). */
export const BadRequest = errorBody("bad_request")
export type BadRequest = typeof BadRequest.Type
/** 401: a token is required and the request did not carry the right one. */
export const Unauthorized = errorBody("unauthorized")
export type Unauthorized = typeof Unauthorized.Type
/** 403: the request names a directory outside the ones the server serves (see `lathe serve --allow-directory`). */
export const Forbidden = errorBody("forbidden")
export type Forbidden = typeof Forbidden.Type
/** 404: no session, message or pending request with that ID. */
export const NotFound = errorBody("not_found")
export type NotFound = typeof NotFound.Type
/** 409: the request conflicts with the session's state (nothing to undo, a turn is running). */
export const Conflict = errorBody("conflict")
export type Conflict = typeof Conflict.Type
/** 500: something failed on the server (the store, git); the message says what. */
export const ServerError = errorBody("server_error")
export type ServerError = typeof ServerError.Type
/** 503: the server is shutting down and takes no new work. */
export const Unavailable = errorBody("unavailable")
export type Unavailable = typeof Unavailable.Type

/**
 * The bearer token check. `lathe serve` always has a token (its own, printed at start, unless given one) and answers
 * 401 to every request without `Authorization: Bearer <token>`; only a loopback server started with `--no-auth`
 * lets everything through.
 * Clients send the header themselves (`createLatheClient({ token })`); this middleware needs no client part.
 */
export class Authorization extends HttpApiMiddleware.Service<Authorization>()("@lathe/sdk/Authorization", {
  security: { bearer: HttpApiSecurity.bearer },
  error: Unauthorized
}) {}

/** Any error the API returns. */
export type ApiError = BadRequest | Forbidden | Unauthorized | NotFound | Conflict | ServerError | Unavailable

/** `GET /health`. */
export const Health = Schema.Struct({ ok: Schema.Literal(true), version: Schema.String })
export type Health = typeof Health.Type

/** `POST /sessions`: every field optional. */
export const CreateSession = Schema.Struct({
  /** The session's working directory (absolute, or relative to the server's); default: the server's directory. */
  directory: Schema.optionalKey(Schema.String),
  /** The agent its prompts run with unless a prompt names another. */
  agent: Schema.optionalKey(Schema.String),
  /** `provider/model` its prompts run with unless a prompt names another. */
  model: Schema.optionalKey(Schema.String),
  title: Schema.optionalKey(Schema.String),
  /**
   * A git repository to work in (any git URL, or a path on the server): the server clones it for the session, and
   * its changes are recorded so any runner of a cluster can rebuild the work tree. Excludes `directory`.
   */
  repo: Schema.optionalKey(Schema.String),
  /** With `repo`: the branch, tag or commit to start from (default: the repository's HEAD). */
  ref: Schema.optionalKey(Schema.String)
})
export type CreateSession = typeof CreateSession.Type

/** A session as the API shows it: the stored session plus what the server knows about it now. */
export const SessionInfo = Schema.Struct({
  ...Session.fields,
  /** The model its prompts run with by default, when one was chosen at creation. */
  model: Schema.optionalKey(Schema.String),
  /** `idle`, `busy` (a turn is running) or `retry` (waiting to call the model again). */
  status: Schema.Literals(["idle", "busy", "retry"])
})
export type SessionInfo = typeof SessionInfo.Type

/**
 * `POST /sessions/:id/prompt`: the person's text, or a plugin command (an MCP server's prompt, a command file, any
 * plugin's, as `/name` names it) expanded where the agent runs, with its arguments (default: `text` split like a
 * shell). One of `text` and `command` is required.
 */
export const PromptRequest = Schema.Struct({
  text: Schema.optionalKey(Schema.String),
  command: Schema.optionalKey(Schema.String.check(Schema.isMinLength(1))),
  arguments: Schema.optionalKey(Schema.Array(Schema.String)),
  agent: Schema.optionalKey(Schema.String),
  model: Schema.optionalKey(Schema.String)
}).check(
  Schema.makeFilter((prompt) =>
    prompt.command !== undefined || (prompt.text ?? "").length > 0 ? undefined : 'a prompt needs "text", or a "command"'
  )
)
export type PromptRequest = typeof PromptRequest.Type

/**
 * The answer to a prompt: the ID of its user message (it is stored at once). `queued` is true when a turn was already
 * running: that turn's model sees the message from its next step, and if the turn ends without answering it, another
 * turn answers it.
 */
export const PromptAccepted = Schema.Struct({
  messageID: Schema.String,
  queued: Schema.Boolean,
  /** Resources the text mentioned (`@<uri>`) that could not be read, left out of the prompt. */
  notices: Schema.optionalKey(Schema.Array(Schema.String))
})
export type PromptAccepted = typeof PromptAccepted.Type

/** `POST /sessions/:id/abort`: whether a turn was running. */
export const AbortResult = Schema.Struct({ aborted: Schema.Boolean })
export type AbortResult = typeof AbortResult.Type

/** One file of a session's changes. */
export const FileChange = Schema.Struct({
  file: Schema.String,
  status: Schema.Literals(["added", "modified", "deleted"]),
  additions: Schema.Number,
  deletions: Schema.Number
})
export type FileChange = typeof FileChange.Type

/** `GET /sessions/:id/diff`: the session's changes to the work tree, from before its first step to now. */
export const SessionDiff = Schema.Struct({
  /** A unified diff (`git diff` format), empty when nothing changed. */
  diff: Schema.String,
  files: Schema.Array(FileChange)
})
export type SessionDiff = typeof SessionDiff.Type

/** A session's totals, as `GET /sessions/summaries` gives them; computed by the store without reading every part. */
export const SessionSummary = Schema.Struct({
  /** Model steps. */
  steps: Schema.Number,
  /** Summed over the session's answers (subagents' included). */
  tokens: Tokens,
  /** USD. */
  cost: Schema.Number,
  /** How many distinct files its steps changed. */
  files: Schema.Number,
  /** The agent and `provider/model` of its first answer. */
  agent: Schema.optionalKey(Schema.String),
  model: Schema.optionalKey(Schema.String),
  /** Milliseconds its answers took, summed. */
  ms: Schema.Number
})
export type SessionSummary = typeof SessionSummary.Type

/** `GET /sessions/summaries`: one page of the sessions `GET /sessions` lists, each with its totals. */
export const SessionSummaries = Schema.Struct({
  sessions: Schema.Array(Schema.Struct({ session: SessionInfo, summary: SessionSummary })),
  /** How many sessions the listing has in all (every page). */
  total: Schema.Number,
  /** The `offset` of the next page, when there is one. */
  next: Schema.optionalKey(Schema.Number)
})
export type SessionSummaries = typeof SessionSummaries.Type

/** `POST /sessions/:id/undo` and `/redo`: the session after it, and the files put back. */
export const RevertResult = Schema.Struct({
  session: SessionInfo,
  files: Schema.Array(Schema.String),
  /** Of `files`, those changed since (by hand or another program) that `force` overwrote. */
  overwritten: Schema.optionalKey(Schema.Array(Schema.String))
})
export type RevertResult = typeof RevertResult.Type

/** How far `undo` goes; every field optional (no options: the last turn that is not undone). */
export interface UndoRequest {
  /** Undo only the last step that changed files, not the whole turn. */
  readonly step?: boolean
  /** Go back to before this turn (numbered from 1, as `GET /sessions/:id/turns` lists them). */
  readonly turn?: number
  /** Put files back even when they were changed since (otherwise 409 naming them). */
  readonly force?: boolean
}

/** A yes/no query parameter. */
const Flag = Schema.optional(Schema.Literals(["true", "false"]))

/** One turn of a session (`GET /sessions/:id/turns`): a prompt until the session was idle again. */
export const TurnInfo = Schema.Struct({
  /** Its place among the session's turns, from 1. */
  index: Schema.Number,
  /** The prompt's message: undoing the turn hides it and everything after it. */
  messageID: Schema.String,
  prompt: Schema.String,
  /** When the prompt was sent (ms since the epoch). */
  time: Schema.Number,
  /** The files its steps changed (its subagents' included), sorted. */
  files: Schema.Array(Schema.String),
  /** Undone: hidden from the model until redo, or dropped by the next prompt. */
  undone: Schema.Boolean
})
export type TurnInfo = typeof TurnInfo.Type

/** A permission ask waiting for a reply. */
export const PendingPermission = Schema.Struct({
  id: Schema.String,
  sessionID: Schema.String,
  callID: Schema.optionalKey(Schema.String),
  permission: Schema.String,
  patterns: Schema.Array(Schema.String),
  always: Schema.optionalKey(Schema.Array(Schema.String)),
  metadata: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown))
})
export type PendingPermission = typeof PendingPermission.Type

/** `POST /permissions/:requestID/reply`. A `message` with `reject` tells the model why (it goes on with it). */
export const PermissionReply = Schema.Struct({
  reply: Schema.Literals(["once", "always", "reject"]),
  message: Schema.optionalKey(Schema.String)
})
export type PermissionReply = typeof PermissionReply.Type

/** Questions a tool asked the person, waiting for answers. */
export const PendingQuestion = Schema.Struct({
  id: Schema.String,
  sessionID: Schema.String,
  callID: Schema.optionalKey(Schema.String),
  questions: Schema.Array(QuestionItem)
})
export type PendingQuestion = typeof PendingQuestion.Type

/** `POST /questions/:requestID/reply`: one list of answers per question, or `dismissed` with a reason for the model. */
export const QuestionReply = Schema.Struct({
  answers: Schema.optionalKey(Schema.Array(Schema.Array(Schema.String))),
  dismissed: Schema.optionalKey(Schema.String)
})
export type QuestionReply = typeof QuestionReply.Type

/** An agent a prompt can name. */
export const AgentSummary = Schema.Struct({
  name: Schema.String,
  description: Schema.optionalKey(Schema.String),
  mode: Schema.Literals(["primary", "subagent", "all"])
})
export type AgentSummary = typeof AgentSummary.Type

/**
 * One Server-Sent Event of `GET /events`: `id` is the event's number in its session (`<session>:<number>` on the
 * stream of every session; send the last one seen as `Last-Event-ID` when reconnecting, to any server of a cluster), `event` is the event's type, `data` the event itself (the catalogue `lathe run --format json`
 * prints).
 */
export const ServerEvent = Schema.Struct({
  id: Schema.optional(Schema.String),
  event: Schema.String,
  data: Schema.fromJsonString(LatheEvent)
})
export type ServerEvent = typeof ServerEvent.Type

const sessionParams = { id: Schema.String }

/** Health and the API's own description. */
export class SystemApi extends HttpApiGroup.make("system")
  .add(
    HttpApiEndpoint.get("health", "/health", { success: Health, error: Unauthorized }).annotate(
      OpenApi.Description,
      "Whether the server is up, and its version."
    )
  )
  .add(
    HttpApiEndpoint.get("openapi", "/openapi.json", {
      success: Schema.Record(Schema.String, Schema.Unknown),
      error: Unauthorized
    }).annotate(OpenApi.Description, "This API as an OpenAPI 3.1 document.")
  )
  .add(
    HttpApiEndpoint.get("agents", "/agents", { success: Schema.Array(AgentSummary), error: Unauthorized }).annotate(
      OpenApi.Description,
      "The agents a session or prompt can name (hidden agents are not listed)."
    )
  )
  .annotateMerge(OpenApi.annotations({ title: "System", description: "Health, the OpenAPI document, agents" })) {}

/** Sessions: create, list, prompt, abort, read, undo. */
export class SessionsApi extends HttpApiGroup.make("sessions")
  .add(
    HttpApiEndpoint.post("create", "/sessions", {
      payload: CreateSession,
      success: SessionInfo.pipe(HttpApiSchema.status(201)),
      error: [BadRequest, Forbidden, Unauthorized, Unavailable]
    }).annotate(
      OpenApi.Description,
      "Creates a session in the server's directory, or in `directory` (which must exist, and be the server's directory, a folder below it or one allowed with `lathe serve --allow-directory`; else 403). Its prompts run under that directory's config: trust, permission rules and sandbox as in the CLI."
    )
  )
  .add(
    HttpApiEndpoint.get("list", "/sessions", {
      query: {
        directory: Schema.optional(Schema.String),
        tree: Schema.optional(Schema.String),
        allTrees: Flag,
        limit: Schema.optional(Schema.NumberFromString)
      },
      success: Schema.Array(SessionInfo),
      error: [Unauthorized, ServerError]
    }).annotate(
      OpenApi.Description,
      "Top-level sessions, most recently updated first: those of the server's work tree (the real path of its " +
        "directory's project root), or of `tree`, or with `allTrees=true` of every work tree in scope (clones and " +
        "worktrees of one repository keep their own sessions; each session's `tree` names its own). Sessions in the " +
        "server's own clones (`repo`) are always listed. `directory` filters by the session's directory."
    )
  )
  .add(
    HttpApiEndpoint.get("summaries", "/sessions/summaries", {
      query: {
        directory: Schema.optional(Schema.String),
        tree: Schema.optional(Schema.String),
        allTrees: Flag,
        limit: Schema.optional(Schema.NumberFromString),
        offset: Schema.optional(Schema.NumberFromString)
      },
      success: SessionSummaries,
      error: [Unauthorized, ServerError]
    }).annotate(
      OpenApi.Description,
      "The sessions `GET /sessions` lists (same filters, same order), a page at a time (`limit`, default 50, at " +
        "most 200; `offset`), each with its totals: steps, tokens, cost, files changed, agent, model, time. The store " +
        "computes them in one query, without reading every message."
    )
  )
  .add(
    HttpApiEndpoint.get("get", "/sessions/:id", {
      params: sessionParams,
      success: SessionInfo,
      error: [NotFound, Unauthorized]
    }).annotate(OpenApi.Description, "One session, with its current status.")
  )
  .add(
    HttpApiEndpoint.delete("delete", "/sessions/:id", {
      params: sessionParams,
      error: [NotFound, Conflict, Unauthorized, ServerError]
    }).annotate(OpenApi.Description, "Deletes a session and its messages (409 while a turn runs: abort it first).")
  )
  .add(
    HttpApiEndpoint.post("prompt", "/sessions/:id/prompt", {
      params: sessionParams,
      payload: PromptRequest,
      success: PromptAccepted.pipe(HttpApiSchema.status(202)),
      error: [BadRequest, NotFound, Unauthorized, Unavailable]
    }).annotate(
      OpenApi.Description,
      "Stores the prompt as a user message at once and answers 202 with its ID (a `command` is expanded first: 400 when no plugin has it or it refuses its arguments; `@<uri>` mentions of plugin resources are attached); the turn runs in the background (follow it on `GET /events`). While a turn runs, the prompt is queued: that turn's model sees it from its next step, and if the turn ends without answering it, another turn does."
    )
  )
  .add(
    HttpApiEndpoint.post("abort", "/sessions/:id/abort", {
      params: sessionParams,
      success: AbortResult,
      error: [NotFound, Unauthorized]
    }).annotate(
      OpenApi.Description,
      "Aborts the running turn (recorded as aborted; the session stays usable). Queued prompts stay in the history unanswered until the next prompt."
    )
  )
  .add(
    HttpApiEndpoint.get("messages", "/sessions/:id/messages", {
      params: sessionParams,
      success: Schema.Array(MessageWithParts),
      error: [NotFound, Unauthorized, ServerError]
    }).annotate(OpenApi.Description, "Every message of the session with its parts, oldest first.")
  )
  .add(
    HttpApiEndpoint.get("diff", "/sessions/:id/diff", {
      params: sessionParams,
      query: { from: Schema.optional(Schema.String), to: Schema.optional(Schema.String) },
      success: SessionDiff,
      error: [BadRequest, NotFound, Unauthorized, ServerError]
    }).annotate(
      OpenApi.Description,
      "The session's changes to the work tree as a unified diff, from before its first step to now. With `from` " +
        "(and `to`), the changes between two snapshots the session recorded (a step's `step-start` and `step-finish` " +
        "`snapshot`, a `patch` part's `hash`): one step's diff, or a turn's; any other ref is a 400. Without `to`, " +
        "from `from` to the work tree now."
    )
  )
  .add(
    HttpApiEndpoint.get("turns", "/sessions/:id/turns", {
      params: sessionParams,
      success: Schema.Array(TurnInfo),
      error: [NotFound, Unauthorized, ServerError]
    }).annotate(
      OpenApi.Description,
      "The session's turns, oldest first: prompt, time, the files each changed, and whether it is undone."
    )
  )
  .add(
    HttpApiEndpoint.post("undo", "/sessions/:id/undo", {
      params: sessionParams,
      query: { step: Flag, turn: Schema.optional(Schema.NumberFromString), force: Flag },
      success: RevertResult,
      error: [NotFound, Conflict, Unauthorized, ServerError]
    }).annotate(
      OpenApi.Description,
      "Undoes the session's last turn that is not undone: every file its steps changed is put back and its messages, prompt included, are hidden from the model. `turn=n` goes back to before turn n; `step=true` undoes only the last step that changed files. A file changed since (by hand) is a 409 naming it; `force=true` overwrites it."
    )
  )
  .add(
    HttpApiEndpoint.post("redo", "/sessions/:id/redo", {
      params: sessionParams,
      query: { force: Flag },
      success: RevertResult,
      error: [NotFound, Conflict, Unauthorized, ServerError]
    }).annotate(
      OpenApi.Description,
      "Brings back what undo took (only before the next prompt). A file changed since the undo is a 409 naming it; `force=true` overwrites it."
    )
  )
  .annotateMerge(OpenApi.annotations({ title: "Sessions", description: "Conversations with the agent" })) {}

/** The live event stream. */
export class EventsApi extends HttpApiGroup.make("events")
  .add(
    HttpApiEndpoint.get("subscribe", "/events", {
      query: { sessionID: Schema.optional(Schema.String) },
      success: HttpApiSchema.StreamSse({ events: ServerEvent }),
      error: Unauthorized
    }).annotate(
      OpenApi.Description,
      "Server-Sent Events, one Lathe event per message (`event:` is its type, `data:` the event as JSON). With `sessionID`, that session's events and its subagents', plus notices. `id:` is per session: a session and its subagents share one count, 1, 2, 3, … in publish order (in a cluster the shared store numbers them, so every server gives an event the same id; a single server numbers them in memory, from 1 again after a restart). On a `sessionID` stream the id is that number; on the stream of every session it is `<session>:<number>` (the top-level session). Events of no session (notices, plugin errors) have no id and are never replayed. Reconnect with `Last-Event-ID` (or `?lastEventId=`), to this server or another server of the cluster, to get exactly the events missed, from a bounded buffer of recent events that reaches back as far as that server has been following the cluster (a comment says when some are not in it; then reload the session's messages). On the stream of every session, resuming works only on the same server. An id from before ids were per session (a bare number counting every event of one server) resumes a `sessionID` stream after that many events of the session, and nothing on the stream of every session: reload the session's messages after such a reconnect. A comment line every 15 s keeps the connection alive."
    )
  )
  .annotateMerge(
    OpenApi.annotations({
      title: "Events",
      description:
        "Server-Sent Events, one Lathe event per message. With ?sessionID=, that session's events and its " +
        "subagents'. Ids are per session and the same on every server: send Last-Event-ID to resume after a " +
        "reconnect, on this server or another; a comment line every 15 s keeps it alive."
    })
  ) {}

/** Asks waiting for the person: permissions and questions. */
export class PermissionsApi extends HttpApiGroup.make("permissions")
  .add(
    HttpApiEndpoint.get("list", "/permissions", {
      query: { sessionID: Schema.optional(Schema.String) },
      success: Schema.Array(PendingPermission),
      error: Unauthorized
    }).annotate(OpenApi.Description, "Permission asks waiting for a reply.")
  )
  .add(
    HttpApiEndpoint.post("reply", "/permissions/:requestID/reply", {
      params: { requestID: Schema.String },
      payload: PermissionReply,
      error: [NotFound, Unauthorized]
    }).annotate(
      OpenApi.Description,
      "Answers a permission ask: `once`, `always` (adds allow rules for the ask's `always` patterns), or `reject` (with a `message`, the model is told why and goes on)."
    )
  )
  .add(
    HttpApiEndpoint.get("questions", "/questions", {
      query: { sessionID: Schema.optional(Schema.String) },
      success: Schema.Array(PendingQuestion),
      error: Unauthorized
    }).annotate(OpenApi.Description, "Questions a tool asked, waiting for answers.")
  )
  .add(
    HttpApiEndpoint.post("answer", "/questions/:requestID/reply", {
      params: { requestID: Schema.String },
      payload: QuestionReply,
      error: [BadRequest, NotFound, Unauthorized]
    }).annotate(
      OpenApi.Description,
      "Answers questions (one list of answers per question), or dismisses them with a reason for the model."
    )
  )
  .annotateMerge(
    OpenApi.annotations({ title: "Permissions", description: "Asks and questions waiting for a reply" })
  ) {}

/** The whole Lathe server API. */
export class LatheApi extends HttpApi.make("lathe")
  .add(SystemApi)
  .add(SessionsApi)
  .add(EventsApi)
  .add(PermissionsApi)
  .middleware(Authorization)
  .annotateMerge(
    OpenApi.annotations({
      title: "Lathe server API",
      version: "1",
      description:
        "Drive the Lathe coding agent over HTTP. Every request needs `Authorization: Bearer <token>` (the token " +
        "`lathe serve` printed at start), a `Host` naming the server, and no `Origin` but one it accepts " +
        "(`--cors`); a request body must be `Content-Type: application/json`."
    })
  ) {}
