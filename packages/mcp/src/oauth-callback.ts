/**
 * The loopback redirect target of a sign-in: a one-shot `node:http` listener on 127.0.0.1 that serves
 * `GET /callback`, checks `state` and hands over the authorization `code`.
 *
 * Contract: the first request to `/callback` settles the sign-in, for better or worse (a code with the right state,
 * an error from the authorization server, a wrong or missing state), and the listener then closes. Other paths get
 * a 404 and change nothing. `waitForCode` fails with reason `"timeout"` when nothing arrives in time.
 * `openSystemBrowser` is the other end: it sends the person to the authorization page (https, or http on this
 * machine, and never through a shell).
 */
import { spawn } from "node:child_process"
import type { IncomingMessage, ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { McpAuthError } from "./oauth-error.js"

/** A running loopback listener for one sign-in. */
export interface LoopbackCallback {
  /** The port the listener is bound to. */
  readonly port: number
  /** `http://127.0.0.1:<port>/callback`: the redirect URI to register and send. */
  readonly redirectUrl: string
  /** Sets the `state` the redirect must carry; until it is set, any redirect is refused as a mismatch. */
  expectState(state: string): void
  /** The authorization code, once the browser comes back; fails after `timeoutMs`. */
  waitForCode(timeoutMs: number): Promise<string>
  /** Stops listening. Safe to call more than once. */
  close(): Promise<void>
}

const page = (title: string, body: string): string =>
  `<!doctype html><meta charset="utf-8"><title>${title}</title><body style="font-family:sans-serif">` +
  `<h1>${title}</h1><p>${body}</p></body>`

const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`)

const duration = (ms: number): string => {
  const [count, unit] = ms >= 60_000 ? [Math.round(ms / 60_000), "minute"] : [Math.ceil(ms / 1000), "second"]
  return `${count} ${unit}${count === 1 ? "" : "s"}`
}

/** Starts a listener on 127.0.0.1 (`port` 0 or absent: a free port the system picks). */
export const startLoopbackCallback = async (serverName: string, port = 0): Promise<LoopbackCallback> => {
  let expected: string | undefined
  let settle: ((result: { code: string } | { error: McpAuthError }) => void) | undefined
  const outcome = new Promise<{ code: string } | { error: McpAuthError }>((resolve) => {
    settle = resolve
  })
  const fail = (reason: McpAuthError["reason"], message: string) => ({
    error: new McpAuthError({ server: serverName, reason, message })
  })

  const handle = (request: IncomingMessage, response: ServerResponse) => {
    const url = new URL(request.url ?? "/", "http://127.0.0.1")
    const reply = (status: number, title: string, body: string) => {
      response.writeHead(status, { "content-type": "text/html; charset=utf-8", connection: "close" })
      response.end(page(title, body))
    }
    if (request.method !== "GET" || url.pathname !== "/callback") return reply(404, "Not found", "")
    const params = url.searchParams
    const error = params.get("error")
    const code = params.get("code")
    let result: { code: string } | { error: McpAuthError }
    if (expected === undefined || params.get("state") !== expected) {
      result = fail(
        "state-mismatch",
        `Sign-in to MCP server "${serverName}" was refused: the browser came back with a state this sign-in did ` +
          `not send, which is what a forged redirect looks like. Run \`lathe mcp auth ${serverName}\` again.`
      )
    } else if (error !== null) {
      const description = params.get("error_description")
      result = fail(
        "denied",
        `The authorization server of MCP server "${serverName}" refused the sign-in: ${error}` +
          `${description ? ` (${description})` : ""}.`
      )
    } else if (code === null || code === "") {
      result = fail("oauth", `The sign-in redirect for MCP server "${serverName}" carried no authorization code.`)
    } else {
      result = { code }
    }
    if ("code" in result) {
      reply(200, "Signed in", `Lathe is signed in to ${escapeHtml(serverName)}. You can close this tab.`)
    } else {
      reply(400, "Sign-in failed", escapeHtml(result.error.message))
    }
    settle?.(result)
    settle = undefined
    void close()
  }

  // Taken when a login starts, not imported: an ES import of node:http evaluates every export of its ES facade,
  // undici's lazy WebSocket among them, which costs every `lathe run` ~35 ms at start-up for a server it rarely opens.
  const server = process.getBuiltinModule("node:http").createServer(handle)
  await new Promise<void>((resolve, reject) => {
    server.once("error", (error: NodeJS.ErrnoException) =>
      reject(
        new McpAuthError({
          server: serverName,
          reason: "callback",
          cause: error,
          message:
            error.code === "EADDRINUSE"
              ? `Port ${port} on 127.0.0.1 is taken, so the sign-in for MCP server "${serverName}" has nowhere to ` +
                `come back to: free it, or choose another redirect port.`
              : `Could not listen on 127.0.0.1:${port} for the sign-in of MCP server "${serverName}": ${error.message}.`
        })
      )
    )
    server.listen(port, "127.0.0.1", () => resolve())
  })
  const bound = (server.address() as AddressInfo).port
  let closing: Promise<void> | undefined
  const close = (): Promise<void> => {
    closing ??= new Promise<void>((resolve) => {
      server.close(() => resolve())
      server.closeAllConnections()
    })
    return closing
  }

  return {
    port: bound,
    redirectUrl: `http://127.0.0.1:${bound}/callback`,
    expectState: (state) => {
      expected = state
    },
    waitForCode: async (timeoutMs) => {
      let timer: NodeJS.Timeout | undefined
      const timeout = new Promise<{ error: McpAuthError }>((resolve) => {
        timer = setTimeout(
          () =>
            resolve(
              fail(
                "timeout",
                `Sign-in to MCP server "${serverName}" was not finished within ${duration(timeoutMs)}. ` +
                  `Run \`lathe mcp auth ${serverName}\` again and complete the sign-in in the browser.`
              )
            ),
          timeoutMs
        )
      })
      const result = await Promise.race([outcome, timeout]).finally(() => clearTimeout(timer))
      if ("error" in result) throw result.error
      return result.code
    },
    close
  }
}

