import type { Message, MessageWithParts, Part, Session, Tokens } from "@lathe/plugin/schema"
import { Context, Effect, Layer, Schema } from "effect"

/** No session with this id exists in the store. */
export class SessionNotFound extends Schema.TaggedError<SessionNotFound>()("SessionNotFound", {
  sessionID: Schema.String,
  message: Schema.String
}) {}

/** No message with this id exists in the session. */
export class MessageNotFound extends Schema.TaggedError<MessageNotFound>()("MessageNotFound", {
  sessionID: Schema.String,
  messageID: Schema.String,
  message: Schema.String
}) {}

/** The store could not read or write (disk full, locked database, corrupt row). */
export class StoreError extends Schema.TaggedError<StoreError>()("StoreError", {
  operation: Schema.String,
  message: Schema.String
}) {}

/** Which sessions to list. */
export interface SessionFilter {
  readonly projectID?: string
  /**
   * Only sessions of this work tree (a real root path): those that recorded it, and those stored before trees were
   * recorded whose directory is it or below it (see `inTree`).
   */
  readonly tree?: string
  /** Only the children of this session; `null` for top-level sessions only. */
  readonly parentID?: string | null
  /** Newest first; at most this many. */
  readonly limit?: number
}

/**
 * Whether a session belongs to the work tree `tree` (a real root path), without asking git: its recorded tree, or, for
 * a session stored before trees were recorded, its directory being `tree` or below it. The stores' `tree` filter
 * applies the same rule, so a listing costs no git call per session.
 */
export const inTree = (session: Pick<Session, "tree" | "directory">, tree: string): boolean =>
  session.tree !== undefined
    ? session.tree === tree
    : session.directory === tree || session.directory.startsWith(tree.endsWith("/") ? tree : `${tree}/`)

export const sessionNotFound = (sessionID: string) =>
  new SessionNotFound({
    sessionID,
    message: `No session "${sessionID}". List sessions with \`lathe session list\`.`
  })

export const messageNotFound = (sessionID: string, messageID: string) =>
  new MessageNotFound({ sessionID, messageID, message: `No message "${messageID}" in session "${sessionID}".` })

/** A session's totals, for a list of sessions: what `lathe web`'s list page shows without reading every part. */
export interface SessionSummary {
  readonly sessionID: string
  /** Model steps (`step-finish` parts). */
  readonly steps: number
  /** Summed over the assistant messages (each sums its steps and the subagents they ran). */
  readonly tokens: Tokens
  /** USD, summed likewise. */
  readonly cost: number
  /** Distinct files the steps changed (the `patch` parts). */
  readonly files: number
  /** The agent and `provider/model` of the first answer, when there is one. */
  readonly agent?: string
  readonly model?: string
  /** Milliseconds the answers took, summed (each from its creation to its completion). */
  readonly ms: number
}

/**
 * Sessions, messages and parts. Writes are upserts keyed by id; reads return messages in id order (ids
 * ascend in creation order) with their parts in id order. A durable layer may batch writes; `flush` forces
 * them out.
 */
