import { isIP } from "node:net"
import { bearerOf, tokenMatches, unauthorizedBody } from "./auth.js"
import type { AnyApiError } from "./errors.js"
import { apiError } from "./errors.js"

/**
 * The largest request body the server reads: 10 MB. A `Content-Length` over it is refused (413) before any of the
 * body is read; a body without one (chunked) is counted as it streams and cut off with a 413 when it passes the cap.
 */
export const MAX_BODY_BYTES = 10 * 1024 * 1024

/** The 413 answer for a body over {@link MAX_BODY_BYTES}. */
export const tooLargeBody = (): ForbiddenBody => ({
  error: {
    code: "payload_too_large",
    message:
      `A request body may be at most ${MAX_BODY_BYTES / (1024 * 1024)} MB (${MAX_BODY_BYTES} bytes); this one is ` +
      "larger. Send less (a prompt's text, not whole files: the agent reads files itself)."
  }
})

/**
 * The walls every request passes before it reaches a route, in this order: the `Host` header names this server (a
 * DNS-rebinding page sends its own name), a browser request comes from an origin the server was told to accept,
 * the bearer token is right, a declared body length is within {@link MAX_BODY_BYTES}, and a body is
 * `application/json` (a web page can send `text/plain` without asking first). Contract: a request a wall stops gets
 * one JSON error saying why and what to change; nothing else runs.
 */
export interface GuardOptions {
  /** The token every request needs; `undefined` only for a loopback server started with no auth. */
  readonly token: string | undefined
  /** The address the server listens on (`--hostname`). */
  readonly hostname: string
  /** More names a `Host` header may carry (a reverse proxy's name): `--allow-host`. */
  readonly allowedHosts: ReadonlyArray<string>
  /** Origins (`https://app.example`) whose browser pages may call the API: `--cors`. */
  readonly corsOrigins: ReadonlyArray<string>
  /**
   * The server serves its own web page (`lathe web`): a request whose `Origin` is this very server (`http://` + the
   * `Host` it named, already checked) comes from that page and passes. A rebinding page names its own host and
   * is stopped by the Host wall first.
   */
  readonly selfOrigin?: boolean
}

/** What the guard decided: refuse with a body, answer a CORS preflight, or let the request through. */
export type Verdict =
  | { readonly kind: "refuse"; readonly status: number; readonly body: AnyApiError | ForbiddenBody }
  | { readonly kind: "preflight"; readonly headers: Record<string, string> }
  | { readonly kind: "pass"; readonly headers: Record<string, string> }

/** A refusal the API's routes never give (wrong Host, foreign origin, too large, not JSON): same `{ error }` shape. */
export interface ForbiddenBody {
  readonly error: {
    readonly code: "misdirected" | "forbidden" | "payload_too_large" | "unsupported_media_type"
    readonly message: string
  }
}

/** The parts of a request the guard reads (header names lower-case, as Node gives them). */
export interface GuardRequest {
  readonly method: string
  readonly headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>
}

const LOOPBACK_NAMES = new Set(["localhost", "127.0.0.1", "::1"])
const WILDCARD = new Set(["0.0.0.0", "::", "[::]"])

const single = (value: string | ReadonlyArray<string> | undefined): string | undefined =>
  typeof value === "string" ? value : value?.[0]

/** The host name of a `Host` header value, lower-case, without brackets, port or trailing dot. */
export const hostOf = (header: string): string => {
  const value = header.trim().toLowerCase()
  const name = value.startsWith("[") ? value.slice(1, value.indexOf("]")) : value.replace(/:\d*$/, "")
  return name.replace(/\.$/, "")
}

/** A configured name (`--hostname`, `--allow-host`): a bare IPv6 address as it is, anything else as a Host value. */
const nameOf = (value: string): string => (isIP(value) === 6 ? value.toLowerCase() : hostOf(value))

/** An origin as browsers send it (`scheme://host[:port]`), lower-case, without a trailing slash. */
export const normalizeOrigin = (origin: string): string => origin.trim().toLowerCase().replace(/\/+$/, "")

const refuse = (status: number, code: ForbiddenBody["error"]["code"], message: string): Verdict => ({
  kind: "refuse",
  status,
  body: { error: { code, message } }
})

