import {
  type Dirent,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  symlinkSync
} from "node:fs"
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path"
import { PROTECTED_PATHS, type ProtectedPath } from "./protected-paths.js"

/** A protected path of one sandboxed run and what it was before the command. */
interface Guarded {
  /** Absolute, below the real project root, with no symlink before its last segment when it was taken. */
  readonly path: string
  readonly entry: ProtectedPath
  readonly before:
    | { readonly kind: "missing" }
    | { readonly kind: "link"; readonly target: string }
    | { readonly kind: "present"; readonly dev: number; readonly ino: number }
}

/** How the protected paths of a project enter one sandbox, and what to check after the command. */
export interface ProtectedLayout {
  /** Existing protected files and folders (real paths), bound read-only. */
  readonly readOnly: ReadonlyArray<string>
  /**
   * Folders bound onto themselves: writable, but never moved, removed or replaced. Git folders, and the data folders a
   * protected tree leaves writable (`.lathe/plans` inside a read-only `.lathe`: the plan agent writes plans there).
   */
  readonly pinned: ReadonlyArray<string>
  /** Protected paths that do not exist yet. */
  readonly absent: ReadonlyArray<string>
  readonly guarded: ReadonlyArray<Guarded>
}

const lstat = (path: string) => lstatSync(path, { throwIfNoEntry: false })
const real = (path: string): string | undefined => {
  try {
    return realpathSync.native(path)
  } catch {
    return undefined
  }
}
const entryOf = (path: string): ProtectedPath => {
  const found = PROTECTED_PATHS.find((entry) => entry.path === path)
  if (!found) throw new Error(`no protected path ${path}`)
  return found
}
const GIT_CONTROL = PROTECTED_PATHS.filter((entry) => entry.scope === "git" && entry.path !== ".git")

/** The first symlink strictly between `root` and `path` (both absolute, `path` below `root`), if any. */
const linkOnTheWay = (root: string, path: string): string | undefined => {
  const segments = relative(root, path).split(sep)
  let at = root
  for (const segment of segments.slice(0, -1)) {
    at = join(at, segment)
    const info = lstat(at)
    if (!info) return undefined
    if (info.isSymbolicLink()) return at
  }
  return undefined
}

/** The folder a git pointer file names: `gitdir: …` in a `.git` file, a bare path in `commondir`. */
const pointedBy = (file: string): string | undefined => {
  try {
    const text = readFileSync(file, "utf8").trim()
    const target = text.startsWith("gitdir:") ? text.slice("gitdir:".length).trim() : text
    return target === "" ? undefined : real(resolve(dirname(file), target))
  } catch {
    return undefined
  }
}

/** Git folders nested in `gitDir`: submodules' under `modules/` (names may hold slashes) and worktrees'. */
const nestedGitDirs = (gitDir: string): Array<string> => {
  const found: Array<string> = []
  const walk = (dir: string, depth: number) => {
    let entries: Array<Dirent>
    try {
      entries = readdirSync(dir, { withFileTypes: true })
    } catch {
      return
    }
    if (depth > 0 && entries.some((entry) => entry.name === "HEAD" && entry.isFile())) found.push(dir)
    if (depth < 4) for (const entry of entries) if (entry.isDirectory()) walk(join(dir, entry.name), depth + 1)
  }
  walk(join(gitDir, "modules"), 0)
  walk(join(gitDir, "worktrees"), 0)
  return found.filter((dir) => dir !== gitDir)
}

/**
 * Finds the protected paths of a project for one sandboxed run in `workspace-write` mode: the project's `.git`
 * (pinned when a folder, read-only when a `gitdir:` file) and its control files, those of the git folders it points to
 * or holds (submodules, worktrees), Lathe's config in each folder from the root down to `cwd`, and the root-only
 * entries. Existing ones become read-only binds; missing ones are remembered to be checked after the command. `root`
 * is the real project root. A few `lstat`s and, for submodules and worktrees, a small walk of `.git`.
 */
export const protectedLayout = (root: string, cwd: string): ProtectedLayout => {
  const readOnly = new Set<string>()
  const pinned: Array<string> = []
  const absent: Array<string> = []
  const guarded: Array<Guarded> = []
  const take = (path: string, entry: ProtectedPath) => {
    const link = linkOnTheWay(root, path)
    if (link) {
      // Reached through a symlink already there: keep the link as it is and what it leads to read-only.
      const target = real(path)
      if (target) readOnly.add(target)
      if (!guarded.some((item) => item.path === link))
        guarded.push({ path: link, entry, before: { kind: "link", target: readlinkSync(link) } })
      return
    }
    const info = lstat(path)
    if (!info) {
      absent.push(path)
      guarded.push({ path, entry, before: { kind: "missing" } })
      return
    }
    if (info.isSymbolicLink()) {
      const target = real(path)
      if (target) readOnly.add(target)
      guarded.push({ path, entry, before: { kind: "link", target: readlinkSync(path) } })
      return
    }
    if (entry.path === ".git" && info.isDirectory()) pinned.push(path)
    else readOnly.add(path)
    guarded.push({ path, entry, before: { kind: "present", dev: info.dev, ino: info.ino } })
    // Only the root's: that is where the plan agent writes (`.lathe/plans/*.md` relative to the root).
    if (info.isDirectory() && dirname(path) === root) pinned.push(...dataFolders(path, entry))
  }
  /** Existing control files of a git folder outside the guarded tree (pointed to, or nested): read-only only. */
  const bindControl = (gitDir: string) => {
    for (const entry of GIT_CONTROL) {
      const path = join(gitDir, entry.path.slice(".git/".length))
      const target = lstat(path) ? real(path) : undefined
      if (target) readOnly.add(target)
    }
  }

  const dotGit = join(root, ".git")
  take(dotGit, entryOf(".git"))
  const gitInfo = lstat(dotGit)
  const gitDirs: Array<string> = []
  if (gitInfo?.isDirectory()) {
    for (const entry of GIT_CONTROL) take(join(root, entry.path), entry)
    gitDirs.push(dotGit)
  } else if (gitInfo) {
    const pointed = pointedBy(dotGit)
    if (pointed) gitDirs.push(pointed)
  }
  for (const gitDir of [...gitDirs]) {
    const common = lstat(join(gitDir, "commondir")) ? pointedBy(join(gitDir, "commondir")) : undefined
    if (gitDir !== dotGit) bindControl(gitDir)
    if (common) bindControl(common)
    for (const nested of nestedGitDirs(gitDir)) bindControl(nested)
  }

  const rel = relative(root, cwd)
  const inside = rel === "" || (!isAbsolute(rel) && rel !== ".." && !rel.startsWith(`..${sep}`))
  const parts = inside ? rel.split(sep).filter(Boolean) : []
  const folders = [root, ...parts.map((_, index) => join(root, ...parts.slice(0, index + 1)))]
  for (const entry of PROTECTED_PATHS) {
    if (entry.scope === "root") take(join(root, entry.path), entry)
    if (entry.scope === "project") for (const folder of folders) take(join(folder, entry.path), entry)
  }
  return { readOnly: [...readOnly], pinned, absent, guarded }
}

