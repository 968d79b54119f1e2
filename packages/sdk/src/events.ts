import { eventTypes, type LatheEvent } from "@lathe/plugin/schema"
import { Schema } from "effect"
import { ServerEvent } from "./api.js"
import { errorFromAnswer, LatheApiError, networkError } from "./errors.js"
import { parseSse } from "./sse.js"

/** What `client.events()` follows. */
export interface EventsOptions {
  /** Only this session's events, its subagents', and events of no session (notices, plugin errors). */
  readonly sessionID?: string | undefined
  /** Ends the iteration (without an error) when it aborts. */
  readonly signal?: AbortSignal | undefined
  /**
   * Start after this event ID (the server replays what came after it, as far as its buffer reaches). IDs are per
   * session and the same on every server of a cluster: with `sessionID`, an ID seen on one server resumes on another.
   */
  readonly lastEventId?: string | undefined
  /**
   * Reconnection after a dropped connection: the first wait (default 100 ms) doubles up to `maxDelayMs` (default
   * 5 s; a `retry:` from the server replaces it); after `attempts` failed reconnections in a row (default 8) the
   * iteration fails with a `network_error`.
   */
  readonly reconnect?: { readonly initialDelayMs?: number; readonly maxDelayMs?: number; readonly attempts?: number }
  /**
   * Called each time a connection is open (the server accepted the subscription), before its first event. Await it
   * before prompting to be sure to see every event of the turn.
   */
  readonly onOpen?: ((info: { readonly reconnected: boolean }) => void) | undefined
}

/**
 * The typed events of a server, as `for await` gives them (one iteration: a second `for await` goes on where the
 * first stopped). Nothing connects until it is iterated or `ready` is read.
 */
export interface LatheEventStream extends AsyncIterable<LatheEvent> {
  /** The ID of the last event yielded (or skipped as already seen): where a later subscription can resume. */
  readonly lastEventId: string | undefined
  /**
   * Connects (if iteration has not) and resolves once the server accepted the subscription; rejects with the
   * {@link LatheApiError} that refused it. Await it before prompting to be sure to see every event of the turn.
   */
  readonly ready: Promise<void>
}

/** How to reach the server (the Promise client's options). */
export interface EventsConnection {
  readonly baseUrl: string
  readonly token?: string | undefined
  readonly fetch?: typeof globalThis.fetch | undefined
}

const decodeEvent = Schema.decodeUnknownSync(ServerEvent)
const known = new Set<string>(eventTypes)

/** An event ID as the server writes it: `<seq>` on one session's stream, `<session>:<seq>` on the stream of all. */
const position = (id: string): { readonly session: string | undefined; readonly seq: bigint } | undefined => {
  const match = /^(?:(.+):)?(\d+)$/.exec(id)
  return match?.[2] === undefined ? undefined : { session: match[1], seq: BigInt(match[2]) }
}

/**
 * The newest number seen of each session (the server numbers each session's events 1, 2, 3, …, the same on every
 * server of a cluster, so numbers compare only within one session): an event at or before it was already yielded.
 */
class Seen {
  private readonly newest = new Map<string | undefined, bigint>()
  private last: string | undefined

  constructor(start: string | undefined) {
    if (start !== undefined) this.add(start)
  }

  /** Whether the event with this id was yielded already (an id that is no number: only when it repeats the last). */
  has(id: string): boolean {
    const at = position(id)
    if (at === undefined) return id === this.last
    const newest = this.newest.get(at.session)
    return newest !== undefined && at.seq <= newest
  }

  add(id: string): void {
    this.last = id
    const at = position(id)
    if (at !== undefined && at.seq > (this.newest.get(at.session) ?? -1n)) this.newest.set(at.session, at.seq)
  }
}

const wait = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    const timer = setTimeout(done, ms)
    function done() {
      clearTimeout(timer)
      signal.removeEventListener("abort", done)
      resolve()
    }
    signal.addEventListener("abort", done, { once: true })
  })

/**
 * Follows `GET /events`. Contract: yields each event at most once and in the server's order; after a dropped
 * connection it reconnects with `Last-Event-ID` (bounded backoff) so nothing in the server's buffer is missed; a
 * refused subscription (wrong token, unknown server) or a first connection that cannot be made fails at once with
 * {@link LatheApiError}; events of a type this client does not know (a newer server) are skipped.
 */
