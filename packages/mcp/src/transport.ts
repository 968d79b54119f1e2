import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js"
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type { FetchLike, Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import { serverEnvironment } from "./environment.js"
import { oauthFetch } from "./oauth-fetch.js"
import { McpOAuthProvider } from "./oauth-provider.js"
import type { McpServer, RemoteServer } from "./servers.js"
import { ProcessGroupTransport } from "./stdio-transport.js"

/**
 * Supplies the OAuth provider for a remote server (the package's OAuth module does), or `undefined` for none, at once
 * or as a promise (a host that loads the OAuth module on first use). Called only for remote servers whose `oauth` is
 * not `false`, when they connect; a rejection fails the connection like a thrown error.
 */
export type AuthProviderFactory = (
  server: RemoteServer
) => OAuthClientProvider | undefined | Promise<OAuthClientProvider | undefined>

/** How {@link createTransport} builds a transport. */
export interface TransportOptions {
  /** For remote servers: OAuth through the SDK's client auth. Ignored for local servers. */
  readonly authProvider?: OAuthClientProvider
  /** For remote servers: which protocol (default Streamable HTTP; `sse` for the older HTTP+SSE one). */
  readonly protocol?: "streamable-http" | "sse"
  /** For local servers: the environment they inherit (default `process.env`), before the server's own `env`. */
  readonly env?: Readonly<Record<string, string | undefined>>
  /**
   * For local servers: Lathe's own credentials, removed from the inherited environment (see `serverEnvironment`; the
   * host gives its providers' and store's). Default none.
   */
  readonly credentials?: ReadonlyArray<string>
  /** For local servers: the host's provider key variables, never inherited (`ctx.secretNames`). Default none. */
  readonly credentialNames?: ReadonlyArray<string>
}

/**
 * The transport for a server. Local: the command over stdio, in its `cwd` and its own process group (see
 * {@link ProcessGroupTransport}), with the person's environment less Lathe's provider credentials plus the server's
 * `env` (see `serverEnvironment`), stderr kept from the terminal (read it from `transport.stderr`).
 * Remote: Streamable HTTP (or SSE) with the server's headers and, when given, the OAuth provider. Lathe's own
 * provider (`createOAuthProvider`) takes the server's `oauth` config unless it was made with its own, and answers
 * the server's 401 / 403 `insufficient_scope` challenges as `oauthFetch` describes.
 */
export const createTransport = (server: McpServer, options: TransportOptions = {}): Transport => {
  if (server.type === "local") {
    const base = options.env ?? process.env
    return new ProcessGroupTransport({
      command: server.command,
      args: server.args,
      env: serverEnvironment(server, base, options.credentials ?? [], options.credentialNames),
      cwd: server.cwd
    })
  }
  const url = new URL(server.url)
  const requestInit: RequestInit = { headers: { ...server.headers } }
  const provider =
    options.authProvider instanceof McpOAuthProvider
      ? options.authProvider.withSettings(server.oauth === false ? undefined : server.oauth)
      : options.authProvider
  const auth: { authProvider?: OAuthClientProvider; fetch?: FetchLike } =
    provider instanceof McpOAuthProvider
      ? { authProvider: provider, fetch: oauthFetch(provider) }
      : provider
        ? { authProvider: provider }
        : {}
  return (options.protocol ?? server.transport ?? "streamable-http") === "sse"
    ? new SSEClientTransport(url, { requestInit, ...auth })
    : new StreamableHTTPClientTransport(url, { requestInit, ...auth })
}
