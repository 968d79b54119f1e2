/**
 * What a protected MCP server says when it refuses a request: the `WWW-Authenticate: Bearer …` parameters of a 401
 * (sign in; `resource_metadata` says where its protected resource metadata is, `scope` what to ask for) or of a 403
 * with `error="insufficient_scope"` (sign in again with a wider scope). Scopes are space-separated strings, as OAuth
 * writes them.
 */
import { extractWWWAuthenticateParams } from "@modelcontextprotocol/sdk/client/auth.js"

/** The parameters of a server's `WWW-Authenticate: Bearer` challenge; every field is absent when not given. */
export interface Challenge {
  /** The response's status (401 or 403). */
  readonly status: number
  /** Where the server's protected resource metadata (RFC 9728) is. */
  readonly resourceMetadataUrl?: URL
  /** The scope the server asks for. */
  readonly scope?: string
  /** The OAuth error code, e.g. `insufficient_scope` or `invalid_token`. */
  readonly error?: string
}

/** The challenge of a 401 or 403 response; `undefined` for any other status. Leaves the body unread. */
export const readChallenge = (response: Response): Challenge | undefined => {
  if (response.status !== 401 && response.status !== 403) return undefined
  const { resourceMetadataUrl, scope, error } = extractWWWAuthenticateParams(response)
  return {
    status: response.status,
    ...(resourceMetadataUrl ? { resourceMetadataUrl } : {}),
    ...(scope ? { scope } : {}),
    ...(error ? { error } : {})
  }
}

/** Whether the challenge asks for a wider scope (a step-up) rather than for a sign-in. */
export const isStepUp = (challenge: Challenge | undefined): boolean =>
  challenge?.status === 403 && challenge.error === "insufficient_scope"

/**
 * Asks the MCP endpoint, without a token, how to sign in: one JSON-RPC `ping` POSTed with the server's own headers
 * (a server that needs no token answers it without opening a session). `undefined` when the server did not
 * challenge, or could not be reached (the discovery that follows then reports that).
 */
export const probeChallenge = async (
  url: string | URL,
  headers: Readonly<Record<string, string>> = {},
  fetchFn: typeof fetch = fetch
): Promise<Challenge | undefined> => {
  try {
    const response = await fetchFn(url, {
      method: "POST",
      headers: {
        ...headers,
        "content-type": "application/json",
        accept: "application/json, text/event-stream"
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 0, method: "ping" }),
      signal: AbortSignal.timeout(10_000)
    })
    await response.body?.cancel()
    return readChallenge(response)
  } catch {
    return undefined
  }
}

/** The scopes of `scope` strings, each once, in first-seen order; `undefined` when there are none. */
export const joinScopes = (...scopes: ReadonlyArray<string | undefined>): string | undefined => {
  const all = [...new Set(scopes.flatMap((scope) => scope?.split(/\s+/).filter(Boolean) ?? []))]
  return all.length === 0 ? undefined : all.join(" ")
}

/** The scopes `required` names that `granted` does not (all of them when `granted` is unknown). */
export const missingScopes = (required: string | undefined, granted: string | undefined): string | undefined => {
  const have = new Set(granted?.split(/\s+/) ?? [])
  return joinScopes(...(required?.split(/\s+/).filter((scope) => !have.has(scope)) ?? []))
}
