import type { IncomingMessage, ServerResponse } from "node:http"
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
 * The body of a Node request as a web stream, read only as fast as the handler reads it (one chunk at a time, so
 * memory holds no more than the handler keeps). Past `maxBytes` the stream errors and `onTooLarge` is called once,
 * before any byte beyond the cap reaches the handler.
 */
export const limitedBody = (
  req: IncomingMessage,
  maxBytes: number,
  onTooLarge: () => void
): ReadableStream<Uint8Array> => {
  const chunks = req[Symbol.asyncIterator]() as AsyncIterator<Buffer>
  let seen = 0
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await chunks.next()
      if (next.done) return controller.close()
      seen += next.value.length
      if (seen > maxBytes) {
        // The rest is left unread (not destroyed here: the 413 must reach the client before the connection closes).
        onTooLarge()
        controller.error(new Error(`The request body is larger than ${maxBytes} bytes.`))
        return
      }
      controller.enqueue(new Uint8Array(next.value.buffer, next.value.byteOffset, next.value.length))
    },
    async cancel() {
      await chunks.return?.()
    }
  })
}

/**
 * A web `Request` for a Node request: the body streams (not buffered) through {@link limitedBody} with the given
 * cap, and the signal aborts when the client goes away before the response is finished, which interrupts the
 * handler (a streaming SSE body ends).
 */
export const toWebRequest = (
  req: IncomingMessage,
  res: ServerResponse,
  origin: string,
  limit: { readonly maxBytes: number; readonly onTooLarge: () => void } = {
    maxBytes: Number.POSITIVE_INFINITY,
    onTooLarge: () => {}
  }
): Request => {
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
    ...(hasBody ? { body: limitedBody(req, limit.maxBytes, limit.onTooLarge), duplex: "half" } : {})
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

/**
 * Sends a JSON body with a status (for answers the adapter gives itself: 401, 403, 404, 413, 415, 421). With
 * `close`, the connection is closed once the answer is sent: the rest of a refused body is discarded as it arrives
 * until then, never kept.
 */
export const writeJson = (res: ServerResponse, status: number, body: unknown, close = false): void => {
  const text = JSON.stringify(body)
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
    ...(close ? { connection: "close" } : {})
  })
  if (!close) return void res.end(text)
  // Closing at once would make a client that is still sending its body see a reset instead of this answer. The answer
  // goes out now (its length is declared, so the client has all of it), and the connection closes when the body has
  // ended or after LINGER_MS; meanwhile a body nobody reads is discarded as it arrives, never kept.
  res.write(text)
  const req = res.req
  const finish = () => {
    clearTimeout(timer)
    if (!res.writableEnded) res.end()
  }
  const timer = setTimeout(finish, LINGER_MS)
  timer.unref()
  req.once("end", finish)
  req.once("close", finish)
  if (req.readableFlowing === null) req.resume()
}

/** How long a refused request's connection stays open after the answer, for the client to read it (see writeJson). */
const LINGER_MS = 2_000