export class SessionStore extends Context.Service<
  SessionStore,
  {
    /** Creates or replaces a session. */
    readonly putSession: (session: Session) => Effect.Effect<void, StoreError>
    readonly getSession: (sessionID: string) => Effect.Effect<Session, SessionNotFound | StoreError>
    /** Sessions newest first (by `time.updated`). */
    readonly listSessions: (filter?: SessionFilter) => Effect.Effect<ReadonlyArray<Session>, StoreError>
    /** Deletes a session, its messages and parts, and its child sessions. */
    readonly deleteSession: (sessionID: string) => Effect.Effect<void, StoreError>
    /** Creates or replaces a message. */
    readonly putMessage: (message: Message) => Effect.Effect<void, StoreError>
    readonly getMessage: (
      sessionID: string,
      messageID: string
    ) => Effect.Effect<MessageWithParts, MessageNotFound | StoreError>
    /** Every message of a session with its parts, oldest first. */
    readonly messages: (sessionID: string) => Effect.Effect<ReadonlyArray<MessageWithParts>, StoreError>
    /** Removes a message and its parts. */
    readonly removeMessage: (sessionID: string, messageID: string) => Effect.Effect<void, StoreError>
    /** Creates or replaces a part. */
    readonly putPart: (part: Part) => Effect.Effect<void, StoreError>
    readonly removePart: (sessionID: string, messageID: string, partID: string) => Effect.Effect<void, StoreError>
    /** Writes out anything batched. */
    readonly flush: Effect.Effect<void, StoreError>
    /**
     * The totals of these sessions (in their order) from one aggregate query, when the store has one; without it,
     * `sessionSummaries` reads each session's messages.
     */
    readonly summaries?: (sessionIDs: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<SessionSummary>, StoreError>
  }
>()("@lathe/core/SessionStore") {
  /** A store in memory, for tests and throwaway runs. Each layer build starts empty. */
  static readonly memory = Layer.sync(SessionStore, () => makeMemoryStore())
}

const byId = <T extends { readonly id: string }>(a: T, b: T) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

/** The in-memory store behind `SessionStore.memory`. */
export const makeMemoryStore = () => {
  const sessions = new Map<string, Session>()
  // sessionID → messageID → { info, parts by id }
  const messages = new Map<string, Map<string, { info: Message; parts: Map<string, Part> }>>()

  const sessionMessages = (sessionID: string) => {
    let map = messages.get(sessionID)
    if (!map) {
      map = new Map()
      messages.set(sessionID, map)
    }
    return map
  }

  const snapshot = (entry: { info: Message; parts: Map<string, Part> }): MessageWithParts => ({
    info: entry.info,
    parts: [...entry.parts.values()].sort(byId)
  })

  const deleteTree = (sessionID: string) => {
    for (const child of [...sessions.values()].filter((s) => s.parentID === sessionID)) deleteTree(child.id)
    sessions.delete(sessionID)
    messages.delete(sessionID)
  }

  return SessionStore.of({
    putSession: (session) => Effect.sync(() => void sessions.set(session.id, session)),
    getSession: (sessionID) => {
      const session = sessions.get(sessionID)
      return session ? Effect.succeed(session) : Effect.fail(sessionNotFound(sessionID))
    },
    listSessions: (filter = {}) =>
      Effect.sync(() => {
        const list = [...sessions.values()]
          .filter((s) => filter.projectID === undefined || s.projectID === filter.projectID)
          .filter((s) => filter.tree === undefined || inTree(s, filter.tree))
          .filter((s) =>
            filter.parentID === undefined
              ? true
              : filter.parentID === null
                ? !s.parentID
                : s.parentID === filter.parentID
          )
          .sort((a, b) => b.time.updated - a.time.updated || (a.id < b.id ? 1 : -1))
        return filter.limit === undefined ? list : list.slice(0, filter.limit)
      }),
    deleteSession: (sessionID) => Effect.sync(() => deleteTree(sessionID)),
    putMessage: (message) =>
      Effect.sync(() => {
        const map = sessionMessages(message.sessionID)
        const entry = map.get(message.id)
        if (entry) entry.info = message
        else map.set(message.id, { info: message, parts: new Map() })
      }),
    getMessage: (sessionID, messageID) => {
      const entry = messages.get(sessionID)?.get(messageID)
      return entry ? Effect.succeed(snapshot(entry)) : Effect.fail(messageNotFound(sessionID, messageID))
    },
    messages: (sessionID) =>
      Effect.sync(() =>
        [...(messages.get(sessionID)?.values() ?? [])].map(snapshot).sort((a, b) => byId(a.info, b.info))
      ),
    removeMessage: (sessionID, messageID) => Effect.sync(() => void messages.get(sessionID)?.delete(messageID)),
    putPart: (part) => {
      const entry = messages.get(part.sessionID)?.get(part.messageID)
      if (!entry) {
        return Effect.fail(
          new StoreError({
            operation: "putPart",
            message: `Part ${part.id} was written before its message ${part.messageID}; write the message first.`
          })
        )
      }
      return Effect.sync(() => void entry.parts.set(part.id, part))
    },
    removePart: (sessionID, messageID, partID) =>
      Effect.sync(() => void messages.get(sessionID)?.get(messageID)?.parts.delete(partID)),
    flush: Effect.void
  })
}
