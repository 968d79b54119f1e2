/**
 * @lathe/snapshot: the real `Snapshot` layer for Lathe, a shadow git history of the work tree with undo and redo.
 *
 * ```ts
 * const app = Layer.provide(SnapshotGit.layer, Layer.mergeAll(Paths.layer(), Config.layer))
 * ```
 */
export { KEEP_DAYS } from "./gc.js"
export type { LockOptions } from "./lock.js"
export { SnapshotGit, type SnapshotGitOptions } from "./snapshot-git.js"
export { defaultLimits, type Limits } from "./track.js"
export { folderBudget, whyNoWatch } from "./watch.js"