export const subscribeEvents = (connection: EventsConnection, options: EventsOptions = {}): LatheEventStream => {
  let lastEventId = options.lastEventId
  const seen = new Seen(lastEventId)
  const base = connection.baseUrl.replace(/\/+$/, "")
  const query = options.sessionID === undefined ? "" : `?sessionID=${encodeURIComponent(options.sessionID)}`
  const url = `${base}/events${query}`
  const fetch = connection.fetch ?? globalThis.fetch
  const initialDelay = options.reconnect?.initialDelayMs ?? 100
  let maxDelay = options.reconnect?.maxDelayMs ?? 5_000
  const attempts = options.reconnect?.attempts ?? 8

  let opened: { resolve: () => void; reject: (error: unknown) => void } = { resolve: () => {}, reject: () => {} }
  const ready = new Promise<void>((resolve, reject) => {
    opened = { resolve, reject }
  })
  ready.catch(() => undefined) // the same error reaches the iteration; `ready` need not be awaited

  async function* run(): AsyncGenerator<LatheEvent, void, undefined> {
    const stop = new AbortController()
    const onAbort = () => stop.abort()
    options.signal?.addEventListener("abort", onAbort, { once: true })
    let failures = 0
    let connected = false
    try {
      if (options.signal?.aborted) return
      while (!stop.signal.aborted) {
        const headers: Record<string, string> = { accept: "text/event-stream" }
        if (connection.token) headers.authorization = `Bearer ${connection.token}`
        if (lastEventId !== undefined) headers["last-event-id"] = lastEventId
        let response: Response | undefined
        try {
          response = await fetch(url, { headers, signal: stop.signal })
        } catch (cause) {
          if (stop.signal.aborted) return
          if (!connected || ++failures > attempts) throw networkError(url, cause)
        }
        if (response !== undefined) {
          if (!response.ok) {
            const body: unknown = await response.json().catch(() => undefined)
            throw errorFromAnswer(response.status, body, `GET ${url}`)
          }
          if (!response.body || !(response.headers.get("content-type") ?? "").startsWith("text/event-stream"))
            throw new LatheApiError({
              status: response.status,
              code: "invalid_response",
              message: `GET ${url} did not answer with an event stream; is this a Lathe server (lathe serve)?`
            })
          options.onOpen?.({ reconnected: connected })
          opened.resolve()
          connected = true
          failures = 0
          try {
            for await (const message of parseSse(response.body)) {
              if (message.retry !== undefined) maxDelay = message.retry
              if (message.id !== undefined && seen.has(message.id)) continue
              const event = decodeServerEvent(message, url)
              if (message.id !== undefined) {
                lastEventId = message.id
                seen.add(message.id)
              }
              if (event !== undefined) yield event
            }
          } catch (cause) {
            if (stop.signal.aborted) return
            if (cause instanceof LatheApiError) throw cause
            // the connection dropped mid-stream: reconnect below
          }
          if (stop.signal.aborted) return
          failures++
        }
        await wait(Math.min(maxDelay, initialDelay * 2 ** Math.max(0, failures - 1)), stop.signal)
      }
    } catch (error) {
      opened.reject(error)
      throw error
    } finally {
      opened.resolve() // ended (aborted) before a connection: nothing to wait for
      options.signal?.removeEventListener("abort", onAbort)
      stop.abort()
    }
  }

  const generator = run()
  // A read of `ready` starts the connection; the first result waits here for the iteration.
  let first: Promise<IteratorResult<LatheEvent, void>> | undefined
  let started = false
  const iterator: AsyncIterator<LatheEvent, void, undefined> = {
    next: () => {
      started = true
      const pending = first
      first = undefined
      return pending ?? generator.next()
    },
    return: () => generator.return(undefined)
  }
  return {
    get lastEventId() {
      return lastEventId
    },
    get ready() {
      if (!started) {
        started = true
        first = generator.next()
        first.catch(() => undefined)
      }
      return ready
    },
    [Symbol.asyncIterator]: () => iterator
  }
}

const eventType = Schema.decodeUnknownOption(Schema.fromJsonString(Schema.Struct({ type: Schema.String })))

const decodeServerEvent = (
  message: { id: string | undefined; event: string; data: string },
  url: string
): LatheEvent | undefined => {
  try {
    return decodeEvent({ id: message.id, event: message.event, data: message.data }).data
  } catch (cause) {
    const type = eventType(message.data)
    if (type._tag === "Some" && !known.has(type.value.type)) return undefined
    throw new LatheApiError({
      status: 200,
      code: "invalid_response",
      message:
        `An event from ${url} does not match the Lathe event catalogue (is the server another Lathe version?): ` +
        (cause instanceof Error ? cause.message : String(cause)),
      cause
    })
  }
}
