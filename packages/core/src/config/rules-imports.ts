import { realpathSync } from "node:fs"
import { dirname, isAbsolute, join, resolve } from "node:path"

/** How many imports deep a rules file may reach (the file itself is depth 0). */
export const MAX_IMPORT_DEPTH = 5

/** Trailing characters that end a sentence rather than a path (`see @docs/style.md.`). */
const TRAILING = /[.,;:!?)\]}'"]+$/

/**
 * The `@path` imports of a rules file's text, in order, as Claude Code writes them: an `@` at the start of a line or
 * after blank space, followed by a path (a space in it escaped as `\ `). Nothing inside a fenced code block or an
 * inline code span counts, and a token with neither a `/` nor a `.` in it (`@alice`) is a mention, not a path.
 */
export const importPaths = (text: string): Array<string> => {
  const found: Array<string> = []
  let fence: string | undefined
  for (const line of text.split("\n")) {
    const opening = /^\s*(`{3,}|~{3,})/.exec(line)?.[1]
    if (fence !== undefined) {
      if (opening !== undefined && opening[0] === fence[0] && opening.length >= fence.length && line.trim() === opening)
        fence = undefined
      continue
    }
    if (opening !== undefined) {
      fence = opening
      continue
    }
    const prose = line.replace(/(`+)[^`]*?\1/g, " ")
    for (const match of prose.matchAll(/(?:^|\s)@((?:[^\s\\]|\\ )+)/g)) {
      const path = (match[1] ?? "").replace(TRAILING, "").replaceAll("\\ ", " ")
      if (path.includes("`") || !/[/.]/.test(path)) continue
      found.push(path)
    }
  }
  return [...new Set(found)]
}

/**
 * Where an import points: `~/` is the home folder; a relative path is relative to the importing file's real folder
 * (a `~/.claude/CLAUDE.md` linked from a dotfiles repository imports its neighbours there).
 */
export const resolveImport = (from: string, path: string, home: string): string => {
  if (path.startsWith("~/")) return join(home, path.slice(2))
  if (isAbsolute(path)) return resolve(path)
  let real = from
  try {
    real = realpathSync.native(from)
  } catch {
    // not there (any more): its own folder
  }
  return resolve(dirname(real), path)
}

/** One file a rules file pulled in. */
export interface ImportedRules {
  readonly file: string
  /** The file whose `@path` line pulled it in. */
  readonly from: string
  readonly text: string
}

/** What expanding needs from its host. */
export interface ImportHost {
  readonly home: string
  /** A file's text; undefined when it is not a readable file. */
  readonly read: (file: string) => string | undefined
  /** Undefined when `file` may be followed from the chain that starts at `rules`; else why not (for a notice). */
  readonly refuse: (file: string, rules: string) => string | undefined
  /** Tells the person something once (a notice, never an error). */
  readonly notice: (message: string) => void
}

/**
 * The files `rules` imports, depth first in the order of their `@path` lines, each once: an import that would close
 * a cycle is refused, one deeper than {@link MAX_IMPORT_DEPTH} is not followed, a missing one is skipped, and one
 * the host refuses (outside an untrusted project) is left out, each with a notice.
 */
export const expandImports = (rules: string, text: string, host: ImportHost): Array<ImportedRules> => {
  const out: Array<ImportedRules> = []
  const included = new Set([rules])
  const visit = (from: string, body: string, chain: ReadonlyArray<string>) => {
    for (const path of importPaths(body)) {
      const file = resolveImport(from, path, host.home)
      if (chain.includes(file)) {
        host.notice(`Rules file ${from} imports @${path}, which imports it back: the cycle is not followed.`)
        continue
      }
      if (included.has(file)) continue
      if (chain.length > MAX_IMPORT_DEPTH) {
        host.notice(
          `Rules file ${from} imports @${path}, more than ${MAX_IMPORT_DEPTH} imports deep from ${rules}: not followed.`
        )
        continue
      }
      const refused = host.refuse(file, rules)
      if (refused !== undefined) {
        host.notice(`Rules file ${from} imports @${path}: ${refused}`)
        continue
      }
      const imported = host.read(file)
      if (imported === undefined) {
        host.notice(`Rules file ${from} imports @${path}, but ${file} is not a file it can read: skipped.`)
        continue
      }
      included.add(file)
      out.push({ file, from, text: imported })
      visit(file, imported, [...chain, file])
    }
  }
  visit(rules, text, [rules])
  return out
}
