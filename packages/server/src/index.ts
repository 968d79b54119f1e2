/**
 * @lathe/server: the Lathe server behind `lathe serve`. It implements the HTTP + SSE API of `@lathe/sdk` (`LatheApi`)
 * over Lathe's sessions, with one app per directory built by the host (the CLI), a bearer token always (Host, Origin,
 * body size and content-type checked around it), requests kept to the served directories, event replay after a
 * reconnect, and a bounded drain on shutdown.
 */
export {
  type AppFactory,
  Directories,
  type DirectoryApp,
  type EventSink,
  resolveDirectory,
  type ServerServices
} from "./directories.js"
export { BadAllowedDirectory, DirectoryScope, OutsideDirectory } from "./directory-scope.js"
export {
  type EventCursor,
  EventLog,
  type EventPosition,
  type EventSubscription,
  eventSessionID,
  type LoggedEvent
} from "./event-log.js"
export { cursorOf, HEARTBEAT_MS, renderSse } from "./events-api.js"
export { MAX_BODY_BYTES } from "./guard.js"
export { isLoopback, type LatheServer, ServeError, type ServeOptions, serve } from "./serve.js"
export {
  type PendingAsk,
  type PendingAsked,
  type RunnerResponse,
  type SessionRunner,
  type TurnAccepted,
  type TurnPrompt,
  Turns
} from "./turns.js"