/** Whether `origin` is this server as the request's `Host` names it (plain http: the server has no TLS). */
const isOwnOrigin = (origin: string, host: string): boolean =>
  normalizeOrigin(origin) === `http://${host.trim().toLowerCase()}`

/** Builds the guard of one server; `port` is read when a request comes (it is known once the server listens). */
export const makeGuard = (options: GuardOptions, port: () => number) => {
  const names = new Set([...LOOPBACK_NAMES, ...options.allowedHosts.map(nameOf)])
  if (!WILDCARD.has(options.hostname)) names.add(nameOf(options.hostname))
  // Listening on every interface, clients reach it by any of the machine's addresses; an IP literal cannot be
  // rebound by DNS, so only names need to be known.
  const anyAddress = WILDCARD.has(options.hostname)
  const origins = new Set(options.corsOrigins.map(normalizeOrigin))
  const token = options.token

  return (request: GuardRequest): Verdict => {
    const host = single(request.headers.host)
    const name = host === undefined ? undefined : hostOf(host)
    if (name === undefined || !(names.has(name) || (anyAddress && isIP(name) !== 0)))
      return refuse(
        421,
        "misdirected",
        `This Lathe server does not answer to the host name ${JSON.stringify(host ?? "")}: it takes localhost, ` +
          `127.0.0.1, [::1]${WILDCARD.has(options.hostname) ? "" : ` or ${options.hostname}`} (port ${port()}). A ` +
          "web page that renamed itself to this server's address (DNS rebinding) is refused this way. Behind a " +
          "proxy with its own name, start the server with --allow-host <name>."
      )
    const origin = single(request.headers.origin)
    const cors: Record<string, string> = {}
    const own = options.selfOrigin === true && origin !== undefined && host !== undefined && isOwnOrigin(origin, host)
    if (origin !== undefined && !own) {
      if (!origins.has(normalizeOrigin(origin)))
        return refuse(
          403,
          "forbidden",
          `Requests from web pages of ${origin} are refused: a page you visit must not drive the agent. To let a ` +
            `page of yours call this server, start it with --cors ${origin === "null" ? "<origin>" : origin}.`
        )
      cors["access-control-allow-origin"] = origin
      cors.vary = "Origin"
    } else if (!own) {
      // A browser request without Origin (a no-cors GET, an <img>, a navigation from another site) says where it
      // comes from in Sec-Fetch-Site; programs send neither.
      const site = single(request.headers["sec-fetch-site"])
      if (site === "cross-site" || site === "same-site")
        return refuse(403, "forbidden", "Requests made by another site's web page are refused.")
    }
    if (request.method === "OPTIONS" && single(request.headers["access-control-request-method"]) !== undefined)
      return {
        kind: "preflight",
        headers: {
          ...cors,
          "access-control-allow-methods": "GET, POST, DELETE",
          "access-control-allow-headers": "authorization, content-type, last-event-id",
          "access-control-max-age": "600"
        }
      }
    if (token !== undefined) {
      const given = bearerOf(single(request.headers.authorization))
      if (given === undefined || !tokenMatches(token, given))
        return { kind: "refuse", status: 401, body: unauthorizedBody(given !== undefined) }
    }
    const length = single(request.headers["content-length"])
    if (length !== undefined && Number(length.trim()) > MAX_BODY_BYTES)
      return { kind: "refuse", status: 413, body: tooLargeBody() }
    const hasBody =
      (length !== undefined && length.trim() !== "0") || single(request.headers["transfer-encoding"]) !== undefined
    if (hasBody) {
      const type = single(request.headers["content-type"])
      if (type?.split(";")[0]?.trim().toLowerCase() !== "application/json")
        return refuse(
          415,
          "unsupported_media_type",
          `A request body must be JSON sent with \`Content-Type: application/json\`${type ? `, not ${type}` : ""}.`
        )
    }
    return { kind: "pass", headers: cors }
  }
}

/** A 404 for paths that are no route of the API. */
export const notFoundBody = (method: string, pathname: string): AnyApiError =>
  apiError.notFound(`No route ${method} ${pathname}. The API is described at GET /openapi.json.`)
