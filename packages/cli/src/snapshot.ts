import { SnapshotGit } from "@lathe/snapshot"

/** The snapshot layer of a run: a shadow git history of the project, prepared on the first mutating tool (off, with a log line, where git cannot work). */
export const snapshotLayer = SnapshotGit.layerLazy()
