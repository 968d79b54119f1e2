import type { IncomingMessage, ServerResponse } from "node:http"
import { Readable } from "node:stream"
import { LatheApi } from "@lathe/sdk"

/** A web handler, as `HttpRouter.toWebHandler` makes one. */
export type WebHandler = (request: Request) => Promise<Response>

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/** Matchers for every route of the API (`GET /sessions/:id` → GET and `^/sessions/[^/]+$`). */
const apiRoutes: ReadonlyArray<{ readonly method: string; readonly path: RegExp }> = Object.values(
  LatheApi.groups as unknown as Record<string, { readonly endpoints: Record<string, { method: string; path: string }> }>
).flatMap((group) =>
  Object.values(group.endpoints).map((endpoint) => ({
    method: endpoint.method,
    path: new RegExp(
      `^${endpoint.path
        .split("/")
        .map((segment) => (segment.startsWith(":") ? "[^/]+" : escapeRegExp(segment)))
        .join("/")}/?$`
    )
  }))
)

/** Whether a request (method and path without the query) is a route of the API; others the adapter answers itself. */
export const isApiRoute = (method: string, pathname: string): boolean =>
  apiRoutes.some((route) => route.method === method && route.path.test(pathname))

/**
 * A web `Request` for a Node request: the body streams (not buffered), and the signal aborts when the client goes
 * away before the response is finished, which interrupts the handler (a streaming SSE body ends).
 */
export const toWebRequest = (req: IncomingMessage, res: ServerResponse, origin: string): Request => {
  const controller = new AbortController()
  res.on("close", () => {
    if (!res.writableFinished) controller.abort()
  })
  const headers = new Headers()
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue
    if (Array.isArray(value)) for (const item of value) headers.append(name, item)
    else headers.set(name, value)
  }
  const method = req.method ?? "GET"
  const hasBody = method !== "GET" && method !== "HEAD"
  return new Request(new URL(req.url ?? "/", origin), {
    method,
    headers,
    signal: controller.signal,
    ...(hasBody ? { body: Readable.toWeb(req) as ReadableStream<Uint8Array>, duplex: "half" } : {})
  } as RequestInit)
}

/**
 * Writes a web `Response` to a Node response: status and headers at once (flushed, so an SSE client sees the stream
 * open), then the body chunk by chunk as it comes; each chunk leaves immediately (no buffering, Nagle off). A slow
 * client is waited for (backpressure) rather than buffered for. Stops reading the body when the client goes away.
 */
export const writeWebResponse = async (response: Response, res: ServerResponse): Promise<void> => {
  const headers: Record<string, string | Array<string>> = {}
  response.headers.forEach((value, name) => {
    if (name === "set-cookie") return
    headers[name] = value
  })
  const cookies = response.headers.getSetCookie()
  if (cookies.length > 0) headers["set-cookie"] = cookies
  res.socket?.setNoDelay(true)
  res.writeHead(response.status, response.statusText, headers)
  if (response.body === null) {
    res.end()
    return
  }
  res.flushHeaders()
  const reader = response.body.getReader()
  const stop = () => void reader.cancel().catch(() => undefined)
  res.on("close", stop)
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done || res.destroyed) break
      // A slow reader: wait until the socket drains (or the client leaves) before reading more of the body.
      if (!res.write(value))
        await new Promise<void>((resolve) => {
          const go = () => {
            res.off("drain", go)
            res.off("close", go)
            resolve()
          }
          res.on("drain", go)
          res.on("close", go)
        })
    }
  } catch {
    // the body failed or was cancelled because the client left; nothing more to send
  } finally {
    res.off("close", stop)
    if (!res.destroyed) res.end()
  }
}

/** Sends a JSON body with a status (for answers the adapter gives itself: 401, 403, 404, 415, 421). */
export const writeJson = (res: ServerResponse, status: number, body: unknown): void => {
  const text = JSON.stringify(body)
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) })
  res.end(text)
}
