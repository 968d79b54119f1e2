import type { LatheEvent } from "@lathe/core/schema"

/** Where an event stands in its session's stream: the top-level session and the event's number in it. */
export interface EventPosition {
  /** The top-level session: a session and its subagents' sessions (at any depth) share one sequence. */
  readonly root: string
  /** 1, 2, 3, … per `root`, with no gap, in publish order; the same on every server of a cluster. */
  readonly seq: number
}

/** One Bus event as the server keeps it. */
export interface LoggedEvent {
  /** This server's own arrival order (not sent to clients: it differs between servers). */
  readonly offset: number
  readonly event: LatheEvent
  /** The session the event belongs to; `undefined` for events of no session (`notice`, `plugin.error`). */
  readonly sessionID: string | undefined
  /** Its place in its session's stream; `undefined` for events of no session (they are live only, never replayed). */
  readonly position: EventPosition | undefined
}

/**
 * Where a reconnecting client resumes: after `seq` in the stream of `sessionID` (and its subagents), or, on the
 * stream of every session, after one event, in this server's order.
 */
export type EventCursor =
  | { readonly kind: "session"; readonly sessionID: string; readonly seq: number }
  | { readonly kind: "event"; readonly position: EventPosition }

/** A subscriber's view of the log: what it missed, then everything new until it unsubscribes. */
export interface EventSubscription {
  /** Events after the subscriber's cursor still in the buffer, oldest first. */
  readonly replay: ReadonlyArray<LoggedEvent>
  /** Whether events after the cursor are not in the buffer (they fell out, or this server never had them). */
  readonly truncated: boolean
  readonly unsubscribe: () => void
}

/** The session an event is about, if any. */
export const eventSessionID = (event: LatheEvent): string | undefined => {
  switch (event.type) {
    case "session.created":
    case "session.updated":
      return event.session.id
    case "message.updated":
      return event.message.sessionID
    case "part.updated":
      return event.part.sessionID
    case "plugin.error":
    case "notice":
      return undefined
    default:
      return event.sessionID
  }
}

/**
 * Every Bus event of every directory the server runs, kept in a bounded ring buffer, so a client that reconnects
 * with `Last-Event-ID` gets what it missed. Each event of a session has a {@link EventPosition}: numbered here in
 * publish order (a single server), or given by whoever pushes it (a cluster front: the relay numbers events in
 * Postgres, so every front gives an event the same position). Subscribing is synchronous: the replay is taken and the
 * listener attached in the same tick, so no event falls between them or arrives twice.
 */
export class EventLog {
  /** Event `offset` lives at `ring[offset % capacity]`; offsets are consecutive, kept ones are `next - size …`. */
  private readonly ring: Array<LoggedEvent | undefined>
  private size = 0
  private readonly listeners = new Set<(event: LoggedEvent) => void>()
  private readonly closers = new Set<() => void>()
  /** child session → parent session, learned from `session.created` events and lookups. */
  private readonly parents = new Map<string, string>()
  /** The last `seq` of each top-level session's stream. */
  private readonly last = new Map<string, number>()
  private next = 1
  private closed = false

  /** @param capacity How many events the buffer keeps (the oldest go first). */
  constructor(private readonly capacity = 10_000) {
    this.ring = new Array<LoggedEvent | undefined>(capacity)
  }

  /**
   * Keeps an event and hands it to every subscriber. Without `position` the log numbers it itself (the next `seq` of
   * its top-level session); with one (a relayed event) it keeps that, and drops an event at or before the last
   * position it has of that session (a repeat). Ignored after `close`.
   */
  push(event: LatheEvent, position?: EventPosition): LoggedEvent | undefined {
    if (this.closed) return undefined
    if (event.type === "session.created" && event.session.parentID)
      this.parents.set(event.session.id, event.session.parentID)
    const sessionID = eventSessionID(event)
    let at: EventPosition | undefined
    if (position !== undefined) {
      if (position.seq <= (this.last.get(position.root) ?? 0)) return undefined
      at = position
    } else if (sessionID !== undefined) {
      const root = this.rootOf(sessionID)
      at = { root, seq: (this.last.get(root) ?? 0) + 1 }
    }
    if (at !== undefined) this.last.set(at.root, at.seq)
    const logged: LoggedEvent = { offset: this.next++, event, sessionID, position: at }
    this.ring[logged.offset % this.capacity] = logged
    this.size = Math.min(this.size + 1, this.capacity)
    for (const listener of this.listeners) listener(logged)
    return logged
  }

  /** Records a parent the log did not see created (a session loaded from the store). */
  learnParent(sessionID: string, parentID: string): void {
    this.parents.set(sessionID, parentID)
  }

  /** The top-level session of `sessionID` as far as this log knows its parents (itself when it knows none). */
  rootOf(sessionID: string): string {
    let current = sessionID
    for (let depth = 0; depth < 64; depth++) {
      const parent = this.parents.get(current)
      if (parent === undefined) return current
      current = parent
    }
    return current
  }

  /** Whether `sessionID` is `root` or a descendant of it (a subagent's session, at any depth). */
  isWithin(sessionID: string, root: string): boolean {
    let current: string | undefined = sessionID
    for (let depth = 0; current !== undefined && depth < 64; depth++) {
      if (current === root) return true
      current = this.parents.get(current)
    }
    return false
  }

  /**
   * Subscribes from `after` (`undefined` for live events only). `listener` gets every event kept from now on (a
   * relayed event can arrive here after a client saw it on another server: the SSE body skips it by `seq`);
   * `onClose` is called once when the log closes (server drain).
   */
  subscribe(
    after: EventCursor | undefined,
    listener: (event: LoggedEvent) => void,
    onClose: () => void
  ): EventSubscription {
    if (this.closed) {
      onClose()
      return { replay: [], truncated: false, unsubscribe: () => {} }
    }
    const { replay, truncated } = after === undefined ? { replay: [], truncated: false } : this.since(after)
    this.listeners.add(listener)
    this.closers.add(onClose)
    return {
      replay,
      truncated,
      unsubscribe: () => {
        this.listeners.delete(listener)
        this.closers.delete(onClose)
      }
    }
  }

  /** The kept events after a cursor, and whether some after it are missing from the buffer. */
  private since(after: EventCursor): { replay: Array<LoggedEvent>; truncated: boolean } {
    const kept: Array<LoggedEvent> = []
    for (let offset = this.next - this.size; offset < this.next; offset++) {
      const logged = this.ring[offset % this.capacity]
      if (logged) kept.push(logged)
    }
    if (after.kind === "event") {
      const { root, seq } = after.position
      const index = kept.findIndex((logged) => logged.position?.root === root && logged.position.seq === seq)
      return index < 0 ? { replay: [], truncated: true } : { replay: kept.slice(index + 1), truncated: false }
    }
    const root = this.rootOf(after.sessionID)
    const replay = kept.filter(
      (logged) =>
        logged.position !== undefined &&
        logged.position.seq > after.seq &&
        logged.sessionID !== undefined &&
        this.isWithin(logged.sessionID, after.sessionID)
    )
    // The stream's first kept event after the cursor must be the one right after it, else some are missing.
    const first = kept.find((logged) => logged.position?.root === root && logged.position.seq > after.seq)
    const truncated = (this.last.get(root) ?? 0) > after.seq && (first?.position?.seq ?? 0) !== after.seq + 1
    return { replay, truncated }
  }

  /** Stops taking events and ends every subscription (their streams close). */
  close(): void {
    if (this.closed) return
    this.closed = true
    this.listeners.clear()
    for (const close of [...this.closers]) close()
    this.closers.clear()
  }
}
