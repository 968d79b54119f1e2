import { realpath } from "node:fs/promises"
import { homedir } from "node:os"
import { isAbsolute, join, resolve } from "node:path"
import { Context, Effect, Layer } from "effect"
import { gitOutput, startupGitCommands } from "./git-prefetch.js"
import { sha1Hex } from "./sha1.js"

/** Where Lathe keeps its files, and which project it is working on. */
export interface PathsShape {
  /** The directory Lathe was started in (absolute, symlinks resolved). */
  readonly directory: string
  /** The project root: the top of the git work tree that holds `directory`, else `directory`. */
  readonly root: string
  /** Stable project id: the hash of the repository's first commit, else a hash of the absolute root path. */
  readonly projectID: string
  /** Data dir: `$LATHE_DATA_DIR`, else `$XDG_DATA_HOME/lathe`, else `~/.local/share/lathe`. */
  readonly data: string
  /** Config dir: `$XDG_CONFIG_HOME/lathe`, else `~/.config/lathe`. */
  readonly config: string
  /** The user's home directory. */
  readonly home: string
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

/**
 * Finds the project root and id for a directory. The id is the repository's first commit (the
 * lexicographically smallest root commit when there are several), so clones and worktrees of one repository
 * share it; a folder outside git, or a repository without commits, gets a hash of its absolute path.
 */
export const locateProject = async (directory: string): Promise<{ root: string; projectID: string }> => {
  // Both git calls at once: start-up waits for one process, not two in a row.
  const [top, roots] = await Promise.all([
    gitOutput(directory, startupGitCommands.toplevel),
    gitOutput(directory, startupGitCommands.rootCommits)
  ])
  const root = top ? await realpath(top).catch(() => top) : directory
  const first = roots?.split("\n").filter(Boolean).sort()[0]
  return { root, projectID: first ?? sha1Hex(root) }
}

/** Resolves every path for a directory and an environment. */
export const resolvePaths = async (directory: string, env: PathEnv = process.env): Promise<PathsShape> => {
  const dir = await realpath(resolve(directory)).catch(() => resolve(directory))
  const { root, projectID } = await locateProject(dir)
  return { directory: dir, root, projectID, data: dataDir(env), config: configDir(env), home: home(env) }
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
