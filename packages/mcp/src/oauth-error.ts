/** The one error of the OAuth module: a reason to branch on and a message written for the person signing in. */

/** Why signing in to a remote MCP server failed. */
export type McpAuthFailureReason =
  /** The options or the server's config are unusable (empty name, a URL that is not http(s)). */
  | "config"
  /** The stored sign-in file could not be read or written. */
  | "store"
  /** The loopback callback listener could not start (port taken, no permission). */
  | "callback"
  /** The browser could not be opened. */
  | "browser"
  /** The person did not finish signing in within the time allowed. */
  | "timeout"
  /** The redirect came back with a `state` this sign-in did not send: refused as a possible forgery. */
  | "state-mismatch"
  /** The authorization server answered the redirect with an error (the person declined, or the request was bad). */
  | "denied"
  /** Discovery, registration or the token exchange failed, or the server could not be reached. */
  | "oauth"
  /** The server refused a request for lacking a scope the sign-in does not grant, and no browser may open to widen it. */
  | "insufficient-scope"

/**
 * A failed sign-in (or a broken stored sign-in) for one MCP server. `message` is whole and actionable on its own:
 * print it as it is.
 */
export class McpAuthError extends Error {
  /** Discriminant, for `switch` and for telling this apart from other errors. */
  readonly _tag = "McpAuthError" as const
  /** The MCP server's name as configured. */
  readonly server: string
  /** What went wrong, to branch on. */
  readonly reason: McpAuthFailureReason

  constructor(options: { server: string; reason: McpAuthFailureReason; message: string; cause?: unknown }) {
    super(options.message, options.cause === undefined ? undefined : { cause: options.cause })
    this.name = "McpAuthError"
    this.server = options.server
    this.reason = options.reason
  }
}
