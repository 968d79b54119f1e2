import type { Session } from "@lathe/plugin/schema"
import { Clock, Effect } from "effect"
import { locateProject, Paths } from "../config/paths.js"
import { ascendingId } from "../schema/id.js"
import { SessionStore } from "./session-store.js"
import { SessionWriter } from "./session-writer.js"

/** The title of a session nobody has named yet; its first prompt names it. */
export const DEFAULT_SESSION_TITLE = "New session"

/** What a new session starts with. */
export interface NewSession {
  readonly title?: string
  /** The parent session, for a subagent's child session. */
  readonly parentID?: string
  readonly agent?: string
}

/** Creates a session in the current project and directory, stores it and publishes `session.created`. */
export const createSession = Effect.fn("Session.create")(function* (options: NewSession = {}) {
  const writer = yield* SessionWriter
  const paths = yield* Paths
  const now = yield* Clock.currentTimeMillis
  const session: Session = {
    id: ascendingId("session"),
    projectID: paths.projectID,
    directory: paths.directory,
    tree: paths.root,
    title: options.title ?? DEFAULT_SESSION_TITLE,
    time: { created: now, updated: now },
    ...(options.parentID ? { parentID: options.parentID } : {}),
    ...(options.agent ? { agent: options.agent } : {})
  }
  yield* writer.createSession(session)
  return session
})

/**
 * The work tree a session ran in: its recorded tree, else (a session stored before trees were recorded) the project
 * root holding its stored directory, found with git once; the directory itself when git finds no repository there.
 * For a check before writing files (undo, redo), where a nested worktree must not pass for its parent.
 */
export const sessionTree = async (session: Pick<Session, "tree" | "directory">): Promise<string> =>
  session.tree ?? (await locateProject(session.directory)).root

/**
 * Deletes a session nothing is stored in yet: one made for a prompt that failed before the prompt was stored (an
 * unknown agent or model, no provider), so no empty session is left behind; the deletion is announced
 * (`session.deleted`). True when it deleted it.
 */
export const discardIfEmpty = Effect.fn("Session.discardIfEmpty")(function* (sessionID: string) {
  const store = yield* SessionStore
  if ((yield* store.messages(sessionID)).length > 0) return false
  yield* (yield* SessionWriter).deleteSession(sessionID)
  return true
})
