import { mkdir } from "node:fs/promises"
import { isAbsolute, join, resolve } from "node:path"
import { Context, Effect, Layer, Semaphore } from "effect"
import {
  applyPatch,
  checkoutBase,
  cloneBare,
  currentPatch,
  emptyHash,
  hashPatch,
  headOf,
  moveInto,
  removeTree,
  resolveRef,
  restore
} from "./checkout.js"
import {
  conflict,
  type WorkspaceError,
  WorkspaceGitError,
  WorkspaceInvalid,
  type WorkspaceLogError,
  WorkspaceNotFound
} from "./errors.js"
import { checkRef, checkRepo } from "./git.js"
import { type WorkspaceEntry, WorkspaceLog } from "./workspace-log.js"

/** Where a new session's work tree comes from (an HTTP request's input: everything in it is checked). */
export interface WorkspaceSpec {
  /** Any git URL (https, ssh, git, file) or a local path. Remote-helper transports (`ext::`, `fd::`) are refused. */
  readonly repo: string
  /** A branch, tag or commit; the remote's HEAD when left out. */
  readonly ref?: string | undefined
}

/** What `checkpoint` did. */
export interface CheckpointResult {
  /** The newest checkpoint's number after the call; `undefined` while the tree has never differed from its base. */
  readonly checkpoint: number | undefined
  /** Whether this call wrote a checkpoint (false when the tree was unchanged since the newest one). */
  readonly recorded: boolean
}

/** Options of `Workspaces.layer`. */
export interface WorkspacesOptions {
  /** The runner's directory for checkouts (one sub-directory per session); created when missing. */
  readonly root: string
}

/** The operations of `Workspaces`. */
export interface WorkspacesShape {
  /**
   * A checkout of the session, ready to work in; returns its absolute directory. The first open of a session needs
   * `spec`: it clones, resolves the ref to a commit and records it as the base. Later opens (on any runner) rebuild
   * the tree from the log: a checkout already here at the base is reused, and put back to the newest checkpoint
   * when it differs (edits made after the last checkpoint are discarded); otherwise it is cloned again at the base
   * and the newest checkpoint applied. A `spec` naming another repo or ref than the first fails with `WorkspaceConflict`.
   */
  readonly open: (sessionID: string, spec?: WorkspaceSpec) => Effect.Effect<string, WorkspaceError>
  /**
   * Records the session's changes since the base as a new checkpoint; a no-op when the tree is unchanged since the
   * newest one. Never touches the checkout's index or HEAD. Fails with `WorkspaceNotFound` when the session is not
   * open on this runner.
   */
  readonly checkpoint: (sessionID: string) => Effect.Effect<CheckpointResult, WorkspaceError>
  /**
   * Puts the open checkout back to checkpoint `acknowledged` (the base when `undefined`) when the log holds a newer
   * one, and records that tree as the newest checkpoint. A runner calls it when it takes a session over: a checkpoint
   * newer than the last one a completed tool call reported was written by a call whose result never reached the
   * session (the process died or handed the session over in between), so the model was never told it succeeded.
   * Returns whether the tree was rolled back; `false` when nothing is newer, the newest already has the same tree, or
   * `acknowledged` is no longer kept.
   */
  readonly rollback: (sessionID: string, acknowledged: number | undefined) => Effect.Effect<boolean, WorkspaceError>
  /** The session's newest checkpointed patch (`git diff --binary` text; "" before the first), from the log alone. */
  readonly diff: (sessionID: string) => Effect.Effect<string | undefined, WorkspaceLogError>
  /** The directory of the session's checkout when it is open on this runner (a memory lookup). */
  readonly directory: (sessionID: string) => string | undefined
  /** Removes the session's local checkout; its log (and so its work) stays. */
  readonly close: (sessionID: string) => Effect.Effect<void, WorkspaceGitError>
}

interface Open {
  readonly dir: string
  readonly base: string
  /** The hash of the newest recorded patch (`emptyHash` before the first). */
  hash: string
  checkpoint: number | undefined
}

