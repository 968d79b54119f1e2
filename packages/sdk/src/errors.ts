import { Cause, Schema } from "effect"
import { HttpClientError } from "effect/http"
import { type ErrorCode, errorStatus } from "./api.js"

/**
 * The codes a {@link LatheApiError} carries: the server's (`bad_request` … `unavailable`, from its
 * `{ error: { code, message } }` body) and the client's own: `network_error` (the server could not be reached;
 * `status` 0), `invalid_response` (an answer the API does not describe: a proxy's error page, a different server).
 */
export type LatheApiErrorCode =
  | "bad_request"
  | "unauthorized"
  | "forbidden"
  | "not_found"
  | "conflict"
  | "payload_too_large"
  | "unsupported_media_type"
  | "misdirected"
  | "server_error"
  | "unavailable"
  | "network_error"
  | "invalid_response"

/** What every failed call of the Promise client rejects with. */
export class LatheApiError extends Error {
  override readonly name = "LatheApiError"
  /** The HTTP status of the answer; 0 when there was none (network error, abort). */
  readonly status: number
  /** What went wrong, as a stable code to branch on. */
  readonly code: LatheApiErrorCode
  constructor(options: { status: number; code: LatheApiErrorCode; message: string; cause?: unknown }) {
    super(options.message, options.cause === undefined ? undefined : { cause: options.cause })
    this.status = options.status
    this.code = options.code
  }
}

const ErrorBody = Schema.Struct({ error: Schema.Struct({ code: Schema.String, message: Schema.String }) })
const isErrorBody = Schema.is(ErrorBody)

/** A LatheApiError from a server's error answer, whatever its body (a proxy's page, an empty body). */
export const errorFromAnswer = (status: number, body: unknown, what: string): LatheApiError => {
  if (isErrorBody(body) && body.error.code in errorStatus)
    return new LatheApiError({ status, code: body.error.code as LatheApiErrorCode, message: body.error.message })
  return new LatheApiError({
    status,
    code: status === 401 ? "unauthorized" : "invalid_response",
    message: `${what} answered HTTP ${status} without a Lathe error body; is this a Lathe server (lathe serve)?`
  })
}

/** The LatheApiError for a request that got no answer. */
export const networkError = (url: string, cause: unknown): LatheApiError =>
  new LatheApiError({
    status: 0,
    code: "network_error",
    message: `Could not reach the Lathe server at ${url}: ${describe(cause)}. Is \`lathe serve\` running there?`,
    cause
  })

const describe = (cause: unknown): string => {
  const inner = cause instanceof Error && cause.cause instanceof Error ? cause.cause : cause
  return inner instanceof Error ? inner.message : String(inner)
}

/**
 * Maps the failure of an Effect-client call to a LatheApiError: the API's typed error bodies keep their code and
 * message, HTTP client failures become `network_error` (no answer) or `invalid_response`, schema mismatches
 * `invalid_response`.
 */
export const toLatheApiError = (cause: Cause.Cause<unknown>, what: string, url: string): LatheApiError => {
  const error = Cause.squash(cause)
  if (isErrorBody(error)) return errorFromAnswer(errorStatus[error.error.code as ErrorCode] ?? 500, error, what)
  if (HttpClientError.isHttpClientError(error)) {
    const reason = error.reason
    if (reason._tag === "TransportError") return networkError(url, reason.cause ?? error)
    if ("response" in reason) {
      const status = reason.response.status
      return status === 401
        ? errorFromAnswer(status, undefined, what)
        : new LatheApiError({
            status,
            code: "invalid_response",
            message: `${what} answered HTTP ${status} in a shape the Lathe API does not describe: ${error.message}`,
            cause: error
          })
    }
    return new LatheApiError({
      status: 0,
      code: "invalid_response",
      message: `${what}: ${error.message}`,
      cause: error
    })
  }
  if (Schema.isSchemaError(error))
    return new LatheApiError({
      status: 0,
      code: "invalid_response",
      message: `${what} answered in a shape this client does not know (is the server a different Lathe version?): ${error.message}`,
      cause: error
    })
  return new LatheApiError({
    status: 0,
    code: "invalid_response",
    message: `${what}: ${describe(error)}`,
    cause: error
  })
}
