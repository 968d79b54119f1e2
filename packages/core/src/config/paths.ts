import { realpath } from "node:fs/promises"
import { homedir } from "node:os"
import { isAbsolute, join, relative, resolve, sep } from "node:path"
import { Context, Effect, Layer } from "effect"
import { gitOutput, prefetchGit, startupGitCommands } from "../process/git-prefetch.js"
import { sha1Hex } from "./sha1.js"

/** Where Lathe keeps its files, and which project it is working on. */
export interface PathsShape {
  /** The directory Lathe was started in (absolute, symlinks resolved). */
  readonly directory: string
  /**
   * The project root: the folder holding the `.git` entry of the repository that holds `directory` (whatever the
   * repository's config names as its work tree), else `directory`. Never `/` or the home folder unless `directory` is.
   */
  readonly root: string
  /** Stable project id: the hash of the repository's first commit, else a hash of the absolute root path. */
  readonly projectID: string
  /** Data dir: `$LATHE_DATA_DIR`, else `$XDG_DATA_HOME/lathe`, else `~/.local/share/lathe`. */
  readonly data: string
  /** Config dir: `$XDG_CONFIG_HOME/lathe`, else `~/.config/lathe`. */
  readonly config: string
  /** The user's home directory. */
  readonly home: string
  /** Why the root is not the repository git found (for the person, printed with the config's notices). */
  readonly notices?: ReadonlyArray<string>
}

/** The environment variables that decide Lathe's paths. */
export type PathEnv = Readonly<Record<string, string | undefined>>

const home = (env: PathEnv): string => env.HOME || homedir()

/** The data dir for an environment: `$LATHE_DATA_DIR`, `$XDG_DATA_HOME/lathe`, or `~/.local/share/lathe`. */
export const dataDir = (env: PathEnv = process.env): string => {
  if (env.LATHE_DATA_DIR) return resolve(env.LATHE_DATA_DIR)
  if (env.XDG_DATA_HOME && isAbsolute(env.XDG_DATA_HOME)) return join(env.XDG_DATA_HOME, "lathe")
  return join(home(env), ".local", "share", "lathe")
}

/** The config dir for an environment: `$XDG_CONFIG_HOME/lathe` or `~/.config/lathe`. */
export const configDir = (env: PathEnv = process.env): string => {
  if (env.XDG_CONFIG_HOME && isAbsolute(env.XDG_CONFIG_HOME)) return join(env.XDG_CONFIG_HOME, "lathe")
  return join(home(env), ".config", "lathe")
}

/** Whether `path` is `folder` or inside it. */
const isWithin = (folder: string, path: string): boolean => {
  const rel = relative(folder, path)
  return rel === "" || (rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel))
}

/** Where the project is, as read from the start-up shell's answer (see `locateShell` in git-prefetch.ts). */
export interface LocatedRoot {
  /** The project root. */
  readonly root: string
  /** Whether the root is a repository's (its first commit is then the project's id). */
  readonly repository: boolean
  /** Why git's answer was not taken as it stood. */
  readonly notices: ReadonlyArray<string>
}

/**
 * The project root for `directory` from the start-up shell's answer: the folder holding the repository's `.git`
 * entry, or `directory` (with a notice) when that folder is `/` or `home` (and not `directory` itself), does not
 * contain `directory`, or git found a repository Lathe does not use (a bare one it was not pointed at, or one no `.git`
 * entry leads to). A plain path (git's own `--show-toplevel`, where there is no shell) is checked the same way.
 */
