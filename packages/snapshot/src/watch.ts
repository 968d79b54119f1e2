/**
 * A watch on the work tree's folders, so that a snapshot knows what changed since the last one without a scan.
 *
 * Every snapshot runs `git ls-files --modified --others`, which stats every tracked file: ~4 ms on a small project,
 * ~40 ms at 20,000 files, ~90 ms at 50,000 on the machines measured, and an edit step waits for one before its tool.
 * On Linux the kernel can tell instead (inotify): one watch per folder git would look in reports every file created,
 * written, removed or renamed there, by any process. The snapshot then asks git only about the paths reported, or
 * nothing at all when no event came.
 *
 * What a snapshot needs is "every change made before I asked": events arrive asynchronously. `settle` creates a
 * cookie file in a watched folder of Lathe's own and waits for its event; the kernel queues one inotify instance's
 * events in the order they happen, and Node delivers them in that order, so every change made before the cookie has
 * been seen by then. The window of events that ends at the cookie is handed to the snapshot, and the next one starts.
 *
 * Whenever the watch cannot vouch for a window it says `Unknown`, and the snapshot scans as before:
 * - until its folders are watched, and once after every change to the set of watched folders;
 * - after a folder was created, removed or renamed, a `.gitignore` or `.git` changed, a name it cannot read, an error
 *   of a watch, or a cookie that did not come back within two seconds (the kernel's queue can overflow: the cookie's
 *   event is then lost too);
 * - for more than {@link MAX_PATHS} paths in one window.
 * Folders git ignores are not watched (what they hold is never snapshotted) unless they hold tracked files; nested
 * repositories are not watched. It runs on Linux only, on local file systems (a network or FUSE file system does
 * not report changes made elsewhere), up to {@link MAX_FOLDERS} folders and a quarter of the kernel's watches per
 * user ({@link folderBudget}); otherwise every snapshot scans.
 * Not reported by the kernel: writes through a shared memory mapping (editors and tools do not write that way), and
 * a file written through another hard link from outside the watched folders.
 */
import {
  type FSWatcher,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statfsSync,
  utimesSync,
  watch,
  writeFileSync
} from "node:fs"
import { lstat, readdir } from "node:fs/promises"
import { hostname } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { type GitTarget, git, runGit, splitNul } from "./git.js"
import { alive } from "./lock.js"

/** What changed in the work tree during one window. */
export type WatchView =
  | { readonly _tag: "Unchanged" }
  | { readonly _tag: "Paths"; readonly paths: ReadonlyArray<string> }
  | { readonly _tag: "Unknown" }

const UNCHANGED: WatchView = { _tag: "Unchanged" }
const UNKNOWN: WatchView = { _tag: "Unknown" }

/** Past this many paths in one window, one scan of everything is cheaper than naming them to git. */
export const MAX_PATHS = 500

/** Past this many folders the watch is not kept (each is a kernel watch and ~2.3 KiB of this process's memory). */
export const MAX_FOLDERS = 10_000

/** How many cookie files `settle` touches in turn. */
const COOKIE_FILES = 8

/** How long `settle` waits for its cookie before it gives up on the window. */
const COOKIE_MS = 2_000

/** Linux file systems that report, through inotify, changes made by any process on this machine (`statfs` types). */
const LOCAL_FILE_SYSTEMS = new Set([
  0xef53, // ext2, ext3, ext4
  0x58465342, // xfs
  0x9123683e, // btrfs
  0x01021994, // tmpfs
  0x794c7630, // overlayfs
  0xf2f52010, // f2fs
  0x2fc12fc1, // zfs
  0xca451a4e, // bcachefs
  0x52654973, // reiserfs
  0x3153464a // jfs
])

/**
 * How many folders Lathe may watch: {@link MAX_FOLDERS}, and at most a quarter of the kernel's watches per user
 * (`fs.inotify.max_user_watches`, 8,192 on older kernels), so that the person's editor and dev servers, which
 * watch the same tree, keep theirs.
 */
