/**
 * One shell word, resolved as the shell would resolve it before running anything: quotes, backslash escapes,
 * `$'…'` (ANSI-C) and `$"…"` strings. What only run time can tell (parameter, command and arithmetic
 * expansion) leaves the word `dynamic`; unquoted glob and brace characters are kept visible in `pattern`.
 */

/** An argv word: its value when known statically, else its source text and `dynamic`. */
export interface Arg {
  readonly value: string
  readonly dynamic: boolean
  /** The value with every quoted or escaped character preceded by `\`: unescaped `*?[{` are the shell's. */
  readonly pattern?: string
  /** The word holds an unquoted glob (`*`, `?`, `[`): the shell replaces it with matching file names. */
  readonly glob?: boolean
  /** The parser gave this word text no shell word can have: the line must be treated as unknown. */
  readonly misparsed?: boolean
  /** Stands for file names `find -exec` substitutes (`{}`): static text, but not the value that runs. */
  readonly placeholder?: boolean
}

/** A static word with no special characters. */
export const literal = (value: string): Arg => ({ value, dynamic: false, pattern: escapeAll(value) })

const escapeAll = (text: string): string => text.replace(/[\s\S]/gu, (char) => `\\${char}`)

const SIMPLE_ESCAPES: Readonly<Record<string, string>> = {
  a: "\x07",
  b: "\b",
  e: "\x1b",
  E: "\x1b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
  v: "\v",
  "\\": "\\",
  "'": "'",
  '"': '"',
  "?": "?"
}

/** Decodes the body of a `$'…'` string as bash does (`\n`, `\xHH`, `\NNN`, `\uHHHH`, `\cX` …). */
export const decodeAnsiC = (body: string): string => {
  let out = ""
  for (let i = 0; i < body.length; i++) {
    const char = body[i] as string
    if (char !== "\\" || i + 1 >= body.length) {
      out += char
      continue
    }
    const next = body[i + 1] as string
    const simple = SIMPLE_ESCAPES[next]
    if (simple !== undefined) {
      out += simple
      i++
      continue
    }
    const numeric = (pattern: RegExp, radix: number, skip: number) => {
      const match = pattern.exec(body.slice(i + skip))
      if (!match) return false
      out += String.fromCodePoint(Number.parseInt(match[0], radix))
      i += skip - 1 + match[0].length
      return true
    }
    if (next === "x" && numeric(/^[0-9a-fA-F]{1,2}/, 16, 2)) continue
    if (next === "u" && numeric(/^[0-9a-fA-F]{1,4}/, 16, 2)) continue
    if (next === "U" && numeric(/^[0-9a-fA-F]{1,8}/, 16, 2)) continue
    if (/[0-7]/.test(next) && numeric(/^[0-7]{1,3}/, 8, 1)) continue
    if (next === "c" && i + 2 < body.length) {
      out += String.fromCharCode((body.charCodeAt(i + 2) & 0x1f) >>> 0)
      i += 2
      continue
    }
    out += `\\${next}`
    i++
  }
  return out
}

