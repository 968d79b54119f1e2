import { execFile } from "node:child_process"
import type { Dirent } from "node:fs"
import { readdir, realpath, stat } from "node:fs/promises"
import { isAbsolute, relative, resolve, sep } from "node:path"
import { prepareSafeGit } from "@lathe/core"

/** At most this many files are listed for completion. */
export const FILE_LIMIT = 50_000

const SKIPPED_DIRECTORIES = new Set(["node_modules", ".git", "dist"])

/** The `@query` token the cursor is at the end of (an `@` at the start or after whitespace, no spaces in query). */
export const mentionAt = (
  text: string,
  cursor: number
): { readonly start: number; readonly query: string } | undefined => {
  let start = Math.max(0, Math.min(cursor, text.length))
  while (start > 0 && !/\s/.test(text[start - 1] ?? "")) start -= 1
  if (text[start] !== "@") return undefined
  return { start, query: text.slice(start + 1, cursor) }
}

/** The files git lists, through core's hardened git (no program the repository's config names runs). */
const gitFiles = async (root: string): Promise<ReadonlyArray<string> | undefined> => {
  const safe = await prepareSafeGit(root).catch(() => undefined)
  if (safe === undefined) return undefined
  return new Promise((done) => {
    execFile(
      "git",
      [...safe.options, "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
      { cwd: root, env: safe.env, maxBuffer: 256 * 1024 * 1024, timeout: 30_000, windowsHide: true },
      (error, stdout) => done(error ? undefined : [...new Set(stdout.split("\0").filter((p) => p !== ""))])
    )
  })
}

/** Breadth-first, sorted walk (shallow files first), skipping node_modules/.git/dist and not following symlinks. */
const walkFiles = async (root: string): Promise<ReadonlyArray<string>> => {
  const files: Array<string> = []
  let level: Array<string> = [""]
  while (level.length > 0 && files.length < FILE_LIMIT) {
    const deeper: Array<string> = []
    for (const directory of level) {
      const entries: Array<Dirent> = await readdir(resolve(root, directory), { withFileTypes: true }).catch(() => [])
      entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      for (const entry of entries) {
        const path = directory === "" ? entry.name : `${directory}/${entry.name}`
        if (entry.isDirectory()) {
          if (!SKIPPED_DIRECTORIES.has(entry.name)) deeper.push(path)
        } else if (files.length < FILE_LIMIT) files.push(path)
      }
    }
    level = deeper
  }
  return files
}

/** The project's files relative to root, like `git ls-files --cached --others --exclude-standard` (use that when root
 * is in a git work tree: run it with execFile, `-z`), else a walk skipping node_modules/.git/dist, capped at 50,000.
 * Paths use "/" on every platform. */
export const listFiles = async (root: string): Promise<ReadonlyArray<string>> => {
  const fromGit = await gitFiles(root)
  return fromGit !== undefined ? fromGit.slice(0, FILE_LIMIT) : walkFiles(root)
}

// Scoring weights for fuzzyFiles: every matched character scores MATCH plus the bonuses of its position.
const MATCH = 16
const CONSECUTIVE = 12
const WORD_START = 10
const BASENAME_START = 14
const IN_BASENAME = 6
const GAP = 1

/** Lower case that keeps every offset (a character whose lower case is longer, like "İ", stays as it is). */
const lowerSameLength = (path: string): string => {
  const lower = path.toLowerCase()
  if (lower.length === path.length) return lower
  return Array.from(path, (c) => {
    const l = c.toLowerCase()
    return l.length === c.length ? l : c
  }).join("")
}

/** Lower-cased copies of the last file lists ranked, so typing a query does not lower-case 50,000 paths per key. */
const lowered = new WeakMap<ReadonlyArray<string>, ReadonlyArray<string>>()

let bonus = new Float64Array(256)
let previousRow = new Float64Array(256)
let currentRow = new Float64Array(256)

// "/", ".", "_", "-" and " ": a character after one of these starts a word.
const isSeparator = (code: number): boolean => code === 47 || code === 46 || code === 95 || code === 45 || code === 32
const isUpper = (code: number): boolean =>
  code < 128 ? code >= 65 && code <= 90 : String.fromCharCode(code) !== String.fromCharCode(code).toLowerCase()

/**
 * The best alignment score of `query` (lower case) in `lower` from offset `start` (where `query[0]` first occurs),
 * by dynamic programming over (query character, path position); `path` gives the case for camelCase humps.
 */
const score = (query: string, lower: string, path: string, start: number): number => {
  const n = lower.length
  const m = query.length
  if (bonus.length < n) {
    bonus = new Float64Array(n * 2)
    previousRow = new Float64Array(n * 2)
    currentRow = new Float64Array(n * 2)
  }
  const base = path.lastIndexOf("/") + 1
  const first = query.charCodeAt(0)
  let result = -Infinity
  let before = start === 0 ? 47 : path.charCodeAt(start - 1)
  for (let j = start; j < n; j++) {
    const here = path.charCodeAt(j)
    let b = j >= base ? IN_BASENAME : 0
    if (j === base) b += BASENAME_START
    else if (isSeparator(before) || (isUpper(here) && !isUpper(before))) b += WORD_START
    bonus[j] = b
    before = here
    // A tiny penalty per leading character: of two equal alignments, the one starting earlier wins.
    const value = lower.charCodeAt(j) === first ? MATCH + b - j * 0.01 : -Infinity
    previousRow[j] = value
    if (value > result) result = value
  }
  for (let i = 1; i < m; i++) {
    const want = query.charCodeAt(i)
    let best = -Infinity
    result = -Infinity
    currentRow[start] = -Infinity
    for (let j = start + 1; j < n; j++) {
      const diagonal = previousRow[j - 1] as number
      if (lower.charCodeAt(j) === want) {
        const value = Math.max(diagonal + CONSECUTIVE, best - GAP) + MATCH + (bonus[j] as number)
        currentRow[j] = value
        if (value > result) result = value
      } else currentRow[j] = -Infinity
      if (diagonal > best) best = diagonal
    }
    const swap = previousRow
    previousRow = currentRow
    currentRow = swap
  }
  return result
}

/** Where `query` starts in `lower` when it is a subsequence of it, else -1. */
const subsequenceStart = (query: string, lower: string): number => {
  const start = lower.indexOf(query[0] ?? "")
  let at = start
  for (let i = 1; i < query.length && at !== -1; i++) at = lower.indexOf(query[i] ?? "", at + 1)
  return at === -1 ? -1 : start
}

interface Ranked {
  readonly path: string
  readonly score: number
}

/** Whether `a` ranks before `b`: higher score, then the shorter path, then alphabetical. */
const before = (a: Ranked, b: Ranked): boolean =>
  a.score !== b.score
    ? a.score > b.score
    : a.path.length !== b.path.length
      ? a.path.length < b.path.length
      : a.path < b.path

/** Fuzzy-ranks files for a query (subsequence match, case-insensitive; bonuses for matches in the basename, at word
 * starts and after / . _ -, and for consecutive characters; shorter paths win ties). Empty query → first `limit` files.
 * Ranks 50,000 paths in a few milliseconds: a cheap subsequence test runs first, the scoring only on matches. */
export const fuzzyFiles = (query: string, files: ReadonlyArray<string>, limit: number): ReadonlyArray<string> => {
  const count = Math.max(0, Math.floor(limit))
  const needle = query.toLowerCase()
  if (needle === "" || count === 0) return files.slice(0, count)
  let lower = lowered.get(files)
  if (lower === undefined || lower.length !== files.length) {
    lower = files.map(lowerSameLength)
    lowered.set(files, lower)
  }
  // The best `count` so far, best first; a plain insertion keeps this linear in files for a small limit.
  const top: Array<Ranked> = []
  for (let k = 0; k < files.length; k++) {
    const path = files[k] ?? ""
    const lowerPath = lower[k] ?? ""
    const start = subsequenceStart(needle, lowerPath)
    if (start === -1) continue
    const candidate = { path, score: score(needle, lowerPath, path, start) }
    const last = top[top.length - 1]
    if (top.length === count && last !== undefined && !before(candidate, last)) continue
    let at = top.length
    while (at > 0 && before(candidate, top[at - 1] as Ranked)) at -= 1
    top.splice(at, 0, candidate)
    if (top.length > count) top.pop()
  }
  return top.map((r) => r.path)
}

// `@"path with spaces"` or `@path`, at the start or after whitespace.
const MENTION = /(?<=^|\s)@(?:"([^"\n]+)"|(\S+))/g

