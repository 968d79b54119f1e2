import { randomBytes } from "node:crypto"
import { realpath } from "node:fs/promises"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { SessionStore } from "@lathe/core"
import type { LatheEvent } from "@lathe/core/schema"
import type { Workspaces } from "@lathe/workspace"
import { Effect } from "effect"
import { runIn, ServerContext } from "./context.js"
import { type AppFactory, Directories } from "./directories.js"
import { BadAllowedDirectory, DirectoryScope } from "./directory-scope.js"
import { apiError } from "./errors.js"
import { EventLog } from "./event-log.js"
import { MAX_BODY_BYTES, makeGuard, notFoundBody, tooLargeBody } from "./guard.js"
import { isApiRoute, toWebRequest, writeJson, writeWebResponse } from "./node-adapter.js"
import { loadStaticApp, writeStatic } from "./static-app.js"
import { type SessionRunner, Turns } from "./turns.js"
import { makeWebHandler } from "./web-app.js"

/** How to start a Lathe server. */
export interface ServeOptions {
  /** Builds the app of a directory (the CLI passes its `appLayer` for that directory). */
  readonly app: AppFactory
  /**
   * The server's own directory: sessions run here unless they name another. Default: the process's cwd. Requests
   * may name it and the folders below it (real paths: a symlink leading out is outside), plus `allowedDirectories`.
   */
  readonly directory?: string
  /**
   * More directories (absolute, or relative to `directory`; each must exist) that requests may name, with the
   * folders below them: `--allow-directory`. Any other directory, or a session of one, is refused with 403.
   */
  readonly allowedDirectories?: ReadonlyArray<string>
  /** Default 4096; 0 picks a free port (read it from `port` or `url`). */
  readonly port?: number
  /** Default `127.0.0.1`. */
  readonly hostname?: string
  /** The token every request needs (`Authorization: Bearer <token>`); default: a new random one (see `token`). */
  readonly token?: string
  /** Take requests without a token: only on a loopback hostname (any program on this machine can then drive it). */
  readonly noAuth?: boolean
  /** More names a request's `Host` may carry besides loopback names and `hostname` (a reverse proxy's name). */
  readonly allowedHosts?: ReadonlyArray<string>
  /** Origins (`https://app.example`) whose web pages may call the API; any other `Origin` gets 403. */
  readonly corsOrigins?: ReadonlyArray<string>
  /** Reported by `GET /health`. */
  readonly version?: string
  /** Name new sessions with the hidden `title` agent (one more model call per session). Default false. */
  readonly titles?: boolean
  /** How many events `GET /events` can replay after a reconnect (default 10,000). */
  readonly eventBuffer?: number
  /**
   * Who runs turns (default: this process, {@link Turns}). A cluster front end passes its own; it may push the
   * events it receives from elsewhere into `log`.
   */
  readonly runner?: (log: EventLog) => Promise<SessionRunner>
  /**
   * Clones for sessions created with a `repo` (and their recorded changes, which `GET /sessions/:id/diff` reads).
   * Without it such a request is refused with a 400.
   */
  readonly workspaces?: Workspaces["Service"]
  /** Progress lines for the person running the server (drain steps); default: nothing. */
  readonly report?: (line: string) => void
  /**
   * A folder holding the prebuilt web app (`lathe web`): served at `/` to any request that passes the Host and
   * Origin walls, with or without a token (the files hold no data: the page asks for the token and sends it with
   * every API call). The page's own origin may then call the API too (its POSTs carry `Origin`).
   */
  readonly webApp?: string
}

/** A running server. */
export interface LatheServer {
  /** `http://HOST:PORT`. */
  readonly url: string
  readonly hostname: string
  readonly port: number
  /** The bearer token requests need (the one given, or the one generated); `undefined` with `noAuth`. */
  readonly token: string | undefined
  /**
   * Drains and stops: new sessions and prompts get 503, running turns are aborted (recorded as aborted; the sessions
   * stay resumable), stores are flushed, event streams end, apps are disposed, the port is closed. Bounded by
   * `timeoutMs` (default 10 s); resolves `false` when it had to give up waiting.
   */
  readonly close: (timeoutMs?: number) => Promise<boolean>
}

/** The server cannot start as asked (`noAuth` on a non-loopback hostname, a port in use). */
export class ServeError extends Error {
  readonly _tag = "ServeError"
}

const LOOPBACK = new Set(["127.0.0.1", "localhost", "::1", "[::1]"])

/** Whether a hostname only accepts connections from this machine. */
export const isLoopback = (hostname: string): boolean => LOOPBACK.has(hostname) || hostname.startsWith("127.")

/**
 * Starts a Lathe server: builds the app of its directory first, then binds the port, so the first request is
 * answered at once. Resolves when it listens.
 */