const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"])

/**
 * Why Lathe will not hand `url` to the system's opener, or `undefined` when it will: only `https:` addresses, and
 * `http:` ones on this machine (a local authorization server). A `file:` or custom-scheme URL from a server would
 * start whatever program handles it; a plain `http:` page elsewhere could be read or changed on the way.
 */
export const browserRefusal = (url: URL): string | undefined => {
  if (url.protocol === "https:") return undefined
  if (url.protocol === "http:" && LOOPBACK_HOSTS.has(url.hostname)) return undefined
  return url.protocol === "http:"
    ? `Lathe opens http:// sign-in pages only on this machine (localhost), and this one is on ${url.hostname}`
    : `Lathe opens only https:// sign-in pages, and the server gave a ${url.protocol} address`
}

/**
 * The program and arguments that open `url` on `platform`, the URL always one argument of its own and never read
 * by a shell: `open` (macOS), `rundll32 url.dll,FileProtocolHandler` (Windows: no `cmd`, which would act on `&`),
 * `xdg-open` elsewhere.
 */
export const browserCommand = (
  url: URL,
  platform: NodeJS.Platform = process.platform
): { readonly command: string; readonly args: ReadonlyArray<string> } =>
  platform === "darwin"
    ? { command: "open", args: [url.href] }
    : platform === "win32"
      ? { command: "rundll32", args: ["url.dll,FileProtocolHandler", url.href] }
      : { command: "xdg-open", args: [url.href] }

/**
 * Opens a URL in the system browser; resolves once the opener started. Rejects without starting anything when the
 * URL is not one to open ({@link browserRefusal}); the sign-in then prints it, with the reason, for the person.
 */
export const openSystemBrowser = (
  url: URL,
  options: { readonly platform?: NodeJS.Platform; readonly env?: NodeJS.ProcessEnv } = {}
): Promise<void> => {
  const refusal = browserRefusal(url)
  if (refusal !== undefined) return Promise.reject(new Error(refusal))
  const { command, args } = browserCommand(url, options.platform)
  return new Promise((resolve, reject) => {
    const child = spawn(command, [...args], {
      detached: true,
      stdio: "ignore",
      shell: false,
      windowsHide: true,
      ...(options.env ? { env: options.env } : {})
    })
    child.once("error", reject)
    child.once("spawn", () => {
      child.unref()
      resolve()
    })
  })
}
