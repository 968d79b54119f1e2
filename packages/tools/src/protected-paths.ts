import { isAbsolute, relative, sep } from "node:path"

/**
 * Where a protected path lies: `git` in every `.git` folder (the project's, a nested repository's, and the git
 * folders of submodules and worktrees under `.git/modules/…` and `.git/worktrees/…`); `project` in the project root
 * and every folder below it (Lathe loads its config from each folder between the root and where it starts); `root`
 * in the project root only.
 */
export type ProtectedScope = "git" | "project" | "root"

/** One path that no tool and no sandboxed command may change without a person's say-so. */
export interface ProtectedPath {
  /** The path, `/`-separated, relative to the folder its scope names (e.g. `.git/config`, `.claude/settings.json`). */
  readonly path: string
  /** `itself`: the path alone (a file, or a folder against being moved or replaced); `tree`: it and all beneath it. */
  readonly covers: "itself" | "tree"
  readonly scope: ProtectedScope
  /** What it is and why it matters, in words for the person asked (e.g. "git's configuration: git runs programs it names"). */
  readonly what: string
  /**
   * Folders under a `tree` entry that hold only data Lathe writes and never loads as config or code (the plan agent's
   * `.lathe/plans`): the file tools write there without an ask, and the sandbox keeps the root's writable for bash
   * (bound writable over the read-only tree; created when the tree exists and it does not).
   */
  readonly except?: ReadonlyArray<string>
}

const GIT_CONFIG = "git's configuration: git runs programs it names (core.fsmonitor, core.hooksPath, aliases, filters)"

/**
 * The one list of protected paths: what would let a command run code outside the sandbox later (git's control
 * files, which Lathe's own git calls read), or widen what Lathe or another agent allows (their project config).
 */
export const PROTECTED_PATHS: ReadonlyArray<ProtectedPath> = [
  {
    path: ".git",
    covers: "itself",
    scope: "git",
    what: "the git folder itself: moving or replacing it swaps in another configuration and hooks that git runs"
  },
  { path: ".git/config", covers: "itself", scope: "git", what: GIT_CONFIG },
  { path: ".git/config.worktree", covers: "itself", scope: "git", what: GIT_CONFIG },
  {
    path: ".git/commondir",
    covers: "itself",
    scope: "git",
    what: "git's commondir pointer: it sends git to another folder's configuration and hooks"
  },
  {
    path: ".git/hooks",
    covers: "tree",
    scope: "git",
    what: "git's hooks: git runs them on commit, merge and checkout"
  },
  {
    path: ".git/info",
    covers: "tree",
    scope: "git",
    what: "git's info folder: its attributes and excludes choose which configured filters and diff programs git runs"
  },
  {
    path: ".lathe",
    covers: "tree",
    scope: "project",
    what: "Lathe's project folder: the plugins, agents, commands and configuration Lathe loads and runs",
    except: [".lathe/plans"]
  },
  {
    path: "lathe.json",
    covers: "itself",
    scope: "project",
    what: "Lathe's project configuration: it sets permissions, plugins, MCP servers and the sandbox"
  },
  {
    path: "lathe.jsonc",
    covers: "itself",
    scope: "project",
    what: "Lathe's project configuration: it sets permissions, plugins, MCP servers and the sandbox"
  },
  {
    path: ".mcp.json",
    covers: "itself",
    scope: "root",
    what: "the project's MCP servers: Lathe and other agents start the programs it names"
  },
  {
    path: ".claude/settings.json",
    covers: "itself",
    scope: "root",
    what: "Claude Code's project settings: its hooks run commands and its rules allow them"
  },
  {
    path: ".claude/settings.local.json",
    covers: "itself",
    scope: "root",
    what: "Claude Code's local project settings: its hooks run commands and its rules allow them"
  },
  {
    path: "opencode.json",
    covers: "itself",
    scope: "root",
    what: "OpenCode's project configuration: it sets permissions, plugins and MCP servers"
  },
  {
    path: "opencode.jsonc",
    covers: "itself",
    scope: "root",
    what: "OpenCode's project configuration: it sets permissions, plugins and MCP servers"
  }
]

/** Inside a git folder, these hold the git folders of submodules and linked worktrees. */
const NESTED_GIT_DIRS = new Set(["modules", "worktrees"])

const split = (path: string): Array<string> => path.split(/[\\/]+/).filter((segment) => segment !== "")

/** Whether `tail` (segments after a git folder) is `entry`'s path after its leading `.git`. */
const fitsGitEntry = (entry: ProtectedPath, tail: ReadonlyArray<string>): boolean => {
  const want = split(entry.path).slice(1)
  if (tail.length < want.length) return false
  if (!want.every((segment, index) => tail[index] === segment)) return false
  return entry.covers === "tree" || tail.length === want.length
}

const fits = (entry: ProtectedPath, segments: ReadonlyArray<string>): boolean => {
  const want = split(entry.path)
  if (segments.length < want.length) return false
  if (!want.every((segment, index) => segments[index] === segment)) return false
  if (entry.covers !== "tree") return segments.length === want.length
  return !(entry.except ?? []).some((folder) => {
    const skip = split(folder)
    return segments.length > skip.length && skip.every((segment, index) => segments[index] === segment)
  })
}

/** The entry a path inside some git folder falls under, looking at every `.git` segment and the git folders nested in it. */
const gitEntryOf = (segments: ReadonlyArray<string>): ProtectedPath | undefined => {
  const entries = PROTECTED_PATHS.filter((entry) => entry.scope === "git")
  for (let at = 0; at < segments.length; at++) {
    if (segments[at] !== ".git") continue
    // The git folder itself, then each folder below `.git/modules/` or `.git/worktrees/` taken as a git folder.
    const starts = [at + 1]
    if (NESTED_GIT_DIRS.has(segments[at + 1] ?? "")) for (let k = at + 3; k <= segments.length; k++) starts.push(k)
    for (const start of starts) {
      const tail = segments.slice(start)
      const found = entries.find((entry) => (start === at + 1 || entry.path !== ".git") && fitsGitEntry(entry, tail))
      if (found) return found
    }
  }
  return undefined
}

/**
 * The protected entry `path` falls under, or `undefined`. `root` is the project root and `path` an absolute path,
 * both with symlinks resolved by the caller (check the path as given too, when it differs: a link named `lathe.json`
 * points at what Lathe loads). Segments compare case-insensitively, as on macOS and Windows file systems. `git`
 * entries match in any `.git` folder, inside the project or not; `project` entries in the root and every folder
 * below it; `root` entries in the root only.
 */
export const protectedPathOf = (root: string, path: string): ProtectedPath | undefined => {
  const rel = relative(root, path)
  const inside = rel === "" || (!isAbsolute(rel) && rel !== ".." && !rel.startsWith(`..${sep}`))
  const segments = split(inside ? rel : path).map((segment) => segment.toLowerCase())
  const git = gitEntryOf(segments)
  if (git) return git
  if (!inside) return undefined
  for (const entry of PROTECTED_PATHS) {
    if (entry.scope === "root" && fits(entry, segments)) return entry
    if (entry.scope === "project")
      for (let at = 0; at < segments.length; at++) if (fits(entry, segments.slice(at))) return entry
  }
  return undefined
}
