import { Context, type Effect } from "effect"
import type { WorkspaceConflict, WorkspaceLogError, WorkspaceNotFound } from "./errors.js"

/** Where a session's work tree comes from: the repository as given, the ref asked for, and the commit it named. */
export interface WorkspaceOrigin {
  /** A git URL or a local path, exactly as the session was created with (it may carry credentials). */
  readonly repo: string
  /** The branch, tag or commit asked for; `undefined` for the remote's HEAD. */
  readonly ref?: string | undefined
  /** The full commit hash the ref resolved to when the session was created; checkpoints are patches against it. */
  readonly base: string
}

/** One checkpoint: the cumulative patch against the base (`git diff --binary` bytes) and its hash. */
export interface CheckpointInput {
  readonly patch: Uint8Array
  /** A hash of `patch` (hex); a record with the newest checkpoint's hash is a no-op. */
  readonly hash: string
}

/** What the log knows of a session: its origin and its newest checkpoint, if any. */
export interface WorkspaceEntry extends WorkspaceOrigin {
  /** The newest checkpoint's number (1, 2, …), `undefined` before the first. */
  readonly checkpoint?: number | undefined
  readonly patch?: Uint8Array | undefined
  readonly hash?: string | undefined
  /** When the entry last changed (epoch milliseconds, from `Clock`). */
  readonly updated: number
}

/** How many checkpoints a session keeps unless told otherwise. */
export const defaultKeep = 20

/** Options shared by the log's layers. */
export interface WorkspaceLogOptions {
  /** Checkpoints kept per session, newest first (default 20, at least 1). */
  readonly keep?: number
}

/** The log's operations (what every layer implements). */
export interface WorkspaceLogShape {
  /**
   * Records a session's origin, once. Calling it again with the same origin succeeds and changes nothing; with
   * another repo, ref or base it fails with `WorkspaceConflict` (the first creation wins).
   */
  readonly begin: (
    sessionID: string,
    origin: WorkspaceOrigin
  ) => Effect.Effect<void, WorkspaceConflict | WorkspaceLogError>
  /**
   * Records a checkpoint and returns its number: one more than the newest, never shared by two concurrent calls.
   * When `hash` equals the newest checkpoint's, nothing is written and the newest number is returned. Only the
   * newest `keep` checkpoints are kept. Fails with `WorkspaceNotFound` for a session that was never begun.
   */
  readonly record: (
    sessionID: string,
    checkpoint: CheckpointInput
  ) => Effect.Effect<number, WorkspaceNotFound | WorkspaceLogError>
  /** The session's origin and newest checkpoint, or `undefined` when it has no workspace. */
  readonly latest: (sessionID: string) => Effect.Effect<WorkspaceEntry | undefined, WorkspaceLogError>
  /**
   * The kept checkpoint `checkpoint` of the session (its patch and hash), or `undefined` when it was never recorded
   * or is no longer kept.
   */
  readonly at: (sessionID: string, checkpoint: number) => Effect.Effect<CheckpointInput | undefined, WorkspaceLogError>
  /** The numbers of the checkpoints kept for the session, oldest first (empty when there are none). */
  readonly checkpoints: (sessionID: string) => Effect.Effect<ReadonlyArray<number>, WorkspaceLogError>
  /** Forgets the session's workspace and all its checkpoints (no-op when there is none). */
  readonly remove: (sessionID: string) => Effect.Effect<void, WorkspaceLogError>
}

/**
 * The durable record of each session's workspace: where it was cloned from, the base commit, and numbered
 * checkpoints (cumulative patches against the base). Any runner rebuilds a work tree from `latest` alone. The
 * layers live beside their backends: `MemoryWorkspaceLog.layer` (workspace-log-memory.ts) and `SqlWorkspaceLog.layer`
 * (workspace-log-sql.ts).
 */
export class WorkspaceLog extends Context.Service<WorkspaceLog, WorkspaceLogShape>()("@lathe/workspace/WorkspaceLog") {}

/** The number of checkpoints a layer keeps per session: `options.keep` when it is an integer of 1 or more, else 20. */
export const keptCheckpoints = (options: WorkspaceLogOptions): number => {
  const keep = options.keep ?? defaultKeep
  return Number.isInteger(keep) && keep >= 1 ? keep : defaultKeep
}