export const readLocated = (answer: string | undefined, directory: string, home: string): LocatedRoot => {
  const lines = (answer ?? "").split("\n").filter(Boolean)
  const facts = new Map<string, string>()
  for (const line of lines) {
    const match = /^lathe:(\w+) (.*)$/.exec(line)
    if (match?.[1] !== undefined) facts.set(match[1], match[2] ?? "")
  }
  const top = lines[0]?.startsWith("lathe:") ? undefined : lines[0]
  const here = (why: string): LocatedRoot => ({
    root: directory,
    repository: false,
    notices: [`${why} The project root is ${directory}, the folder Lathe was started in.`]
  })
  const refused =
    facts.get("refused") ?? (top !== undefined && top !== directory && (top === "/" || top === home) ? top : undefined)
  if (refused !== undefined)
    return here(
      `The git repository here has its top at ${refused}, ${refused === "/" ? "the root of the file system" : "your home folder"}, ` +
        "which Lathe never takes as a project root (every file below it would count as the project's)."
    )
  const bare = facts.get("bare")
  if (bare !== undefined)
    return here(
      `Git found a bare repository at ${bare} by its contents alone (a downloaded tree can hold one); Lathe uses a ` +
        "repository only through a .git entry, so it ignores this one."
    )
  const unheld = facts.get("unheld")
  if (unheld !== undefined)
    return here(
      `Git found the repository ${unheld}, but no .git entry at or above ${directory} leads to it, so Lathe ignores it.`
    )
  if (top === undefined) return { root: directory, repository: false, notices: [] }
  if (!isAbsolute(top) || !isWithin(top, directory))
    return here(
      `Git named ${top} as the top of the repository here, which does not hold ${directory}, so Lathe ignores it.`
    )
  const worktree = facts.get("worktree")
  const notices =
    worktree === undefined
      ? []
      : [
          `The git config of the repository at ${top} ${worktree === "-" ? "says it is bare (core.bare)" : `names ${worktree} as its work tree (core.worktree)`}; ` +
            `Lathe ignores that and takes ${top}, the folder holding the .git entry, as the project root. ` +
            "If this repository came from someone else, look at its .git before running git in it."
        ]
  return { root: top, repository: true, notices }
}

/**
 * Finds the project root and id for a directory (see {@link readLocated} for the root). The id is the repository's
 * first commit (the lexicographically smallest root commit when there are several), so clones and worktrees of one
 * repository share it; a folder outside git, a repository without commits, or a root Lathe did not take from git
 * gets a hash of its absolute path.
 */
export const locateProject = async (
  directory: string,
  home: string = homedir()
): Promise<{ root: string; projectID: string; notices: ReadonlyArray<string> }> => {
  // Both questions in one shell (the CLI's prefetch may have started it already): one process start, not two.
  prefetchGit(directory, [startupGitCommands.toplevel, startupGitCommands.rootCommits])
  const [top, roots] = await Promise.all([
    gitOutput(directory, startupGitCommands.toplevel),
    gitOutput(directory, startupGitCommands.rootCommits)
  ])
  const realHome = await realpath(home).catch(() => home)
  const located = readLocated(top, directory, realHome)
  const root = located.repository ? await realpath(located.root).catch(() => located.root) : located.root
  const first = located.repository ? roots?.split("\n").filter(Boolean).sort()[0] : undefined
  return { root, projectID: first ?? sha1Hex(root), notices: located.notices }
}

/** Resolves every path for a directory and an environment. */
export const resolvePaths = async (directory: string, env: PathEnv = process.env): Promise<PathsShape> => {
  const dir = await realpath(resolve(directory)).catch(() => resolve(directory))
  const { root, projectID, notices } = await locateProject(dir, home(env))
  return { directory: dir, root, projectID, data: dataDir(env), config: configDir(env), home: home(env), notices }
}

/** Lathe's paths for the current run; every service that touches the disk takes its locations from here. */
export class Paths extends Context.Service<Paths, PathsShape>()("@lathe/core/Paths") {
  /** Paths for `directory` (default: the process's cwd) from the process environment. */
  static readonly layer = (directory: string = process.cwd(), env: PathEnv = process.env) =>
    Layer.effect(Paths, Effect.promise(() => resolvePaths(directory, env)).pipe(Effect.map((paths) => Paths.of(paths))))

  /** Fixed paths, for tests: everything under `root` unless given. */
  static readonly layerTest = (root: string, overrides: Partial<PathsShape> = {}) =>
    Layer.succeed(
      Paths,
      Paths.of({
        directory: root,
        root,
        projectID: sha1Hex(root),
        data: join(root, ".lathe-data"),
        config: join(root, ".lathe-config"),
        home: root,
        ...overrides
      })
    )
}
