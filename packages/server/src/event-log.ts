import type { LatheEvent } from "@lathe/core/schema"

/** One Bus event as the server numbered it. */
export interface LoggedEvent {
  /** Global, strictly increasing from 1 over the server's life (sent as the SSE `id:`). */
  readonly id: number
  readonly event: LatheEvent
  /** The session the event belongs to; `undefined` for events of no session (`notice`, `plugin.error`). */
  readonly sessionID: string | undefined
}

/** A subscriber's view of the log: what it missed, then everything new until it unsubscribes. */
export interface EventSubscription {
  /** Events after the subscriber's last seen id still in the buffer, oldest first. */
  readonly replay: ReadonlyArray<LoggedEvent>
  /** Whether events between the last seen id and `replay` fell out of the buffer (the client missed some). */
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
 * Every Bus event of every directory the server runs, numbered once in publish order and kept in a bounded ring
 * buffer, so a client that reconnects with `Last-Event-ID` gets what it missed. Subscribing is synchronous: the replay
 * is taken and the listener attached in the same tick, so no event falls between them or arrives twice.
 */
export class EventLog {
  /** Event `id` lives at `ring[id % capacity]`; ids are consecutive, so the kept ones are `next - size … next - 1`. */
  private readonly ring: Array<LoggedEvent | undefined>
  private size = 0
  private readonly listeners = new Set<(event: LoggedEvent) => void>()
  /** child session → parent session, learned from `session.created` events and lookups. */
  private readonly parents = new Map<string, string>()
  private next = 1
  private closed = false

  /** @param capacity How many events the buffer keeps (the oldest go first). */
  constructor(private readonly capacity = 10_000) {
    this.ring = new Array<LoggedEvent | undefined>(capacity)
  }

  /** The id the most recent event got (0 before any). */
  get lastId(): number {
    return this.next - 1
  }

  /** Numbers an event, keeps it, and hands it to every subscriber. Ignored after `close`. */
  push(event: LatheEvent): LoggedEvent | undefined {
    if (this.closed) return undefined
    if (event.type === "session.created" && event.session.parentID)
      this.parents.set(event.session.id, event.session.parentID)
    const logged: LoggedEvent = { id: this.next++, event, sessionID: eventSessionID(event) }
    this.ring[logged.id % this.capacity] = logged
    this.size = Math.min(this.size + 1, this.capacity)
    for (const listener of this.listeners) listener(logged)
    return logged
  }

  /** Records a parent the log did not see created (a session loaded from the store). */
  learnParent(sessionID: string, parentID: string): void {
    this.parents.set(sessionID, parentID)
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
   * Subscribes from `after` (the last id the client saw; `undefined` for live events only). `listener` gets every
   * event published from now on; `onClose` is called once when the log closes (server drain).
   */
  subscribe(after: number | undefined, listener: (event: LoggedEvent) => void, onClose: () => void): EventSubscription {
    if (this.closed) {
      onClose()
      return { replay: [], truncated: false, unsubscribe: () => {} }
    }
    const oldest = this.next - this.size
    const replay: Array<LoggedEvent> = []
    if (after !== undefined)
      for (let id = Math.max(after + 1, oldest); id < this.next; id++) {
        const logged = this.ring[id % this.capacity]
        if (logged) replay.push(logged)
      }
    const truncated = after !== undefined && after + 1 < oldest && after < this.lastId
    const entry = (event: LoggedEvent) => listener(event)
    this.listeners.add(entry)
    this.closers.add(onClose)
    return {
      replay,
      truncated,
      unsubscribe: () => {
        this.listeners.delete(entry)
        this.closers.delete(onClose)
      }
    }
  }

  private readonly closers = new Set<() => void>()

  /** Stops taking events and ends every subscription (their streams close). */
  close(): void {
    if (this.closed) return
    this.closed = true
    this.listeners.clear()
    for (const close of [...this.closers]) close()
    this.closers.clear()
  }
}