export const serve = async (options: ServeOptions): Promise<LatheServer> => {
  const hostname = options.hostname ?? "127.0.0.1"
  if (options.noAuth === true && !isLoopback(hostname))
    throw new ServeError(
      `Refusing to listen on ${hostname} without a token (--no-auth): anyone who can reach it could run commands ` +
        "here. Drop --no-auth (a token is made for you), or listen on 127.0.0.1."
    )
  const token =
    options.noAuth === true
      ? undefined
      : options.token === undefined || options.token === ""
        ? randomBytes(32).toString("base64url")
        : options.token
  const report = options.report ?? (() => {})
  const log = new EventLog(options.eventBuffer)
  // The apps' events go to the log, or where the runner says once it is made (a cluster front relays them).
  let sink: (event: LatheEvent) => void = (event) => log.push(event)
  const directories = new Directories(options.app, { push: (event) => sink(event) })
  const homeDirectory = await realpath(options.directory ?? process.cwd())
  const scope = await DirectoryScope.make(homeDirectory, options.allowedDirectories).catch((error: unknown) => {
    throw error instanceof BadAllowedDirectory ? new ServeError(error.message) : error
  })
  const home = await directories.get(homeDirectory)
  const turns: SessionRunner = options.runner ? await options.runner(log) : new Turns(options.titles === true)
  if (turns.publish) sink = turns.publish
  const ctx = new ServerContext(directories, home, log, turns, options.version ?? "unknown", scope, {
    // A front end of a cluster works through its own app only: sessions' directories are on the runners.
    homeOnly: options.runner !== undefined,
    ...(options.workspaces ? { workspaces: options.workspaces } : {})
  })
  const staticApp = options.webApp === undefined ? undefined : await loadStaticApp(options.webApp)
  const web = makeWebHandler(ctx, token)
  // Builds the router now (a request to nothing), so the first real request never waits on it.
  await web.handler(new Request("http://localhost/", { method: "OPTIONS" })).catch(() => undefined)

  let origin = "http://localhost"
  let port = options.port ?? 4096
  const guard = makeGuard(
    {
      token,
      hostname,
      allowedHosts: options.allowedHosts ?? [],
      corsOrigins: options.corsOrigins ?? [],
      selfOrigin: staticApp !== undefined
    },
    () => port
  )
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", origin)
    const method = req.method ?? "GET"
    const verdict = guard({ method, headers: req.headers })
    const file = (method === "GET" || method === "HEAD") && staticApp?.get(url.pathname)
    // The app's files pass the walls that protect the person (Host, Origin) but not the token: the page asks for it.
    if (file && (verdict.kind === "pass" || (verdict.kind === "refuse" && verdict.status === 401)))
      return writeStatic(res, file, method === "HEAD")
    // A refused request's body is never read: the connection closes after the answer when one is coming.
    if (verdict.kind === "refuse") return writeJson(res, verdict.status, verdict.body, verdict.status === 413)
    if (verdict.kind === "preflight") {
      res.writeHead(204, verdict.headers)
      return res.end()
    }
    for (const [name, value] of Object.entries(verdict.headers)) res.setHeader(name, value)
    if (!isApiRoute(method, url.pathname)) return writeJson(res, 404, notFoundBody(method, url.pathname))
    let tooLarge = false
    const limit = {
      maxBytes: MAX_BODY_BYTES,
      onTooLarge: () => {
        tooLarge = true
        if (!res.headersSent) writeJson(res, 413, tooLargeBody(), true)
      }
    }
    web
      .handler(toWebRequest(req, res, origin, limit))
      .then((response) => (tooLarge ? response.body?.cancel().catch(() => undefined) : writeWebResponse(response, res)))
      .catch((error: unknown) => {
        if (tooLarge) return
        if (res.headersSent) return res.destroy()
        writeJson(res, 500, apiError.serverError(`The server failed: ${String(error)}`))
      })
  })
  await new Promise<void>((resolve, reject) => {
    server.once("error", (error: NodeJS.ErrnoException) =>
      reject(
        new ServeError(
          error.code === "EADDRINUSE"
            ? `Port ${options.port} on ${hostname} is in use; pick another with --port (0 picks a free one).`
            : `Cannot listen on ${hostname}:${options.port}: ${error.message}`
        )
      )
    )
    server.listen(options.port ?? 4096, hostname, () => resolve())
  })
  port = (server.address() as AddressInfo).port
  const host = hostname.includes(":") && !hostname.startsWith("[") ? `[${hostname}]` : hostname
  origin = `http://${host}:${port}`

  let closing: Promise<boolean> | undefined
  const drain = async (): Promise<void> => {
    ctx.draining = true
    const running = turns.count
    report(running === 0 ? "draining: no turn is running" : `draining: aborting ${running} running turn(s) and waiting`)
    await turns.abortAll(8_000)
    // The turns' last events (aborted, idle) reach the log through each app's bus subscriber; let them arrive.
    await new Promise((resolve) => setTimeout(resolve, 100))
    report("draining: flushing the session store and closing event streams")
    for (const app of await directories.all())
      await runIn(
        app,
        Effect.flatMap(SessionStore, (store) => store.flush)
      ).catch((error: unknown) => report(`draining: flushing ${app.directory} failed: ${String(error)}`))
    log.close()
    server.close()
    server.closeIdleConnections()
    report("draining: stopping the apps")
    await web.dispose()
    await turns.dispose?.()
    await directories.dispose()
    server.closeAllConnections()
  }
  const close = (timeoutMs = 10_000) => {
    closing ??= new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => {
        report(`draining: gave up after ${timeoutMs} ms`)
        server.closeAllConnections()
        resolve(false)
      }, timeoutMs)
      drain().then(
        () => {
          clearTimeout(timer)
          resolve(true)
        },
        (error: unknown) => {
          clearTimeout(timer)
          report(`draining failed: ${String(error)}`)
          server.closeAllConnections()
          resolve(false)
        }
      )
    })
    return closing
  }
  return { url: origin, hostname, port, token, close }
}
