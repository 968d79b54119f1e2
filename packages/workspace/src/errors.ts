import { Schema } from "effect"

/**
 * The workspace log could not be read or written (the database is down, a migration failed). `operation` names
 * what was attempted; `message` is for the person running Lathe.
 */
export class WorkspaceLogError extends Schema.TaggedError<WorkspaceLogError>()("WorkspaceLogError", {
  operation: Schema.String,
  message: Schema.String
}) {}

/** `begin` was called again for a session with another repository, ref or base commit than the first time. */
export class WorkspaceConflict extends Schema.TaggedError<WorkspaceConflict>()("WorkspaceConflict", {
  sessionID: Schema.String,
  message: Schema.String
}) {}

/** The session has no workspace: it was never begun (or was removed), or was never opened on this runner. */
export class WorkspaceNotFound extends Schema.TaggedError<WorkspaceNotFound>()("WorkspaceNotFound", {
  sessionID: Schema.String,
  message: Schema.String
}) {}

/**
 * The workspace spec was refused before running git: a URL or ref that could be read as an option, a forbidden
 * transport, an unsafe session id. The message says what to change.
 */
export class WorkspaceInvalid extends Schema.TaggedError<WorkspaceInvalid>()("WorkspaceInvalid", {
  message: Schema.String
}) {}

/** Cloning the repository failed (not found, private, unreachable). `repo` has any credentials redacted. */
export class WorkspaceCloneError extends Schema.TaggedError<WorkspaceCloneError>()("WorkspaceCloneError", {
  repo: Schema.String,
  message: Schema.String
}) {}

/** The ref names no branch, tag or commit of the repository. `repo` has any credentials redacted. */
export class WorkspaceRefNotFound extends Schema.TaggedError<WorkspaceRefNotFound>()("WorkspaceRefNotFound", {
  repo: Schema.String,
  ref: Schema.String,
  message: Schema.String
}) {}

/** A git command on the local checkout failed (disk full, a patch that no longer applies, git missing). */
export class WorkspaceGitError extends Schema.TaggedError<WorkspaceGitError>()("WorkspaceGitError", {
  operation: Schema.String,
  message: Schema.String
}) {}

/** Every error `Workspaces` may fail with. */
export type WorkspaceError =
  | WorkspaceLogError
  | WorkspaceConflict
  | WorkspaceNotFound
  | WorkspaceInvalid
  | WorkspaceCloneError
  | WorkspaceRefNotFound
  | WorkspaceGitError

/** A session's origin as `begin` compares it (see `WorkspaceOrigin` in workspace-log.ts). */
interface Origin {
  readonly repo: string
  readonly ref?: string | undefined
  readonly base: string
}

/** Whether a second `begin` names the same origin as the first. */
export const sameOrigin = (a: Origin, b: Origin): boolean =>
  a.repo === b.repo && (a.ref ?? undefined) === (b.ref ?? undefined) && a.base === b.base

/** The error for a `begin` that disagrees with the first one (credentials in URLs never appear). */
export const conflict = (sessionID: string, first: Origin, second: Origin): WorkspaceConflict =>
  new WorkspaceConflict({
    sessionID,
    message:
      `Session ${sessionID} already has a workspace (ref ${first.ref ?? "HEAD"} at ${first.base.slice(0, 12)}); ` +
      `it cannot begin again from ${second.repo === first.repo ? "the same repository" : "another repository"} ` +
      `at ref ${second.ref ?? "HEAD"} (${second.base.slice(0, 12)}). Open it without a spec to continue it, ` +
      "or start a new session for the other ref."
  })

/** The error for a `record` on a session that was never begun. */
export const notBegun = (sessionID: string): WorkspaceNotFound =>
  new WorkspaceNotFound({
    sessionID,
    message: `Session ${sessionID} has no workspace to checkpoint: open it with a repo first.`
  })
