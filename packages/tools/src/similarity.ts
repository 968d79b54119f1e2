/** Folds the look-alikes models and editors swap: NFKC forms, curly quotes, dashes, non-breaking spaces. */
export const foldUnicode = (value: string): string =>
  value
    .normalize("NFKC")
    .replace(/[\u2018\u2019\u201A\u201B\u2032]/g, "'")
    .replace(/[\u201C\u201D\u201E\u201F\u2033]/g, '"')
    .replace(/[\u2010-\u2015\u2212]/g, "-")
    .replace(/[\u00A0\u2007\u202F\u3000]/g, " ")

/** A line compared for meaning, not layout: unicode folded, whitespace runs collapsed, ends trimmed. */
export const normaliseLine = (line: string): string => foldUnicode(line).replace(/\s+/g, " ").trim()

/** Leading whitespace of a line. */
export const indentOf = (line: string): string => /^[ \t]*/.exec(line)?.[0] ?? ""

/**
 * Similarity of two strings in [0, 1]: the Dice coefficient of their character bigrams after whitespace is
 * collapsed. Linear time, so it can score many candidate windows of a big file.
 */
export const similarity = (a: string, b: string): number => {
  const x = a.replace(/\s+/g, " ").trim()
  const y = b.replace(/\s+/g, " ").trim()
  if (x === y) return 1
  if (x.length < 2 || y.length < 2) return 0
  const counts = new Map<string, number>()
  for (let i = 0; i < x.length - 1; i++) {
    const gram = x.slice(i, i + 2)
    counts.set(gram, (counts.get(gram) ?? 0) + 1)
  }
  let shared = 0
  for (let i = 0; i < y.length - 1; i++) {
    const gram = y.slice(i, i + 2)
    const left = counts.get(gram) ?? 0
    if (left > 0) {
      shared++
      counts.set(gram, left - 1)
    }
  }
  return (2 * shared) / (x.length - 1 + (y.length - 1))
}

/** Undoes the escaping a model applies when it writes code as a JSON string twice: `\n`, `\t`, `\"`, `\\` … */
export const unescapeModelString = (value: string): string =>
  value.replace(/\\(n|t|r|"|'|`|\\|\$)/g, (_, c: string) =>
    c === "n" ? "\n" : c === "t" ? "\t" : c === "r" ? "\r" : c
  )

/** Edit distance between two short strings (for "did you mean" suggestions). */
export const levenshtein = (a: string, b: string): number => {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost)
    }
    previous = current
  }
  return previous[b.length] ?? 0
}
