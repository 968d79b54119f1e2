import { LatheApi } from "@lathe/sdk"
import { Effect } from "effect"
import { HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import type { ServerContext } from "./context.js"
import type { EventLog, LoggedEvent } from "./event-log.js"

/** How often an idle stream gets a `: keep-alive` comment, so proxies and clients keep the connection. */
export const HEARTBEAT_MS = 15_000

/** One event in SSE wire format: `id:`, `event:` (the event's type), `data:` (the event as one JSON line). */
export const renderSse = (logged: LoggedEvent): string =>
  `id: ${logged.id}\nevent: ${logged.event.type}\ndata: ${JSON.stringify(logged.event)}\n\n`

/** The last id a reconnecting client saw: `Last-Event-ID`, else `?lastEventId=`; `undefined` when absent or invalid. */
export const lastEventId = (header: string | undefined, url: string): number | undefined => {
  const raw = header ?? new URL(url, "http://localhost").searchParams.get("lastEventId") ?? undefined
  if (raw === undefined || !/^\d+$/.test(raw.trim())) return undefined
  return Number(raw.trim())
}

/**
 * The SSE body for one subscriber: the replay of what it missed, then live events, filtered to a session and its
 * descendants (plus events of no session) when `sessionID` is given, with a heartbeat comment every
 * {@link HEARTBEAT_MS}. It ends when the client goes away or the log closes (the server drains).
 */
export const sseBody = (
  log: EventLog,
  options: { readonly after: number | undefined; readonly sessionID: string | undefined; readonly heartbeatMs?: number }
): ReadableStream<Uint8Array> => {
  const encoder = new TextEncoder()
  let cleanup = () => {}
  return new ReadableStream<Uint8Array>({
    start(controller) {
      let open = true
      const wanted = (logged: LoggedEvent) =>
        options.sessionID === undefined ||
        logged.sessionID === undefined ||
        log.isWithin(logged.sessionID, options.sessionID)
      const send = (text: string) => {
        if (!open) return
        try {
          controller.enqueue(encoder.encode(text))
        } catch {
          close()
        }
      }
      const close = () => {
        if (!open) return
        open = false
        cleanup()
        try {
          controller.close()
        } catch {
          // already closed by the client
        }
      }
      const subscription = log.subscribe(
        options.after,
        (logged) => {
          if (wanted(logged)) send(renderSse(logged))
        },
        close
      )
      if (!open) return
      const heartbeat = setInterval(() => send(": keep-alive\n\n"), options.heartbeatMs ?? HEARTBEAT_MS)
      cleanup = () => {
        clearInterval(heartbeat)
        subscription.unsubscribe()
      }
      // A comment first, so the client sees the stream open (headers flushed) before any event.
      send(subscription.truncated ? ": some events were dropped from the buffer before this replay\n\n" : ": ok\n\n")
      for (const logged of subscription.replay) if (wanted(logged)) send(renderSse(logged))
    },
    cancel() {
      cleanup()
    }
  })
}

/** The `events` group: `GET /events`, Server-Sent Events with replay after a reconnect. */
export const eventsApi = (ctx: ServerContext) =>
  HttpApiBuilder.group(LatheApi, "events", (handlers) =>
    handlers.handleRaw("subscribe", ({ request, query }) =>
      Effect.sync(() =>
        HttpServerResponse.raw(
          sseBody(ctx.log, {
            after: lastEventId(request.headers["last-event-id"], request.url),
            sessionID: query.sessionID
          }),
          {
            contentType: "text/event-stream",
            headers: { "cache-control": "no-cache", "x-accel-buffering": "no" }
          }
        )
      )
    )
  )
