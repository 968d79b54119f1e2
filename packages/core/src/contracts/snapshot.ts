import { Context, Effect, Layer, Schema } from "effect"

/** The files a step changed since a snapshot. */
export interface SnapshotPatch {
  /** The tree hash the change is measured from. */
  readonly hash: string
  /** Paths relative to the project root. */
  readonly files: ReadonlyArray<string>
  /**
   * The tree the change is measured to: the work tree as recorded when the patch was taken (what `track` would return
   * right after), when the service took one.
   */
  readonly after?: string
  /** Lines added and removed per file (`files` order), when the service counted them; binary files count zero. */
  readonly lines?: ReadonlyArray<{ readonly file: string; readonly additions: number; readonly deletions: number }>
}

/** One file's change between two snapshots, for showing what a step did. */
export interface FileDiff {
  readonly file: string
  readonly status: "added" | "modified" | "deleted"
  readonly before: string
  readonly after: string
  readonly additions: number
  readonly deletions: number
}

/** A snapshot operation failed: git missing or failing, a lock held too long, a hash that does not exist. */
export class SnapshotError extends Schema.TaggedError<SnapshotError>()("SnapshotError", {
  operation: Schema.String,
  message: Schema.String
}) {}

const disabledError = (operation: string) =>
  new SnapshotError({
    operation,
    message: `Snapshots are disabled, so there is nothing to ${operation}. Enable them to undo agent changes.`
  })

/**
 * A shadow history of the work tree, so every step can be undone. The real layer lives in
 * `@lathe/snapshot` (a separate git directory per project, never the user's `.git`).
 */
export class Snapshot extends Context.Service<
  Snapshot,
  {
    /** Records the work tree; returns its tree hash, or `undefined` when snapshots are off. */
    readonly track: Effect.Effect<string | undefined, SnapshotError>
    /**
     * Records the work tree as a step that ended at `endedAt` (ms since the epoch, this machine's clock: `Date.now()`)
     * left it: like `track`, but a file the service can tell was modified after that moment (its modification time,
     * where the file system's clock is this machine's) is recorded as in the previous snapshot and looked at again by
     * the next one. The loop takes the tree after a step this way once the next request is out, so that a person's
     * save landing meanwhile is not counted as the step's change (undo would take it back). Optional: without it the
     * loop uses `track`.
     */
    readonly trackEnded?: (endedAt: number) => Effect.Effect<string | undefined, SnapshotError>
    /**
     * The files changed since `hash` (added, modified or deleted): in the work tree now, or between the snapshots
     * `hash` and `to` when given (then the work tree is not read, and `after` is `to`).
     */
    readonly patch: (hash: string, to?: string) => Effect.Effect<SnapshotPatch, SnapshotError>
    /** Unified diff text of the work tree since `hash`, or between the snapshots `hash` and `to` when given. */
    readonly diff: (hash: string, to?: string) => Effect.Effect<string, SnapshotError>
    /** Per-file before/after between two snapshots. */
    readonly diffFull: (from: string, to: string) => Effect.Effect<ReadonlyArray<FileDiff>, SnapshotError>
    /** Makes the work tree exactly as at `hash` (files added since are removed). */
    readonly restore: (hash: string) => Effect.Effect<void, SnapshotError>
    /** Undoes each patch per file: a file that existed at the patch's hash gets its content back, else is deleted. */
    readonly revert: (patches: ReadonlyArray<SnapshotPatch>) => Effect.Effect<void, SnapshotError>
  }
>()("@lathe/core/Snapshot") {
  /** Snapshots off: tracking records nothing and costs nothing; undo fails with a clear message. */
  static readonly disabled = Layer.succeed(
    Snapshot,
    Snapshot.of({
      track: Effect.succeed(undefined),
      patch: (hash) => Effect.succeed({ hash, files: [] }),
      diff: () => Effect.succeed(""),
      diffFull: () => Effect.succeed([]),
      restore: () => Effect.fail(disabledError("restore")),
      revert: () => Effect.fail(disabledError("revert"))
    })
  )
}