const sessionName = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/

/**
 * Session work trees that any runner can rebuild: a clone at the session's base commit plus its newest checkpoint
 * from `WorkspaceLog`. Calls for one session are serialised; different sessions run in parallel.
 */
export class Workspaces extends Context.Service<Workspaces, WorkspacesShape>()("@lathe/workspace/Workspaces") {
  /** Checkouts under `options.root`, recorded in the `WorkspaceLog` provided. */
  static readonly layer = (options: WorkspacesOptions): Layer.Layer<Workspaces, never, WorkspaceLog> =>
    Layer.effect(
      Workspaces,
      Effect.map(WorkspaceLog, (log) => Workspaces.of(make(log, options)))
    )
}

const make = (log: WorkspaceLog["Service"], options: WorkspacesOptions): WorkspacesShape => {
  const root = isAbsolute(options.root) ? options.root : resolve(options.root)
  const opened = new Map<string, Open>()
  const locks = new Map<string, Semaphore.Semaphore>()
  const serial = (sessionID: string) => {
    let lock = locks.get(sessionID)
    if (!lock) {
      lock = Semaphore.makeUnsafe(1)
      locks.set(sessionID, lock)
    }
    return lock.withPermit
  }

  const checkName = (sessionID: string) =>
    sessionName.test(sessionID) && sessionID !== "." && sessionID !== ".."
      ? Effect.succeed(sessionID)
      : Effect.fail(
          new WorkspaceInvalid({
            message: `The session id "${sessionID}" cannot name a directory: use letters, digits, "_", "-" and "." only.`
          })
        )

  /** Brings `dir` to `entry` (reusing a checkout at its base when there is one) and registers it. */
  const materialise = (sessionID: string, dir: string, entry: WorkspaceEntry) =>
    Effect.gen(function* () {
      const patch = entry.patch ?? new Uint8Array()
      const newest = entry.hash ?? emptyHash
      if ((yield* headOf(dir)) === entry.base) {
        if (hashPatch(yield* currentPatch(dir, entry.base)) !== newest) yield* restore(dir, entry.base, patch)
      } else {
        const tmp = yield* cloneBare(root, sessionID, entry.repo)
        yield* Effect.gen(function* () {
          yield* checkoutBase(tmp, entry.base)
          yield* applyPatch(tmp, patch)
          yield* moveInto(tmp, dir)
        }).pipe(Effect.onError(() => Effect.ignore(removeTree(tmp))))
      }
      opened.set(sessionID, { dir, base: entry.base, hash: newest, checkpoint: entry.checkpoint })
      return dir
    })

  /** The first open: clone, resolve the ref, begin (the first `begin` wins a race), then materialise. */
  const create = (sessionID: string, dir: string, spec: WorkspaceSpec) =>
    Effect.gen(function* () {
      const repo = yield* checkRepo(spec.repo)
      const ref = yield* checkRef(spec.ref)
      const tmp = yield* cloneBare(root, sessionID, repo)
      const base = yield* Effect.gen(function* () {
        const base = yield* resolveRef(tmp, repo, ref)
        // Another runner may have begun this session meanwhile: the first begin wins when it has the same repo.
        const raced = yield* log.begin(sessionID, { repo, ref, base }).pipe(
          Effect.as(false),
          Effect.catchTag("WorkspaceConflict", (error) =>
            Effect.flatMap(log.latest(sessionID), (entry) =>
              entry?.repo === repo ? Effect.succeed(true) : Effect.fail(error)
            )
          )
        )
        if (!raced) {
          yield* checkoutBase(tmp, base)
          yield* moveInto(tmp, dir)
        } else yield* removeTree(tmp)
        return raced ? undefined : base
      }).pipe(Effect.onError(() => Effect.ignore(removeTree(tmp))))
      const entry = yield* log.latest(sessionID)
      if (!entry) return yield* Effect.fail(notOpen(sessionID, "its workspace was removed while it was being opened"))
      if (base !== undefined && entry.base === base && entry.checkpoint === undefined) {
        opened.set(sessionID, { dir, base, hash: emptyHash, checkpoint: undefined })
        return dir
      }
      return yield* materialise(sessionID, dir, entry)
    })

  const open = Effect.fn("Workspaces.open")(function* (sessionID: string, spec?: WorkspaceSpec) {
    yield* checkName(sessionID)
    const dir = join(root, sessionID)
    return yield* serial(sessionID)(
      Effect.gen(function* () {
        yield* Effect.tryPromise({
          try: () => mkdir(root, { recursive: true }),
          catch: (e) =>
            new WorkspaceGitError({
              operation: "create the workspace root",
              message: `Could not create ${root}: ${String(e)}`
            })
        })
        const entry = yield* log.latest(sessionID)
        if (!entry) {
          if (!spec)
            return yield* Effect.fail(
              notOpen(sessionID, "it has no workspace yet: open it with a repo (and a ref) first")
            )
          return yield* create(sessionID, dir, spec)
        }
        if (spec && (spec.repo !== entry.repo || (spec.ref !== undefined && spec.ref !== entry.ref)))
          return yield* Effect.fail(
            conflict(sessionID, entry, { repo: spec.repo, ref: spec.ref, base: "(not resolved)" })
          )
        return yield* materialise(sessionID, dir, entry)
      })
    )
  })

  const checkpoint = Effect.fn("Workspaces.checkpoint")(function* (sessionID: string) {
    return yield* serial(sessionID)(
      Effect.gen(function* () {
        const state = opened.get(sessionID)
        if (!state) return yield* Effect.fail(notOpen(sessionID, "it is not open on this runner"))
        const patch = yield* currentPatch(state.dir, state.base)
        const hash = hashPatch(patch)
        if (hash === state.hash) return { checkpoint: state.checkpoint, recorded: false } satisfies CheckpointResult
        const number = yield* log.record(sessionID, { patch, hash })
        state.hash = hash
        state.checkpoint = number
        return { checkpoint: number, recorded: true } satisfies CheckpointResult
      })
    )
  })

  const rollback = Effect.fn("Workspaces.rollback")(function* (sessionID: string, acknowledged: number | undefined) {
    return yield* serial(sessionID)(
      Effect.gen(function* () {
        const state = opened.get(sessionID)
        if (!state) return yield* Effect.fail(notOpen(sessionID, "it is not open on this runner"))
        if ((state.checkpoint ?? 0) <= (acknowledged ?? 0)) return false
        const target =
          acknowledged === undefined || acknowledged <= 0
            ? { patch: new Uint8Array(), hash: emptyHash }
            : yield* log.at(sessionID, acknowledged)
        // Unknown (no longer kept), or the tree already is that checkpoint (rolled back before, nothing since).
        if (!target || target.hash === state.hash) return false
        yield* restore(state.dir, state.base, target.patch)
        // Recorded again under a new number, so every runner rebuilds (and `diff` serves) the rolled-back tree.
        const number = yield* log.record(sessionID, target)
        state.hash = target.hash
        state.checkpoint = number
        return true
      })
    )
  })

  const diff = Effect.fn("Workspaces.diff")(function* (sessionID: string) {
    const entry = yield* log.latest(sessionID)
    if (!entry) return undefined
    return entry.patch ? Buffer.from(entry.patch).toString("utf8") : ""
  })

  const close = Effect.fn("Workspaces.close")(function* (sessionID: string) {
    yield* serial(sessionID)(
      Effect.gen(function* () {
        const state = opened.get(sessionID)
        opened.delete(sessionID)
        if (state) yield* removeTree(state.dir)
        else if (sessionName.test(sessionID)) yield* removeTree(join(root, sessionID))
      })
    )
  })

  return { open, checkpoint, rollback, diff, close, directory: (sessionID) => opened.get(sessionID)?.dir }
}

const notOpen = (sessionID: string, why: string) =>
  new WorkspaceNotFound({ sessionID, message: `Session ${sessionID} has no workspace here: ${why}.` })