/**
 * The data folders (`except`) of a protected tree that exists as a real folder, created when missing: each is bound
 * writable over the read-only tree. One that is a symlink, or not a folder, is left read-only with the rest.
 */
const dataFolders = (tree: string, entry: ProtectedPath): Array<string> =>
  (entry.except ?? []).flatMap((folder) => {
    const path = join(dirname(tree), folder)
    if (!lstat(path)) {
      try {
        mkdirSync(path)
      } catch {
        return []
      }
    }
    const info = lstat(path)
    return info?.isDirectory() && !info.isSymbolicLink() ? [path] : []
  })

/**
 * Removes what a command created at a protected tree that was missing (`.lathe`), except its data folders (`except`,
 * e.g. `.lathe/plans`) when they are real folders inside a real folder: `all` when the whole tree went, `some` when
 * only what lay beside the data folders did, `none` when the command created nothing else.
 */
const pruneCreated = (tree: string, entry: ProtectedPath): "all" | "some" | "none" => {
  const real = (path: string) => {
    const info = lstat(path)
    return info?.isDirectory() === true && !info.isSymbolicLink()
  }
  const keep = real(tree) ? (entry.except ?? []).map((folder) => join(dirname(tree), folder)).filter(real) : []
  if (keep.length === 0) {
    rmSync(tree, { recursive: true, force: true })
    return "all"
  }
  const prune = (path: string): boolean => {
    if (keep.includes(path)) return false
    if (!keep.some((folder) => folder.startsWith(`${path}${sep}`)) || !real(path)) {
      rmSync(path, { recursive: true, force: true })
      return true
    }
    let removedAny = false
    for (const name of readdirSync(path)) removedAny = prune(join(path, name)) || removedAny
    return removedAny
  }
  return prune(tree) ? "some" : "none"
}

const removed = (rel: string, what: string, how: string): string =>
  `Lathe removed ${rel} after the command: the command ${how} it, and it is ${what}. Sandboxed commands may not ` +
  "create or replace protected paths; ask the user to make this change."

/**
 * After the command (every process of the sandbox is gone by then: bwrap's PID namespace ends with it), undoes what
 * it did to protected paths that bind mounts could not hold: a protected path it created is removed; a symlink it put
 * on the way to one is removed; a protected symlink it replaced is restored. Never follows a symlink the command
 * could have planted. Returns one note per change, for the tool result.
 */
export const restoreProtected = (root: string, layout: ProtectedLayout): Array<string> => {
  const notes: Array<string> = []
  for (const item of layout.guarded) {
    const rel = relative(root, item.path)
    const link = linkOnTheWay(root, item.path)
    if (link) {
      if (lstat(item.path) === undefined) continue
      rmSync(link, { force: true })
      notes.push(removed(relative(root, link), `a symlink leading to ${rel}, ${item.entry.what}`, "created"))
      continue
    }
    const now = lstat(item.path)
    const before = item.before
    if (before.kind === "missing") {
      if (!now) continue
      const pruned = pruneCreated(item.path, item.entry)
      if (pruned === "all") notes.push(removed(rel, item.entry.what, "created"))
      if (pruned === "some")
        notes.push(
          `Lathe removed what the command created in ${rel} (${item.entry.what}) except ` +
            `${(item.entry.except ?? []).join(", ")}. Sandboxed commands may not create protected paths; ask the user.`
        )
    } else if (before.kind === "link") {
      if (now?.isSymbolicLink() && readlinkSync(item.path) === before.target) continue
      if (now) rmSync(item.path, { recursive: true, force: true })
      symlinkSync(before.target, item.path)
      notes.push(
        `Lathe restored the symlink ${rel} → ${before.target} after the command ${now ? "replaced" : "removed"} it: ` +
          `it leads to ${item.entry.what}.`
      )
    } else if (!now) {
      notes.push(`The command moved ${rel} away (${item.entry.what}); look for it in the project and ask the user.`)
    } else if (now.dev !== before.dev || now.ino !== before.ino) {
      rmSync(item.path, { recursive: true, force: true })
      notes.push(removed(rel, item.entry.what, "replaced"))
    }
  }
  return notes
}
