import { type SessionNotFound, SessionStore, type StoreError } from "@lathe/core"
import { AuditEntry, appendAudit, readAudit } from "@lathe/permission"
import { Message, Part, Session } from "@lathe/plugin/schema"
import { Effect, Schema } from "effect"

/**
 * A stored session as one document: what `lathe session show --json` prints, `lathe export --format json` writes and
 * `lathe import` reads back. Messages and parts are the store's own records, in order; each tool call carries the
 * permission decisions the audit trail recorded for it, and the subagent session it started is nested under it.
 */
export interface SessionDocument {
  /** Always `lathe.session`: says what the file is. */
  readonly format: "lathe.session"
  readonly version: 1
  readonly session: Session
  readonly messages: ReadonlyArray<DocumentMessage>
  /** Subagent sessions no part of this session names (e.g. the call that started them was removed). */
  readonly subagents: ReadonlyArray<SessionDocument>
}

/** A message with its parts, in order. */
export interface DocumentMessage {
  readonly info: Message
  readonly parts: ReadonlyArray<DocumentPart>
}

/** A stored part, with what the audit trail and the store know about it. */
export interface DocumentPart {
  readonly part: Part
  /** For a tool call: each permission decision made for it (rule, hook, the person's reply), oldest first. */
  readonly decisions?: ReadonlyArray<AuditEntry>
  /** For a `task` call (or a subtask part): the subagent session it started, nested. */
  readonly subagent?: SessionDocument
}

const DocumentPart = Schema.Struct({
  part: Part,
  decisions: Schema.optionalKey(Schema.Array(AuditEntry)),
  subagent: Schema.optionalKey(Schema.suspend((): Schema.Codec<SessionDocument> => SessionDocument))
})

/** The schema of a {@link SessionDocument}. */
export const SessionDocument: Schema.Codec<SessionDocument> = Schema.Struct({
  format: Schema.Literal("lathe.session"),
  version: Schema.Literal(1),
  session: Session,
  messages: Schema.Array(Schema.Struct({ info: Message, parts: Schema.Array(DocumentPart) })),
  subagents: Schema.Array(Schema.suspend((): Schema.Codec<SessionDocument> => SessionDocument))
})

/** A document could not be read or written back into the store. */
export class SessionImportFailed extends Schema.TaggedError<SessionImportFailed>()("SessionImportFailed", {
  message: Schema.String
}) {}

/** The session a part started: a task call's `metadata.sessionID`, or a subtask part's `childSessionID`. */
export const startedSession = (part: Part): string | undefined => {
  if (part.type === "subtask") return part.childSessionID
  if (part.type !== "tool" || part.state.status === "pending") return undefined
  const id = part.state.metadata?.sessionID
  return typeof id === "string" ? id : undefined
}

/** Reads a session, its messages and its subagent sessions (recursively) from the store, with `audit`'s decisions. */
export const loadDocument = (
  sessionID: string,
  audit: ReadonlyArray<AuditEntry>
): Effect.Effect<SessionDocument, SessionNotFound | StoreError, SessionStore> =>
  Effect.gen(function* () {
    const store = yield* SessionStore
    const session = yield* store.getSession(sessionID)
    const stored = yield* store.messages(sessionID)
    // Children in creation order (ids ascend with time); the store lists them by last update.
    const childIDs = (yield* store.listSessions({ parentID: sessionID })).map((child) => child.id).sort()
    const children = new Map<string, SessionDocument>()
    for (const id of childIDs) children.set(id, yield* loadDocument(id, audit))
    const nested = new Set<string>()
    const decisionsOf = (callID: string) =>
      audit.filter((entry) => entry.sessionID === sessionID && entry.callID === callID)
    const messages = stored.map(
      (message): DocumentMessage => ({
        info: message.info,
        parts: message.parts.map((part): DocumentPart => {
          const decisions = part.type === "tool" ? decisionsOf(part.callID) : []
          const childID = startedSession(part)
          const child = childID === undefined || nested.has(childID) ? undefined : children.get(childID)
          if (child) nested.add(child.session.id)
          return { part, ...(decisions.length > 0 ? { decisions } : {}), ...(child ? { subagent: child } : {}) }
        })
      })
    )
    const subagents = [...children.values()].filter((child) => !nested.has(child.session.id))
    return { format: "lathe.session", version: 1, session, messages, subagents } satisfies SessionDocument
  })