const EXPANSION_START = /^[A-Za-z0-9_{(@*#?$!-]/

/**
 * Resolves a word from its source text. `$` followed by a name, `{`, `(` or a special parameter, and backticks,
 * make it dynamic (its value is then the source text as written).
 */
export const lexWord = (text: string): Arg => {
  let value = ""
  let pattern = ""
  const quoted = (chars: string) => {
    value += chars
    pattern += escapeAll(chars)
  }
  const dynamic = (): Arg => ({ value: text, dynamic: true })
  let i = 0
  while (i < text.length) {
    const char = text[i] as string
    if (char === "\\") {
      const next = text[i + 1]
      if (next !== undefined && next !== "\n") quoted(next)
      i += 2
    } else if (char === "'") {
      const end = text.indexOf("'", i + 1)
      if (end < 0) return dynamic()
      quoted(text.slice(i + 1, end))
      i = end + 1
    } else if (char === "$" && text[i + 1] === "'") {
      const end = findAnsiEnd(text, i + 2)
      if (end < 0) return dynamic()
      quoted(decodeAnsiC(text.slice(i + 2, end)))
      i = end + 1
    } else if (char === '"' || (char === "$" && text[i + 1] === '"')) {
      const start = char === "$" ? i + 2 : i + 1
      let j = start
      let body = ""
      for (; j < text.length && text[j] !== '"'; j++) {
        const inner = text[j] as string
        if (inner === "`" || (inner === "$" && EXPANSION_START.test(text.slice(j + 1)))) return dynamic()
        if (inner === "\\" && /^[$`"\\\n]/.test(text.slice(j + 1))) {
          if (text[j + 1] !== "\n") body += text[j + 1]
          j++
        } else body += inner
      }
      if (j >= text.length) return dynamic()
      quoted(body)
      i = j + 1
    } else if (
      char === "`" ||
      (char === "$" && EXPANSION_START.test(text.slice(i + 1))) ||
      ((char === "<" || char === ">") && text[i + 1] === "(")
    ) {
      return dynamic()
    } else if (/\s/.test(char)) {
      // An unquoted blank inside one word: the parser merged words or lines (e.g. "ls\n\\rm x").
      return { value: text, dynamic: true, misparsed: true }
    } else {
      value += char
      pattern += char
      i++
    }
  }
  return withGlob(value, pattern)
}

/** Whether a pattern holds an unescaped `*`, `?`, or `[` closed by a later `]`. */
export const isGlobPattern = (pattern: string): boolean => {
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern[i]
    if (char === "\\") i++
    else if (char === "*" || char === "?") return true
    else if (char === "[" && pattern.indexOf("]", i + 2) > 0) return true
  }
  return false
}

const withGlob = (value: string, pattern: string): Arg =>
  isGlobPattern(pattern) ? { value, dynamic: false, pattern, glob: true } : { value, dynamic: false, pattern }

const findAnsiEnd = (text: string, from: number): number => {
  for (let i = from; i < text.length; i++) {
    if (text[i] === "\\") i++
    else if (text[i] === "'") return i
  }
  return -1
}

/** The most words one brace expansion may produce before the word is treated as unknown. */
export const MAX_BRACE_WORDS = 256

/** Splits `pattern` at unescaped `,` at depth 0 of braces. */
const splitTop = (body: string): Array<string> => {
  const parts: Array<string> = []
  let depth = 0
  let start = 0
  for (let i = 0; i < body.length; i++) {
    const char = body[i]
    if (char === "\\") i++
    else if (char === "{") depth++
    else if (char === "}") depth--
    else if (char === "," && depth === 0) {
      parts.push(body.slice(start, i))
      start = i + 1
    }
  }
  parts.push(body.slice(start))
  return parts
}

const sequence = (body: string): Array<string> | undefined => {
  const match = /^(-?\d+|[A-Za-z])\.\.(-?\d+|[A-Za-z])(?:\.\.(-?\d+))?$/.exec(body)
  if (!match) return undefined
  const [, from = "", to = "", stepText] = match
  const numeric = /\d/.test(from) && /\d/.test(to)
  if (!numeric && (/\d/.test(from) || /\d/.test(to))) return undefined
  const a = numeric ? Number(from) : from.charCodeAt(0)
  const b = numeric ? Number(to) : to.charCodeAt(0)
  const step = Math.max(1, Math.abs(Number(stepText ?? 1)) || 1)
  if (Math.abs(b - a) / step > MAX_BRACE_WORDS) return Array.from({ length: MAX_BRACE_WORDS + 1 }, () => "")
  const out: Array<string> = []
  for (let n = a; a <= b ? n <= b : n >= b; n += a <= b ? step : -step) {
    out.push(numeric ? String(n) : escapeAll(String.fromCharCode(n)))
  }
  return out
}

/**
 * Brace-expands a pattern (`a{b,c}` → `ab ac`, `{1..3}`), honouring escapes; returns `[pattern]` when it holds
 * no expansion, and `undefined` past `MAX_BRACE_WORDS` words.
 */
export const expandBraces = (pattern: string): Array<string> | undefined => {
  for (let i = 0; i < pattern.length; i++) {
    if (pattern[i] === "\\") {
      i++
      continue
    }
    if (pattern[i] !== "{") continue
    let depth = 0
    let end = -1
    for (let j = i; j < pattern.length; j++) {
      if (pattern[j] === "\\") j++
      else if (pattern[j] === "{") depth++
      else if (pattern[j] === "}" && --depth === 0) {
        end = j
        break
      }
    }
    if (end < 0) return [pattern]
    const body = pattern.slice(i + 1, end)
    const parts = splitTop(body)
    const alternatives = parts.length > 1 ? parts : sequence(body)
    if (!alternatives) continue
    const head = pattern.slice(0, i)
    const out: Array<string> = []
    for (const alternative of alternatives) {
      const expanded = expandBraces(`${head}${alternative}${pattern.slice(end + 1)}`)
      if (!expanded) return undefined
      out.push(...expanded)
      if (out.length > MAX_BRACE_WORDS) return undefined
    }
    return out
  }
  return [pattern]
}

/** Removes the escapes of a pattern: the value the shell passes on. */
export const unescapePattern = (pattern: string): string => pattern.replace(/\\([\s\S])/gu, "$1")

/** Whether a pattern holds a brace expansion (`{a,b}`, `{1..3}`). */
export const hasBraces = (arg: Arg): boolean =>
  !arg.dynamic && arg.pattern !== undefined && (expandBraces(arg.pattern)?.length ?? 2) !== 1

/** The words an argument becomes after brace expansion (itself when it has none; dynamic past the limit). */
export const braceWords = (arg: Arg): Array<Arg> => {
  if (arg.dynamic || arg.pattern === undefined || !arg.pattern.includes("{")) return [arg]
  const expanded = expandBraces(arg.pattern)
  if (!expanded) return [{ value: arg.value, dynamic: true }]
  if (expanded.length === 1 && expanded[0] === arg.pattern) return [arg]
  return expanded.map((pattern) => withGlob(unescapePattern(pattern), pattern))
}
