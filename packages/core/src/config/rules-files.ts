import { realpathSync, statSync } from "node:fs"
import { glob, stat } from "node:fs/promises"
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path"
import { isWithin } from "./config-load.js"

/**
 * The names of a folder's rules file, in precedence order: the first group with a file present wins, and every file
 * of that group that exists applies (`AGENTS.md` then `AGENTS.local.md`, the personal one after the shared one).
 */
export const RULES_NAMES: ReadonlyArray<ReadonlyArray<string>> = [
  ["AGENTS.md", "AGENTS.local.md"],
  ["CLAUDE.md", "CLAUDE.local.md"],
  ["CONTEXT.md"]
]

/** Where the rules files of a session are looked for. */
export interface RulesLocations {
  /** The working directory (absolute). */
  readonly directory: string
  /** The project root (absolute). */
  readonly root: string
  /** The home folder, for `~/` in `instructions`. */
  readonly home: string
  /** Lathe's config dir (`~/.config/lathe`). */
  readonly configDir: string
  /** The config's `instructions` entries (paths or globs; relative ones to the project root). */
  readonly instructions: ReadonlyArray<string>
}

/** The person's own rules files, read wherever they are: `<configDir>/AGENTS.md` and `~/.claude/CLAUDE.md`. */
export const ownRulesFiles = (locations: Pick<RulesLocations, "home" | "configDir">): ReadonlyArray<string> => [
  join(locations.configDir, "AGENTS.md"),
  join(locations.home, ".claude", "CLAUDE.md")
]

const isFile = async (file: string): Promise<boolean> => (await stat(file).catch(() => undefined))?.isFile() === true

/**
 * The rules files that apply from the start of a session, in the order they are sent: the project's (from the root
 * down to the working directory; the first name group of {@link RULES_NAMES} present anywhere on that walk wins),
 * the person's own (see {@link ownRulesFiles}, listed whether or not they exist), then the `instructions` entries.
 */
export const startupRulesFiles = async (locations: RulesLocations): Promise<Array<string>> => {
  const dirs: Array<string> = []
  for (let dir = locations.directory; ; dir = dirname(dir)) {
    dirs.push(dir)
    if (dir === locations.root || dirname(dir) === dir || relative(locations.root, dir).startsWith("..")) break
  }
  const found: Array<string> = []
  const rootFirst = [...dirs].reverse()
  for (const group of RULES_NAMES) {
    for (const dir of rootFirst)
      for (const name of group) if (await isFile(join(dir, name))) found.push(join(dir, name))
    if (found.length > 0) break // the first name that exists anywhere wins
  }
  found.push(...ownRulesFiles(locations))
  for (const pattern of locations.instructions) {
    const expanded = pattern.startsWith("~/") ? join(locations.home, pattern.slice(2)) : pattern
    const absolute = isAbsolute(expanded) ? expanded : resolve(locations.root, expanded)
    if (!/[*?[{]/.test(absolute)) found.push(absolute)
    else for await (const match of glob(absolute)) found.push(match)
  }
  return [...new Set(found)]
}

/** The rules files of one folder (see {@link RULES_NAMES}); synchronous, as it runs after tool calls. */
export const folderRulesFiles = (dir: string): Array<string> => {
  for (const group of RULES_NAMES) {
    const present = group
      .map((name) => join(dir, name))
      .filter((file) => statSync(file, { throwIfNoEntry: false })?.isFile() === true)
    if (present.length > 0) return present
  }
  return []
}

/**
 * The real path of `file` when it is inside `root` but leads outside it (a symlink out of the project); undefined
 * when it stays inside, is outside `root` to begin with, or does not exist.
 */
export const escapingRealPath = (root: string, file: string): string | undefined => {
  if (!isWithin(root, file)) return undefined
  try {
    const real = realpathSync.native(file)
    return isWithin(realpathSync.native(root), real) ? undefined : real
  } catch {
    return undefined
  }
}

/** Folders whose rules never load on touch: other people's packages and git's own files. */
const FOREIGN = new Set(["node_modules", ".git"])

/**
 * The folders whose rules files a touched `file` brings in: every folder strictly below `directory` down to the
 * file's own folder, shallowest first. Empty when the file is not below `directory` or lies in a `node_modules` or
 * `.git` folder.
 */
export const nestedRulesFolders = (directory: string, file: string): Array<string> => {
  const folder = dirname(file)
  if (folder === directory || !isWithin(directory, folder)) return []
  const segments = relative(directory, folder).split(sep)
  if (segments.some((segment) => FOREIGN.has(segment))) return []
  return segments.map((_, i) => join(directory, ...segments.slice(0, i + 1)))
}