/** Resolves a mentioned path to its root-relative "/" form when it is an existing file inside root. */
const insideRoot = async (root: string, realRoot: string, mentioned: string): Promise<string | undefined> => {
  try {
    const absolute = resolve(root, mentioned)
    const real = await realpath(absolute)
    const fromRoot = relative(realRoot, real)
    if (fromRoot === "" || fromRoot.startsWith(`..${sep}`) || fromRoot === ".." || isAbsolute(fromRoot)) {
      return undefined
    }
    if (!(await stat(real)).isFile()) return undefined
    // Name the file as the person wrote it (relative to root), not as its symlink target.
    const named = relative(root, absolute)
    return (named.startsWith("..") || isAbsolute(named) ? fromRoot : named).split(sep).join("/")
  } catch {
    return undefined
  }
}

/** The `@path` mentions in a prompt that name existing files under root (relative or absolute, no escape outside
 * root; quoted form @"path with spaces" supported), in order, without duplicates. Paths are returned relative to
 * root with "/" separators. An unquoted mention may end in punctuation that is not part of the name
 * (`see @src/a.ts, then`). */
export const mentionedFiles = async (text: string, root: string): Promise<ReadonlyArray<string>> => {
  const realRoot = await realpath(root).catch(() => resolve(root))
  const found: Array<string> = []
  for (const match of text.matchAll(MENTION)) {
    const quoted = match[1]
    const bare = match[2] ?? ""
    const candidates = quoted !== undefined ? [quoted] : [bare, bare.replace(/[.,;:!?)\]}'"`]+$/, "")]
    for (const candidate of candidates) {
      if (candidate === "") continue
      const file = await insideRoot(root, realRoot, candidate)
      if (file !== undefined) {
        if (!found.includes(file)) found.push(file)
        break
      }
    }
  }
  return found
}
