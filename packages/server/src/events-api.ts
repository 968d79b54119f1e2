import { LatheApi } from "@lathe/sdk"
import { Effect } from "effect"
import { HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import type { ServerContext } from "./context.js"
import type { EventCursor, EventLog, LoggedEvent } from "./event-log.js"

/** How often an idle stream gets a `: keep-alive` comment, so proxies and clients keep the connection. */
export const HEARTBEAT_MS = 15_000

/**
 * One event in SSE wire format: `id:`, `event:` (the event's type), `data:` (the event as one JSON line). The id is
 * the event's `seq` on one session's stream, `<session>:<seq>` on the stream of every session (which mixes
 * sessions); an event of no session has no id.
 */
export const renderSse = (logged: LoggedEvent, scope: "session" | "all" = "session"): string => {
  const position = logged.position
  const id =
    position === undefined ? "" : `id: ${scope === "session" ? position.seq : `${position.root}:${position.seq}`}\n`
  return `${id}event: ${logged.event.type}\ndata: ${JSON.stringify(logged.event)}\n\n`
}

/** The last id a reconnecting client saw: `Last-Event-ID`, else `?lastEventId=`; `undefined` when absent or blank. */
export const lastEventId = (header: string | undefined, url: string): string | undefined => {
  const raw = (header ?? new URL(url, "http://localhost").searchParams.get("lastEventId") ?? "").trim()
  return raw === "" ? undefined : raw
}

/**
 * Where a stream resumes after `id`. On one session's stream: `<seq>`, or `<session>:<seq>` as the stream of every
 * session writes it. On the stream of every session: `<session>:<seq>`, found in this server's buffer. Anything else
 * (an id from before ids were per session, on the stream of every session) resumes nowhere: live events only.
 */
export const cursorOf = (id: string | undefined, sessionID: string | undefined): EventCursor | undefined => {
  const match = id === undefined ? null : /^(?:(.+):)?(\d+)$/.exec(id)
  if (match === null) return undefined
  const seq = Number(match[2])
  if (sessionID !== undefined) return { kind: "session", sessionID, seq }
  return match[1] === undefined ? undefined : { kind: "event", position: { root: match[1], seq } }
}

/**
 * The SSE body for one subscriber: the replay of what it missed, then live events, filtered to a session and its
 * descendants (plus events of no session) when `sessionID` is given, with a heartbeat comment every
 * {@link HEARTBEAT_MS}. It ends when the client goes away or the log closes (the server drains).
 */
export const sseBody = (
  log: EventLog,
  options: {
    /** The client's `Last-Event-ID`, if any. */
    readonly after: string | undefined
    readonly sessionID: string | undefined
    readonly heartbeatMs?: number
  }
): ReadableStream<Uint8Array> => {
  const encoder = new TextEncoder()
  const scope = options.sessionID === undefined ? "all" : "session"
  const cursor = cursorOf(options.after, options.sessionID)
  // A relayed event can reach this server after the client saw it on another one: skip what the cursor covers.
  const after = cursor?.kind === "session" ? cursor.seq : 0
  let cleanup = () => {}
  return new ReadableStream<Uint8Array>({
    start(controller) {
      let open = true
      const wanted = (logged: LoggedEvent) =>
        options.sessionID === undefined ||
        logged.sessionID === undefined ||
        (log.isWithin(logged.sessionID, options.sessionID) && (logged.position?.seq ?? Infinity) > after)
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
        cursor,
        (logged) => {
          if (wanted(logged)) send(renderSse(logged, scope))
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
      send(
        options.after !== undefined && cursor === undefined
          ? ": this Last-Event-ID cannot be resumed here; live events only\n\n"
          : subscription.truncated
            ? ": some events after Last-Event-ID are not in this server's buffer; reload the session's messages\n\n"
            : ": ok\n\n"
      )
      for (const logged of subscription.replay) if (wanted(logged)) send(renderSse(logged, scope))
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