/** Every session of a document, the top one first, each before its subagents. */
export const documentSessions = (doc: SessionDocument): Array<SessionDocument> => [
  doc,
  ...doc.messages.flatMap((m) => m.parts.flatMap((p) => (p.subagent ? documentSessions(p.subagent) : []))),
  ...doc.subagents.flatMap(documentSessions)
]

/** The subagent sessions nested directly in a document. */
const directChildren = (doc: SessionDocument): Array<SessionDocument> => [
  ...doc.messages.flatMap((m) => m.parts.flatMap((p) => (p.subagent ? [p.subagent] : []))),
  ...doc.subagents
]

/** What makes a document unfit to store, in words; empty when it is consistent. */
const inconsistencies = (doc: SessionDocument): Array<string> => {
  const problems: Array<string> = []
  const seen = new Set<string>()
  const check = (d: SessionDocument) => {
    const id = d.session.id
    if (seen.has(id)) problems.push(`session ${id} appears twice`)
    seen.add(id)
    for (const { info, parts } of d.messages) {
      if (info.sessionID !== id) problems.push(`message ${info.id} names session ${info.sessionID}, not ${id}`)
      for (const { part, decisions } of parts) {
        if (part.sessionID !== id || part.messageID !== info.id)
          problems.push(`part ${part.id} names session ${part.sessionID} and message ${part.messageID}`)
        for (const entry of decisions ?? [])
          if (entry.sessionID !== id || part.type !== "tool" || entry.callID !== part.callID)
            problems.push(`a permission decision under part ${part.id} belongs to another call or session`)
      }
    }
    for (const child of directChildren(d)) {
      if (child.session.parentID !== id)
        problems.push(
          `subagent session ${child.session.id} is nested under ${id} but names parent ${child.session.parentID}`
        )
      check(child)
    }
  }
  check(doc)
  return problems
}

/** Decodes a document from its JSON text (a file someone hands over), with a message saying what is wrong. */
export const decodeDocument = (text: string, source: string): Effect.Effect<SessionDocument, SessionImportFailed> =>
  Schema.decodeUnknownEffect(Schema.fromJsonString(SessionDocument))(text).pipe(
    Effect.mapError(
      (error) =>
        new SessionImportFailed({
          message: `${source} is not a Lathe session document (one written by \`lathe export --format json\`): ${error.message}`
        })
    )
  )

/**
 * Writes a document's sessions, messages and parts into the store and its decisions into the audit trail at
 * `auditFile`. Refuses a document whose records do not belong together, and one whose sessions the store already
 * holds (nothing is overwritten).
 */
export const importDocument = Effect.fn("SessionDocument.import")(function* (doc: SessionDocument, auditFile: string) {
  const problems = inconsistencies(doc)
  if (problems.length > 0)
    return yield* new SessionImportFailed({
      message: `The document's records do not belong together, so nothing was imported: ${problems.slice(0, 5).join("; ")}.`
    })
  const store = yield* SessionStore
  const sessions = documentSessions(doc)
  for (const { session } of sessions) {
    const existing = yield* store.getSession(session.id).pipe(Effect.option)
    if (existing._tag === "Some")
      return yield* new SessionImportFailed({
        message: `This store already holds session ${session.id}${session.parentID ? ` (a subagent session of ${doc.session.id})` : ""}, so nothing was imported. Look at it with \`lathe session show ${doc.session.id}\`.`
      })
  }
  // Parents before children, each message before its parts.
  for (const { session, messages } of sessions) {
    yield* store.putSession(session)
    for (const { info, parts } of messages) {
      yield* store.putMessage(info)
      for (const { part } of parts) yield* store.putPart(part)
    }
  }
  yield* store.flush
  const ids = new Set(sessions.map((d) => d.session.id))
  const already = new Set(
    (yield* Effect.tryPromise({
      try: () => readAudit(auditFile),
      catch: (error) =>
        new SessionImportFailed({
          message: `The sessions were imported, but the audit trail ${auditFile} could not be read to add their permission decisions: ${error instanceof Error ? error.message : String(error)}`
        })
    }))
      .filter((entry) => ids.has(entry.sessionID))
      .map((entry) => JSON.stringify(entry))
  )
  const decisions = sessions.flatMap((d) => d.messages.flatMap((m) => m.parts.flatMap((p) => p.decisions ?? [])))
  yield* appendAudit(
    auditFile,
    decisions.filter((entry) => !already.has(JSON.stringify(entry)))
  )
  return { sessions: sessions.length, messages: sessions.reduce((n, d) => n + d.messages.length, 0) }
})
