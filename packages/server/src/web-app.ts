import { errorStatus, LatheApi } from "@lathe/sdk"
import { Cause, Effect, Layer } from "effect"
import { HttpRouter, HttpServer, HttpServerResponse } from "effect/http"
import { HttpApiBuilder, HttpApiError } from "effect/http-api"
import { authorizationLayer } from "./auth.js"
import type { ServerContext } from "./context.js"
import { type AnyApiError, apiError, UndeclaredApiError } from "./errors.js"
import { eventsApi } from "./events-api.js"
import { sessionsApi } from "./sessions-api.js"
import { permissionsApi, systemApi } from "./system-api.js"

/** The error body as a JSON response with its status. */
export const errorResponse = (body: AnyApiError): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.jsonUnsafe(body, { status: errorStatus[body.error.code] })

const describeSchemaError = (error: HttpApiError.HttpApiSchemaError): string => {
  const cause = error.cause
  const detail =
    typeof cause === "object" && cause !== null && "message" in cause && typeof cause.message === "string"
      ? cause.message
      : String(cause)
  const what =
    error.kind === "Payload"
      ? "request body"
      : error.kind === "Params"
        ? "path"
        : error.kind === "Query"
          ? "query string"
          : error.kind.toLowerCase()
  return `The ${what} is not valid: ${detail.replace(/\s*\n\s*/g, " ")}. See GET /openapi.json for the expected shape.`
}

/**
 * Gives every failure the API's `{ error: { code, message } }` shape: a request the framework could not decode
 * (bad JSON, a missing field) → 400 with what was wrong; an API error an endpoint did not declare → its status;
 * any other defect → 500 with its message. Interruptions (the client left) pass through.
 */
const errorShape = HttpRouter.middleware(
  (httpEffect) =>
    Effect.catchCause(httpEffect, (cause) => {
      if (Cause.hasInterruptsOnly(cause)) return Effect.failCause(cause)
      const reason = cause.reasons.find((r) => Cause.isDieReason(r) || Cause.isFailReason(r))
      const error = reason === undefined ? undefined : Cause.isDieReason(reason) ? reason.defect : reason.error
      if (HttpApiError.HttpApiSchemaError.is(error)) {
        return Effect.succeed(
          error.kind === "Body" || error.kind === "ResponseHeaders"
            ? errorResponse(
                apiError.serverError(`The server built a response it could not encode: ${String(error.cause)}`)
              )
            : errorResponse(apiError.badRequest(describeSchemaError(error)))
        )
      }
      if (error instanceof UndeclaredApiError) return Effect.succeed(errorResponse(error.body))
      const message =
        typeof error === "object" && error !== null && "message" in error && typeof error.message === "string"
          ? error.message
          : String(error)
      return Effect.succeed(errorResponse(apiError.serverError(`The server failed: ${message}`)))
    }),
  { global: true }
)

/**
 * The API as a web handler (`Request → Response`): every group of `LatheApi` over the server context, the bearer
 * middleware, and the error shape. Built synchronously from ready parts, so it answers from the first request.
 */
export const makeWebHandler = (ctx: ServerContext, token: string | undefined) => {
  const groups = Layer.mergeAll(systemApi(ctx), sessionsApi(ctx), eventsApi(ctx), permissionsApi(ctx))
  const routes = HttpApiBuilder.layer(LatheApi).pipe(Layer.provide(groups), Layer.provide(authorizationLayer(token)))
  return HttpRouter.toWebHandler(Layer.mergeAll(routes, errorShape).pipe(Layer.provide(HttpServer.layerServices)), {
    disableLogger: true
  })
}
