import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from "node:fs"
import { readFile, rm, stat } from "node:fs/promises"
import { hostname } from "node:os"
import { dirname, join } from "node:path"
import { SnapshotError } from "@lathe/core"
import { Clock, Duration, Effect } from "effect"

/** How long to wait for another process's snapshot, and when a lock counts as abandoned. */
export interface LockOptions {
  /** Give up waiting after this long. Default 60 s. */
  readonly wait?: Duration.Input
  /** A lock older than this is abandoned whoever holds it (longer than any git call may run). Default 15 min. */
  readonly staleAfter?: Duration.Input
}

/** Beside the repository, not in it, so creating or re-creating the repository happens under the lock too. */
const lockFile = (gitDir: string) => `${gitDir}.lock`

/** Left behind by a git process that was killed: harmless to remove once we hold the Lathe lock. */
const gitLocks = ["index.lock", "lathe-checkout.index", "lathe-checkout.index.lock"]

/** Whether process `pid` runs on this host (one of another user counts). */
export const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

/** Whether an existing lock may be taken over: its process is gone (same host) or it is older than `staleAfter`. */
const abandoned = (file: string, now: number, staleAfter: number) =>
  Effect.promise(async () => {
    const [text, info] = await Promise.all([readFile(file, "utf8").catch(() => ""), stat(file).catch(() => undefined)])
    if (info === undefined) return true
    const [pid, host] = text.split(" ")
    if (host === hostname() && pid !== undefined && Number(pid) > 0 && !alive(Number(pid))) return true
    // An empty file is a holder that died between creating and writing it, or one writing right now.
    if (text === "" && now - info.mtimeMs > 5_000) return true
    return now - info.mtimeMs > staleAfter
  })

// The lock is taken and released around every snapshot, two of them on a step's path: synchronous calls (a few
// microseconds each on a local disk) instead of a thread-pool round trip each, which waits for the event loop.
const tryCreate = (file: string, token: string) =>
  Effect.sync(() => {
    try {
      mkdirSync(dirname(file), { recursive: true })
      const fd = openSync(file, "wx")
      try {
        writeSync(fd, token)
      } finally {
        closeSync(fd)
      }
      return "taken" as const
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === "EEXIST" ? ("held" as const) : ("missing" as const)
    }
  })

/**
 * Runs `effect` holding the project's snapshot lock (`<gitDir>.lock`, holding `pid host`), so two
 * sessions or processes never run git on one shadow repository at once. A lock whose process is gone is taken
 * over; once held, any `index.lock` left by a killed git is removed, since no other git can be running.
 */
export const withLock = <A, E, R>(
  gitDir: string,
  effect: Effect.Effect<A, E, R>,
  options: LockOptions = {}
): Effect.Effect<A, E | SnapshotError, R> => {
  const file = lockFile(gitDir)
  const wait = Duration.toMillis(options.wait ?? "60 seconds")
  const staleAfter = Duration.toMillis(options.staleAfter ?? "15 minutes")
  const token = `${process.pid} ${hostname()} ${Math.random().toString(36).slice(2)}`
  const acquire = Effect.gen(function* () {
    const start = yield* Clock.currentTimeMillis
    for (let attempt = 0; ; attempt++) {
      const outcome = yield* tryCreate(file, token)
      if (outcome === "taken") break
      if (outcome === "missing")
        return yield* new SnapshotError({
          operation: "lock",
          message: `Cannot create ${file}: the data directory is not writable.`
        })
      const now = yield* Clock.currentTimeMillis
      if (yield* abandoned(file, now, staleAfter)) {
        yield* Effect.promise(() => rm(file, { force: true }))
        continue
      }
      if (now - start > wait) {
        const holder = yield* Effect.promise(() => readFile(file, "utf8").catch(() => "unknown"))
        return yield* new SnapshotError({
          operation: "lock",
          message:
            `Another Lathe session (${holder.split(" ").slice(0, 2).join(" on ")}) has held the snapshot lock ` +
            `${file} for over ${Duration.format(Duration.millis(wait))}. Wait for it to finish, or delete the file ` +
            "if no Lathe process is running."
        })
      }
      yield* Effect.sleep(Duration.millis(Math.min(10 * 2 ** attempt, 200)))
    }
    yield* Effect.sync(() => {
      for (const name of gitLocks) rmSync(join(gitDir, name), { force: true })
    })
  })
  const release = Effect.sync(() => {
    let text = ""
    try {
      text = readFileSync(file, "utf8")
    } catch {
      // Gone: nothing to release.
    }
    if (text === token) rmSync(file, { force: true })
  })
  return Effect.acquireUseRelease(
    acquire,
    () => effect,
    () => release
  )
}
