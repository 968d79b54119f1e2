import { createHash, timingSafeEqual } from "node:crypto"
import { Authorization } from "@lathe/sdk"
import { Effect, Layer, Redacted } from "effect"
import { apiError } from "./errors.js"

/**
 * Whether `given` equals `token`, in time that does not depend on where they differ (both are hashed first, so
 * neither the length nor a prefix leaks).
 */
export const tokenMatches = (token: string, given: string): boolean =>
  timingSafeEqual(createHash("sha256").update(token).digest(), createHash("sha256").update(given).digest())

/** The bearer token of an `Authorization` header, or `undefined`. */
export const bearerOf = (header: string | null | undefined): string | undefined => {
  const match = header === null || header === undefined ? null : /^Bearer\s+(.+)$/i.exec(header.trim())
  return match?.[1]?.trim()
}

/** The 401 body, saying how to authenticate. */
export const unauthorizedBody = (given: boolean) =>
  apiError.unauthorized(
    given
      ? "The bearer token is wrong: send `Authorization: Bearer <token>` with the token `lathe serve` printed at start (or the --token / LATHE_SERVER_TOKEN it was given)."
      : "This server needs a token: send `Authorization: Bearer <token>` with the token `lathe serve` printed at start (or the --token / LATHE_SERVER_TOKEN it was given)."
  )

/**
 * The API's `Authorization` middleware: with a token, a request without the right bearer token fails with 401;
 * without one (a loopback server started with no auth) everything passes. The server's guard checks the same token
 * before any route; this keeps the API definition's security honest on its own.
 */
export const authorizationLayer = (token: string | undefined) =>
  Layer.succeed(
    Authorization,
    Authorization.of({
      bearer: (httpEffect, { credential }) => {
        if (token === undefined) return httpEffect
        const given = Redacted.value(credential)
        return given !== "" && tokenMatches(token, given) ? httpEffect : Effect.fail(unauthorizedBody(given !== ""))
      }
    })
  )
