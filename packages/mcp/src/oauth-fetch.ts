/**
 * The `fetch` a remote server's transport uses when its OAuth provider is Lathe's: it answers the server's
 * challenges on MCP requests (the transport's POSTs and SSE GETs, told apart from OAuth's own requests by their
 * `accept: text/event-stream`), then retries the request once with the new token.
 *
 * Contract, per request:
 * - 401, interactive provider: `authorize()` with the 401's challenge (its `resource_metadata` and `scope`), then one
 *   retry. Non-interactive: the response goes back to the SDK, which refreshes the tokens or reports "needs auth".
 * - 403 `insufficient_scope`, interactive provider: `authorize()` for the wider scope (the browser opens), then one
 *   retry; a second such 403 fails. Non-interactive (`lathe run`): fails with an `McpAuthError` (reason
 *   `"insufficient-scope"`) naming the missing scope and `lathe mcp auth <name>`, and remembers the scope so that
 *   command asks for it.
 * - Concurrent requests of one provider share one sign-in; a failed sign-in fails the request with its `McpAuthError`.
 */
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js"
import { authorize } from "./oauth.js"
import { type Challenge, isStepUp, joinScopes, missingScopes, readChallenge } from "./oauth-challenge.js"
import { McpAuthError } from "./oauth-error.js"
import type { McpOAuthProvider } from "./oauth-provider.js"

const signIns = new WeakMap<McpOAuthProvider, Promise<void>>()

/** One sign-in at a time per provider: a request that meets a challenge while one runs waits for it. */
const signIn = (provider: McpOAuthProvider, challenge: Challenge): Promise<void> => {
  const running = signIns.get(provider)
  if (running) return running
  const started = authorize(provider.options.serverUrl, provider, { challenge }).then((result) => {
    if (result !== "AUTHORIZED") throw result
  })
  const done = started.finally(() => signIns.delete(provider))
  signIns.set(provider, done)
  return done
}

const isMcpRequest = (url: string | URL, init: RequestInit | undefined, serverUrl: string): boolean =>
  new URL(url).origin === new URL(serverUrl).origin &&
  (new Headers(init?.headers).get("accept") ?? "").includes("text/event-stream")

const withToken = (init: RequestInit | undefined, token: string | undefined): RequestInit => {
  const headers = new Headers(init?.headers)
  if (token !== undefined) headers.set("authorization", `Bearer ${token}`)
  return { ...init, headers }
}

/** The error of a 403 `insufficient_scope` that no browser may answer: the missing scope and the command. */
const needsScope = async (provider: McpOAuthProvider, challenge: Challenge): Promise<McpAuthError> => {
  const name = provider.options.serverName
  const missing = missingScopes(challenge.scope, (await provider.tokens())?.scope) ?? challenge.scope
  await provider.saveStepUpScope(joinScopes(await provider.stepUpScope(), challenge.scope))
  const what = missing
    ? `the OAuth scope "${missing}", which the current sign-in does not grant`
    : "a wider OAuth scope"
  return new McpAuthError({
    server: name,
    reason: "insufficient-scope",
    message:
      `MCP server "${name}" refused the request: it needs ${what}. Run \`lathe mcp auth ${name}\` to sign in ` +
      `again with it, then retry (a run never opens a browser by itself).`
  })
}

const stillRefused = (provider: McpOAuthProvider, challenge: Challenge): McpAuthError => {
  const name = provider.options.serverName
  return new McpAuthError({
    server: name,
    reason: "insufficient-scope",
    message:
      `MCP server "${name}" still refused the request after signing in again for the scope ` +
      `"${challenge.scope ?? "(unnamed)"}": its authorization server did not grant it to this account.`
  })
}

/** Wraps `base` (default: the global `fetch`) for the transport of the server `provider` signs in to. */
export const oauthFetch =
  (provider: McpOAuthProvider, base: FetchLike = fetch): FetchLike =>
  async (url, init) => {
    let response = await base(url, init)
    if (!isMcpRequest(url, init, provider.options.serverUrl)) return response
    const answered = new Set<"sign-in" | "step-up">()
    for (;;) {
      const challenge = readChallenge(response)
      const kind = isStepUp(challenge) ? "step-up" : challenge?.status === 401 ? "sign-in" : undefined
      if (challenge === undefined || kind === undefined) return response
      if (kind === "sign-in" && (!provider.options.interactive || answered.has(kind))) return response
      await response.body?.cancel()
      if (kind === "step-up" && answered.has(kind)) throw stillRefused(provider, challenge)
      if (kind === "step-up" && !provider.options.interactive) throw await needsScope(provider, challenge)
      await signIn(provider, challenge)
      answered.add(kind)
      response = await base(url, withToken(init, (await provider.tokens())?.access_token))
    }
  }
