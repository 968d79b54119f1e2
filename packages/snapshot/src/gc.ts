import { readFileSync, writeFileSync } from "node:fs"
import { writeFile } from "node:fs/promises"
import { join } from "node:path"
import { Clock, Effect } from "effect"
import { git } from "./git.js"
import type { Shadow } from "./shadow-repo.js"

const DAY = 24 * 60 * 60 * 1000

/** Unreferenced snapshots live this long; `patch`/`restore` of an older hash fails with "does not exist". */
export const KEEP_DAYS = 7

const stampFile = (shadow: Shadow) => join(shadow.gitDir, "lathe-gc")

/** `YYYY-MM-DD HH:MM:SS +0000`, a date every git version parses. */
const gitDate = (ms: number) => `${new Date(ms).toISOString().slice(0, 19).replace("T", " ")} +0000`

/**
 * Deletes loose objects that are unreachable and older than 7 days, keeping everything a newer object (a
 * recent snapshot) or the shadow index still uses; the user's object store (alternates) is never touched.
 * Needs the snapshot lock. Returns whether it ran.
 */
export const prune = Effect.fn("SnapshotGit.prune")(function* (shadow: Shadow) {
  const now = yield* Clock.currentTimeMillis
  yield* git(shadow.target, "gc", {
    args: ["prune", `--expire=${gitDate(now - KEEP_DAYS * DAY)}`],
    timeout: "10 minutes"
  })
  yield* Effect.promise(() => writeFile(stampFile(shadow), String(now)).catch(() => undefined))
})

/**
 * Whether housekeeping is due: at most once a day. A repository without a stamp gets one now and is due a
 * day later (a new repository has nothing old to prune). Asked after every snapshot (two per edit step): the stamp
 * is read in one synchronous call of microseconds, where the promise API took four thread-pool round trips.
 */
export const gcDue = Effect.fn("SnapshotGit.gcDue")(function* (shadow: Shadow) {
  const now = yield* Clock.currentTimeMillis
  const last = yield* Effect.sync(() => {
    try {
      return Number(readFileSync(stampFile(shadow), "utf8"))
    } catch {
      return undefined
    }
  })
  if (last === undefined || Number.isNaN(last)) {
    yield* Effect.sync(() => {
      try {
        writeFileSync(stampFile(shadow), String(now))
      } catch {
        // an unwritable stamp: housekeeping is asked again at the next snapshot
      }
    })
    return false
  }
  return now - last >= DAY
})
