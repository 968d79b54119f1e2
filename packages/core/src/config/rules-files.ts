import { closeSync, openSync, readSync, realpathSync, statSync } from "node:fs"
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

/**
 * The most of one rules file (or imported file) sent to the model: 256 KiB. Only that much is read; the rest is cut
 * with a line saying so, and the person gets a notice naming the file.
 */
export const MAX_RULES_FILE_BYTES = 256 * 1024

/** The most rules text the start of a session sends in all (files and their imports): 1 MiB; later files are cut. */
export const MAX_RULES_TOTAL_BYTES = 1024 * 1024

/** The first `max` bytes of `bytes` as text, never ending inside a UTF-8 character. */
export const utf8Prefix = (bytes: Buffer, max: number): string => {
  if (bytes.length <= max) return bytes.toString("utf8")
  let end = max
  // Back up over continuation bytes (10xxxxxx) to the start of the character that does not fit whole.
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--
  return bytes.subarray(0, end).toString("utf8")
}

/**
 * The first `max` bytes of a file as text, read with bounded reads (never the whole file); undefined when it cannot
 * be read. `cut` is true when the file goes on past `max`.
 */
export const readPrefix = (file: string, max: number): { readonly text: string; readonly cut: boolean } | undefined => {
  let fd: number | undefined
  try {
    fd = openSync(file, "r")
    const buffer = Buffer.alloc(max + 1)
    let length = 0
    while (length < buffer.length) {
      const n = readSync(fd, buffer, length, buffer.length - length, null)
      if (n === 0) break
      length += n
    }
    return { text: utf8Prefix(buffer.subarray(0, length), max), cut: length > max }
  } catch {
    return undefined
  } finally {
    if (fd !== undefined) closeSync(fd)
  }
}

/** Whether an `instructions` entry is a URL (any scheme) rather than a path or glob (see `remote-instructions.ts`). */
export const isRemoteInstruction = (entry: string): boolean => /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(entry)

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
  /**
   * The entries of `instructions` that only an untrusted project's files named (see `ConfigShape`): their matches are
   * never the person's, whatever the pattern spells, and their glob does not walk out of the project root.
   */
  readonly untrustedInstructions?: ReadonlyArray<string>
  /** Told of each place outside the root an untrusted entry's glob would have walked into (not searched). */
  readonly onOutside?: (pattern: string, path: string) => void
}

/** A rules file of the start of a session. */
export interface StartupRulesFile {
  readonly file: string
  /**
   * True when the person named it: one of their own rules files, or a match of their own config's `instructions`
   * outside the project. Any other file of an untrusted project is read only while its real path is inside it.
   */
  readonly personal: boolean
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
 * A glob of an untrusted entry walks only inside the root (an early cut; the wall is the reader's real-path check).
 */
export const startupRules = async (locations: RulesLocations): Promise<Array<StartupRulesFile>> => {
  const dirs: Array<string> = []
  for (let dir = locations.directory; ; dir = dirname(dir)) {
    dirs.push(dir)
    if (dir === locations.root || dirname(dir) === dir || relative(locations.root, dir).startsWith("..")) break
  }
  const found = new Map<string, boolean>()
  const add = (file: string, personal: boolean) => found.set(file, found.get(file) === true || personal)
  const rootFirst = [...dirs].reverse()
  for (const group of RULES_NAMES) {
    for (const dir of rootFirst)
      for (const name of group) if (await isFile(join(dir, name))) add(join(dir, name), false)
    if (found.size > 0) break // the first name that exists anywhere wins
  }
  for (const file of ownRulesFiles(locations)) add(file, true)
  const untrusted = new Set(locations.untrustedInstructions ?? [])
  const { root } = locations
  for (const pattern of locations.instructions) {
    // A URL is listed as written, for the reader to fetch; only the person's or a trusted config's (an untrusted
    // project's were dropped with the config, and are skipped here again).
    if (isRemoteInstruction(pattern)) {
      if (!untrusted.has(pattern)) add(pattern, true)
      continue
    }
    const expanded = pattern.startsWith("~/") ? join(locations.home, pattern.slice(2)) : pattern
    const absolute = isAbsolute(expanded) ? expanded : resolve(root, expanded)
    const theirs = !untrusted.has(pattern)
    const match = (file: string) => add(file, theirs && !isWithin(root, file))
    if (!/[*?[{]/.test(absolute)) match(absolute)
    else if (theirs) for await (const file of glob(absolute)) match(file)
    else
      for await (const file of glob(relative(root, absolute), {
        cwd: root,
        exclude: (entry: string) => {
          const out = !isWithin(root, resolve(root, entry))
          if (out) locations.onOutside?.(pattern, resolve(root, entry))
          return out
        }
      }))
        match(resolve(root, file))
  }
  return [...found].map(([file, personal]) => ({ file, personal }))
}

/** The files of {@link startupRules}, in order. */
export const startupRulesFiles = async (locations: RulesLocations): Promise<Array<string>> =>
  (await startupRules(locations)).map((found) => found.file)

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
 * when it stays inside, is outside `root` to begin with, or does not exist. See {@link outsideRealPath} for a check
 * that does not trust the path as written.
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

/**
 * The real path of `file` when it is outside the real path of `root`, however `file` is written (`..`, a symlink, an
 * absolute path); undefined when it is inside; false when it does not exist (or `root` does not).
 */
export const outsideRealPath = (root: string, file: string): string | false | undefined => {
  let real: string
  let realRoot: string
  try {
    realRoot = realpathSync.native(root)
    real = realpathSync.native(file)
  } catch {
    return false
  }
  return isWithin(realRoot, real) ? undefined : real
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