export const folderBudget = (): number => {
  try {
    const limit = Number(readFileSync("/proc/sys/fs/inotify/max_user_watches", "utf8"))
    return Number.isFinite(limit) && limit > 0 ? Math.min(MAX_FOLDERS, Math.floor(limit / 4)) : MAX_FOLDERS
  } catch {
    return MAX_FOLDERS
  }
}

/** Why the watch cannot run for `root`, or `undefined` when it can. */
export const whyNoWatch = (root: string, env: Readonly<Record<string, string | undefined>>): string | undefined => {
  if (env.LATHE_SNAPSHOT_WATCH === "0") return "LATHE_SNAPSHOT_WATCH=0"
  if (process.platform !== "linux") return `not on ${process.platform}`
  try {
    // A window's events must be under half the queue (see `settle`).
    const queue = Number(readFileSync("/proc/sys/fs/inotify/max_queued_events", "utf8"))
    if (!(queue >= 4 * MAX_PATHS)) return `fs.inotify.max_queued_events is ${queue}, under ${4 * MAX_PATHS}`
    const type = statfsSync(root).type
    return LOCAL_FILE_SYSTEMS.has(type) ? undefined : `file system type 0x${type.toString(16)} is not a local one`
  } catch (error) {
    return error instanceof Error ? error.message : String(error)
  }
}

/** The watch of one work tree; see the module's comment. */
export interface WorkTreeWatch {
  /** What changed since the last call (or since the watch started), once every change made before this call is in. */
  readonly settle: Effect.Effect<WatchView>
  /** True when the set of watched folders should be read again (at start, and after a folder changed). */
  readonly wantsWalk: () => boolean
  /**
   * Reads which folders to watch (through `target`, a git target on the shadow repository) and watches them. True
   * when the window it leaves cannot be vouched for (folders were added): a snapshot taken now, off any step's path,
   * starts a window the next one can use.
   */
  readonly walk: (target: GitTarget) => Effect.Effect<boolean>
  /** Folders watched now (for tests and logs). */
  readonly folders: () => number
  /** Stops every watch; later calls of `settle` say `Unknown`. */
  readonly close: () => void
}

/**
 * A watch of the work tree at `root`; its cookies live in a folder of this process's own under `cookies` (Lathe's,
 * outside what is watched, shared by the Lathe processes of one project). It watches nothing until the first
 * {@link WorkTreeWatch.walk}.
 */
