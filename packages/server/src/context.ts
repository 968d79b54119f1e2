import { SessionStore } from "@lathe/core"
import type { Session, SessionStatus } from "@lathe/core/schema"
import type { SessionInfo } from "@lathe/sdk"
import type { Workspaces } from "@lathe/workspace"
import { Effect, Exit } from "effect"
import type { Directories, DirectoryApp, ServerServices } from "./directories.js"
import type { DirectoryScope } from "./directory-scope.js"
import { exitError } from "./errors.js"
import type { EventLog } from "./event-log.js"
import type { SessionRunner } from "./turns.js"

/** Runs an effect in a directory's app; rejects with the effect's own typed error (or defect), unwrapped. */
export const runIn = async <A, E>(app: DirectoryApp, effect: Effect.Effect<A, E, ServerServices>): Promise<A> => {
  const exit = await app.runtime.runPromiseExit(effect)
  if (Exit.isSuccess(exit)) return exit.value
  throw exitError(exit)
}

/** What every handler shares: the apps, the event log, the turns, and what the server remembers of sessions. */
export class ServerContext {
  /** Sessions' directories, so a request finds its app without reading the store. */
  private readonly sessionDirs = new Map<string, string>()
  /** The model each session was created with (the API's `model`; not stored with the session). */
  readonly sessionModels = new Map<string, string>()
  /** The last status each session published. */
  private readonly statuses = new Map<string, SessionStatus["type"]>()
  /** Set when the server starts draining: no new sessions or prompts (503). */
  draining = false

  constructor(
    readonly directories: Directories,
    /** The app of the server's own directory (built before the port is bound). */
    readonly home: DirectoryApp,
    readonly log: EventLog,
    readonly turns: SessionRunner,
    readonly version: string,
    /** The directories requests may name; a session of another directory is refused (403). */
    readonly scope: DirectoryScope,
    readonly options: {
      /** Every session is served through the home app (a cluster front end: directories live on the runners). */
      readonly homeOnly?: boolean
      /** Clones for sessions created with a `repo`. */
      readonly workspaces?: Workspaces["Service"]
    } = {}
  ) {
    log.subscribe(
      undefined,
      ({ event }) => {
        if (event.type === "session.status") this.statuses.set(event.sessionID, event.status.type)
        else if (event.type === "session.created") this.sessionDirs.set(event.session.id, event.session.directory)
        else if (event.type === "session.deleted") {
          this.sessionDirs.delete(event.sessionID)
          this.statuses.delete(event.sessionID)
          this.sessionModels.delete(event.sessionID)
        }
      },
      () => {}
    )
  }

  /** Remembers a session's directory (a session just created, whose store write may still be batched). */
  remember(session: Session): void {
    this.sessionDirs.set(session.id, session.directory)
  }

  /**
   * Throws OutsideDirectory for a session whose directory is outside the scope (one `lathe` ran elsewhere, in the
   * shared store); a session's clone (`workspace`) was made by the server itself and is always in scope.
   */
  private inScope(session: Session): void {
    if (session.workspace === undefined) this.scope.check(session.directory, `Session ${session.id}'s directory`)
  }

  /** The session and the app of its directory; rejects with SessionNotFound, or OutsideDirectory (see `scope`). */
  async session(sessionID: string): Promise<{ session: Session; app: DirectoryApp }> {
    if (this.options.homeOnly) {
      const session = await runIn(
        this.home,
        Effect.flatMap(SessionStore, (store) => store.getSession(sessionID))
      )
      this.inScope(session)
      if (session.parentID) this.log.learnParent(session.id, session.parentID)
      return { session, app: this.home }
    }
    const known = this.sessionDirs.get(sessionID)
    const home = known === undefined || known === this.home.directory ? this.home : undefined
    const first = home ?? (await this.directories.get(known ?? this.home.directory))
    const session = await runIn(
      first,
      Effect.flatMap(SessionStore, (store) => store.getSession(sessionID))
    )
    this.inScope(session)
    if (session.parentID) this.log.learnParent(session.id, session.parentID)
    this.sessionDirs.set(session.id, session.directory)
    if (session.directory === first.directory) return { session, app: first }
    const app = await this.directories.get(session.directory)
    return { session, app }
  }

  /** Whether GET /sessions shows a session: its directory is in scope, or it is the server's own clone. */
  listed(session: Session): boolean {
    return session.workspace !== undefined || this.scope.allows(session.directory)
  }

  /** A session as the API shows it. */
  info(session: Session): SessionInfo {
    const model = this.sessionModels.get(session.id)
    const status = !this.turns.isRunning(session.id)
      ? "idle"
      : this.statuses.get(session.id) === "retry"
        ? "retry"
        : "busy"
    return { ...session, ...(model ? { model } : {}), status }
  }
}
