import type {
  BadRequest,
  Conflict,
  ErrorCode,
  Forbidden,
  NotFound,
  ServerError,
  Unauthorized,
  Unavailable
} from "@lathe/sdk"
import { Cause, Effect, Exit } from "effect"
import { BadDirectory } from "./directories.js"
import { OutsideDirectory } from "./directory-scope.js"

/** The `{ error: { code, message } }` body of each API error. */
export const apiError = {
  badRequest: (message: string): BadRequest => ({ error: { code: "bad_request", message } }),
  unauthorized: (message: string): Unauthorized => ({ error: { code: "unauthorized", message } }),
  forbidden: (message: string): Forbidden => ({ error: { code: "forbidden", message } }),
  notFound: (message: string): NotFound => ({ error: { code: "not_found", message } }),
  conflict: (message: string): Conflict => ({ error: { code: "conflict", message } }),
  serverError: (message: string): ServerError => ({ error: { code: "server_error", message } }),
  unavailable: (message: string): Unavailable => ({ error: { code: "unavailable", message } })
}

/** Any API error body. */
export type AnyApiError = BadRequest | Forbidden | Unauthorized | NotFound | Conflict | ServerError | Unavailable

/** A ready API error body thrown from handler code, passed through `toApiError` as it is. */
export interface ApiErrorFailure {
  readonly _tag: "ApiError"
  readonly body: AnyApiError
}

/** Wraps an API error body to throw it from handler code. */
export const apiErrorFailure = (body: AnyApiError): ApiErrorFailure => ({ _tag: "ApiError", body })

const isApiErrorFailure = (error: unknown): error is ApiErrorFailure =>
  typeof error === "object" && error !== null && "_tag" in error && error._tag === "ApiError" && "body" in error

const messageOf = (error: unknown): string =>
  typeof error === "object" && error !== null && "message" in error && typeof error.message === "string"
    ? error.message
    : String(error)

/**
 * Maps a failure of core (a tagged error, a defect, a bad directory) to the API error a client can act on:
 * unknown session or message → 404; unknown agent, model, provider or command, a command that refuses its arguments,
 * bad directory → 400 with core's message; a
 * directory outside the served ones → 403;
 * nothing to undo or a turn in the way → 409; the store, git or anything else → 500.
 */
export const toApiError = (error: unknown): AnyApiError => {
  if (error instanceof BadDirectory) return apiError.badRequest(error.message)
  if (error instanceof OutsideDirectory) return apiError.forbidden(error.message)
  if (isApiErrorFailure(error)) return error.body
  const tag = typeof error === "object" && error !== null && "_tag" in error ? String(error._tag) : undefined
  const message = messageOf(error)
  switch (tag) {
    case "SessionNotFound":
      return apiError.notFound(
        `${message.replace(/ List sessions with `lathe session list`\.$/, "")} List sessions with GET /sessions.`
      )
    case "MessageNotFound":
      return apiError.notFound(message)
    case "AgentNotFound":
    case "ModelNotFound":
    case "ProviderNotConfigured":
    case "UnknownCommand":
    case "PluginRequestError":
      return apiError.badRequest(message)
    case "NothingToRevert":
    case "RevertConflict":
    case "OtherWorkTree":
    case "SessionBusy":
      return apiError.conflict(message)
    case "StoreError":
      return apiError.serverError(`The session store failed: ${message}`)
    case "SnapshotError":
      return apiError.serverError(`Snapshots failed: ${message}`)
    default:
      return apiError.serverError(message)
  }
}

/** The first typed error (or defect) of a failed exit. */
export const exitError = (exit: Exit.Exit<unknown, unknown>): unknown => {
  if (Exit.isSuccess(exit)) return undefined
  const reason = exit.cause.reasons[0]
  return reason === undefined
    ? "interrupted"
    : Cause.isFailReason(reason)
      ? reason.error
      : Cause.isDieReason(reason)
        ? reason.defect
        : "interrupted"
}

/** The API error with a given code. */
export type ErrorOf<C extends ErrorCode> = Extract<AnyApiError, { readonly error: { readonly code: C } }>

/**
 * An API error an endpoint does not declare (a store failure where only 404 was expected): it travels as a defect
 * and the server's error middleware still answers it with its status and body.
 */
export class UndeclaredApiError extends Error {
  readonly _tag = "UndeclaredApiError"
  constructor(readonly body: AnyApiError) {
    super(body.error.message)
  }
}

/**
 * Runs a promise-returning call inside a handler: its value, or its failure mapped with {@link toApiError}. Errors
 * whose code is in `codes` (those the endpoint declares) fail typed; others become {@link UndeclaredApiError}.
 */
export const attempt = <A, const C extends ErrorCode>(
  run: () => Promise<A>,
  codes: ReadonlyArray<C>
): Effect.Effect<A, ErrorOf<C>> =>
  Effect.tryPromise({ try: run, catch: (error) => toApiError(error) }).pipe(
    Effect.catch((error) =>
      (codes as ReadonlyArray<ErrorCode>).includes(error.error.code)
        ? Effect.fail(error as ErrorOf<C>)
        : Effect.die(new UndeclaredApiError(error))
    )
  )

/** Fails with an API error the endpoint declares. */
export const fail = <C extends ErrorCode>(error: ErrorOf<C>): Effect.Effect<never, ErrorOf<C>> => Effect.fail(error)