export const makeWatch = (root: string, cookies: string, maxFolders = folderBudget()): WorkTreeWatch => {
  const watchers = new Map<string, FSWatcher>()
  /** The current window: the paths changed in it, or `undefined` when it cannot be vouched for. */
  let window: Set<string> | undefined
  /** Events in the current window, counted even once it is lost (see `settle` for why). */
  let events = 0
  let live = false
  let off = false
  let walkWanted = true
  let walking = false
  let cookieWatcher: FSWatcher | undefined
  let cookieCount = 0
  const waiting = new Map<string, () => void>()

  const lose = (structural: boolean) => {
    window = undefined
    if (structural) walkWanted = true
  }

  const stop = (): false => {
    off = true
    live = false
    window = undefined
    for (const watcher of watchers.values()) watcher.close()
    watchers.clear()
    cookieWatcher?.close()
    cookieWatcher = undefined
    rmSync(own, { recursive: true, force: true })
    for (const resume of waiting.values()) resume()
    waiting.clear()
    return false
  }

  const onEvent = (folder: string, type: string, name: string | Buffer | null) => {
    events++
    if (typeof name !== "string" || name === "" || name.includes("\uFFFD")) return lose(true)
    if (name === ".gitignore" || name === ".git") return lose(true)
    const path = folder === "" ? name : `${folder}/${name}`
    if (watchers.has(path)) return lose(true)
    // A new folder (created or moved here): what it holds is not watched yet.
    if (type === "rename" && !window?.has(path) && isFolder(join(root, path))) return lose(true)
    if (window === undefined) return
    window.add(path)
    if (window.size > MAX_PATHS) window = undefined
  }

  const add = (folder: string): boolean => {
    if (watchers.has(folder)) return true
    try {
      const watcher = watch(join(root, folder), { persistent: false }, (type, name) => onEvent(folder, type, name))
      watcher.on("error", () => {
        watcher.close()
        if (watchers.get(folder) === watcher) watchers.delete(folder)
        lose(true)
      })
      watchers.set(folder, watcher)
      return true
    } catch (error) {
      // Gone since it was listed: the next walk will see. Out of kernel watches or descriptors: no watch at all.
      const code = (error as NodeJS.ErrnoException).code
      if (code === "ENOENT" || code === "ENOTDIR") {
        lose(true)
        return true
      }
      return false
    }
  }

  /** This process's own cookie folder: another Lathe on the same project has its own (and may sweep stale ones). */
  const own = join(cookies, `${hostname()}-${process.pid}-${Math.random().toString(36).slice(2, 10)}`)

  /** The cookie folder is gone or broken: the next walk makes it again; until then every window is unknown. */
  const dropCookies = () => {
    cookieWatcher?.close()
    cookieWatcher = undefined
    lose(true)
  }

  const startCookies = (): boolean => {
    if (cookieWatcher) return true
    try {
      sweepCookies(cookies)
      mkdirSync(own, { recursive: true })
      cookieWatcher = watch(own, { persistent: false }, (_type, name) => {
        if (typeof name !== "string" || !name.startsWith("cookie-")) return dropCookies()
        const resume = waiting.get(name)
        if (!resume) return
        waiting.delete(name)
        resume()
      })
      cookieWatcher.on("error", dropCookies)
      return true
    } catch {
      return false
    }
  }

  const settle: Effect.Effect<WatchView> = Effect.callback<WatchView>((resume) => {
    if (!live) {
      resume(Effect.succeed(UNKNOWN))
      return
    }
    // A few cookie files, used in turn and touched (their times set: one event, no file made or removed, which costs
    // a file system's journal far more). A touch's event is read before the next touch, and the same file is touched
    // again only COOKIE_FILES settles later: an event of an earlier touch is never taken for this one's.
    const name = `cookie-${process.pid}-${cookieCount++ % COOKIE_FILES}`
    const timer = setTimeout(() => {
      if (!waiting.delete(name)) return
      dropCookies()
      resume(Effect.succeed(UNKNOWN))
    }, COOKIE_MS)
    // Runs in the cookie's event callback: the window ends exactly there, and the next one starts.
    waiting.set(name, () => {
      clearTimeout(timer)
      // While folders are to be watched again, changes in them may have been missed.
      const ended = live && !walkWanted && !walking ? window : undefined
      // The kernel's queue drops events when it is full (and libuv does not say so). It holds at most one cookie
      // (the next is written once this one is read), so a full queue is at least half events of one window: of a
      // window with that many events (lost: over MAX_PATHS), or of the one after it, which is given up too.
      window = events > MAX_PATHS ? undefined : new Set()
      events = 0
      resume(
        Effect.succeed(
          ended === undefined ? UNKNOWN : ended.size === 0 ? UNCHANGED : { _tag: "Paths", paths: [...ended] }
        )
      )
    })
    try {
      const file = join(own, name)
      const now = new Date()
      try {
        utimesSync(file, now, now)
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error
        writeFileSync(file, "")
      }
    } catch {
      // The folder is gone (the shadow repository was re-created after a repair).
      waiting.delete(name)
      clearTimeout(timer)
      dropCookies()
      resume(Effect.succeed(UNKNOWN))
    }
  })

  const walk = (target: GitTarget): Effect.Effect<boolean> =>
    Effect.gen(function* () {
      if (off || walking) return false
      walking = true
      walkWanted = false
      if (!startCookies()) return stop()
      const indexed = indexedFolders(splitNul(yield* git(target, "track", { args: ["ls-files", "-z"] })))
      const seen = new Set<string>()
      let changed = false
      let level = [""]
      while (level.length > 0) {
        const next: Array<string> = []
        for (const folder of level) {
          // Watched before it is listed: a folder created in it after the listing is an event.
          const had = watchers.has(folder)
          if (!add(folder)) return stop()
          if (!had) changed = true
          seen.add(folder)
          if (seen.size > maxFolders) return stop()
        }
        const listed = yield* Effect.promise(() => subfolders(root, level))
        if (listed === undefined) return stop()
        const candidates = listed.filter((folder) => indexed.has(folder) || !listed.nested.has(folder))
        const ignored = yield* ignoredOf(target, candidates)
        for (const folder of candidates) if (indexed.has(folder) || !ignored.has(folder)) next.push(folder)
        level = next
      }
      for (const [folder, watcher] of watchers)
        if (!seen.has(folder)) {
          watcher.close()
          watchers.delete(folder)
          changed = true
        }
      // Changes made before a folder was watched were not seen: the next window is a scan.
      if (changed || !live) window = undefined
      live = true
      return window === undefined
    }).pipe(
      Effect.catchCause(() => Effect.sync(stop)),
      Effect.ensuring(
        Effect.sync(() => {
          walking = false
        })
      )
    )

  return {
    settle,
    wantsWalk: () => walkWanted && !walking && !off,
    walk,
    folders: () => watchers.size,
    close: stop
  }
}

