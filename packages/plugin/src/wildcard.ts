/**
 * Wildcard patterns of permission rules.
 *
 * Contract: a pattern matches the WHOLE string; `*` matches any run of characters (including none, `/` and
 * spaces), `?` exactly one character, and every other character (regex metacharacters included) only itself.
 * A pattern ending in ` *` also matches the bare command before it: `ls *` matches `ls` and `ls -la`, never
 * `lstmeval`. Dot files are not special: `*.env` matches `.env`. A leading `~/` or `$HOME/` stands for the
 * home directory.
 */

/** A compiled pattern: a predicate over the string asked for. */
export type Matcher = (text: string) => boolean

const hasWildcard = (text: string): boolean => text.includes("*") || text.includes("?")

const escapeRegExp = (text: string): string => text.replace(/[\\^$.|+()[\]{}*?]/g, "\\$&")

/** Replaces a leading `~/` or `$HOME/` (or a bare `~` / `$HOME`) with `home`. */
export const expandHome = (pattern: string, home: string): string => {
  if (home === "") return pattern
  const base = home.endsWith("/") ? home.slice(0, -1) : home
  if (pattern === "~" || pattern === "$HOME") return base
  if (pattern.startsWith("~/")) return `${base}/${pattern.slice(2)}`
  if (pattern.startsWith("$HOME/")) return `${base}/${pattern.slice(6)}`
  return pattern
}

const toRegExp = (pattern: string): RegExp => {
  let source = ""
  for (const char of pattern) source += char === "*" ? "[\\s\\S]*" : char === "?" ? "[\\s\\S]" : escapeRegExp(char)
  return new RegExp(`^${source}$`, "u")
}

/**
 * Compiles a pattern (after home expansion) into the cheapest matcher that honours the contract: equality,
 * `*`, prefix, suffix or bare-command prefix checks, and a regular expression only for the rest.
 */
export const compilePattern = (raw: string, home = ""): Matcher => {
  const pattern = expandHome(raw, home)
  if (pattern === "*") return () => true
  if (!hasWildcard(pattern)) return (text) => text === pattern
  const body = pattern.slice(0, -1)
  if (pattern.endsWith("*") && !hasWildcard(body)) {
    if (body.endsWith(" ")) {
      const bare = body.slice(0, -1)
      return (text) => text === bare || text.startsWith(body)
    }
    return (text) => text.startsWith(body)
  }
  const tail = pattern.slice(1)
  if (pattern.startsWith("*") && !hasWildcard(tail)) return (text) => text.endsWith(tail)
  if (pattern.endsWith(" *")) {
    const bare = toRegExp(pattern.slice(0, -2))
    const full = toRegExp(pattern)
    return (text) => full.test(text) || bare.test(text)
  }
  const regex = toRegExp(pattern)
  return (text) => regex.test(text)
}

/** Whether `text` matches `pattern` (see the module contract). Compiles on every call: prefer `compilePattern`. */
export const wildcardMatch = (pattern: string, text: string, home = ""): boolean => compilePattern(pattern, home)(text)

/** Whether a pattern is a plain literal (no `*` or `?`), e.g. an exact command line remembered by "always". */
export const isLiteralPattern = (pattern: string): boolean => !hasWildcard(pattern)