/** Removes the cookie folders of Lathe processes of this host that are gone (a crash leaves its folder behind). */
const sweepCookies = (cookies: string) => {
  let names: Array<string>
  try {
    names = readdirSync(cookies)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === undefined) throw error
    return
  }
  const host = `${hostname()}-`
  for (const name of names) {
    if (!name.startsWith(host)) continue
    const pid = Number(name.slice(host.length).split("-")[0])
    if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid || alive(pid)) continue
    rmSync(join(cookies, name), { recursive: true, force: true })
  }
}

/** Whether `path` is a folder now (not following a link). */
const isFolder = (path: string): boolean => {
  try {
    return lstatSync(path, { throwIfNoEntry: false })?.isDirectory() === true
  } catch {
    return false
  }
}

/** Every folder that holds an index entry, at any depth, and the root (`""`). */
export const indexedFolders = (paths: ReadonlyArray<string>): Set<string> => {
  const out = new Set<string>([""])
  for (const path of paths) {
    let end = path.lastIndexOf("/")
    while (end > 0) {
      const folder = path.slice(0, end)
      if (out.has(folder)) break
      out.add(folder)
      end = folder.lastIndexOf("/")
    }
  }
  return out
}

/** The subfolders of `folders` (not following links; `.git` left out), and which of them are repositories. */
const subfolders = async (
  root: string,
  folders: ReadonlyArray<string>
): Promise<(Array<string> & { nested: Set<string> }) | undefined> => {
  const out = Object.assign([] as Array<string>, { nested: new Set<string>() })
  let unreadable = false
  const one = async (folder: string) => {
    const entries = await readdir(join(root, folder), { withFileTypes: true }).catch(() => [])
    for (const entry of entries) {
      if (entry.name.includes("\uFFFD")) unreadable = true
      if (!entry.isDirectory() || entry.name === ".git") continue
      const path = folder === "" ? entry.name : `${folder}/${entry.name}`
      out.push(path)
    }
  }
  for (let i = 0; i < folders.length; i += 32) await Promise.all(folders.slice(i, i + 32).map(one))
  if (unreadable) return undefined
  await Promise.all(
    out.map(async (folder) => {
      if (
        await lstat(join(root, folder, ".git")).then(
          () => true,
          () => false
        )
      )
        out.nested.add(folder)
    })
  )
  return out
}

/**
 * Which of `folders` git ignores (the shadow repository's rules: `.gitignore`s, `info/exclude`, global excludes).
 * `--no-index`: folders holding tracked files are the caller's to keep (and git would look each one up in the index,
 * ~0.5 ms a folder at 50,000 files).
 */
const ignoredOf = (target: GitTarget, folders: ReadonlyArray<string>) =>
  folders.length === 0
    ? Effect.succeed(new Set<string>())
    : Effect.flatMap(
        runGit(target, "track", {
          args: ["check-ignore", "-z", "--stdin", "--no-index"],
          input: `${folders.join("\0")}\0`
        }),
        (result) =>
          result.code === 0 || result.code === 1
            ? Effect.succeed(new Set(splitNul(result.stdout)))
            : Effect.die(new Error(`git check-ignore failed (exit ${result.code}): ${result.stderr.trim()}`))
      )
