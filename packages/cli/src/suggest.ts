/**
 * "Did you mean": the nearest of a list of names to a mistyped word. Apart from the command kit, `main.ts` (top-level
 * command typos) and the interactive UI (slash commands) use it; it imports nothing, so `lathe --version` pays for
 * no more than its own few lines.
 */

/**
 * The edit distance between `a` and `b`: insertions, deletions, substitutions and swaps of two neighbouring letters
 * (`modles` is one edit from `models`), each counting 1.
 */
export const editDistance = (a: string, b: string): number => {
  let before: Array<number> = []
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(
        (previous[j] ?? 0) + 1,
        (current[j - 1] ?? 0) + 1,
        (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1)
      )
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        current[j] = Math.min(current[j] ?? 0, (before[j - 2] ?? 0) + 1)
    }
    before = previous
    previous = current
  }
  return previous[b.length] ?? 0
}

/**
 * The candidate `word` is most likely a typo of: the closest within edit distance 2 (case-insensitive; the first
 * listed wins a tie), else the only candidate `word` is a prefix of. Undefined when nothing is close.
 */
export const suggest = (word: string, candidates: Iterable<string>): string | undefined => {
  const lower = word.toLowerCase()
  if (lower === "") return undefined
  let best: { readonly name: string; readonly distance: number } | undefined
  const prefixed: Array<string> = []
  for (const name of candidates) {
    const distance = editDistance(lower, name.toLowerCase())
    if (distance <= 2 && distance < lower.length && (best === undefined || distance < best.distance))
      best = { name, distance }
    if (name.toLowerCase().startsWith(lower)) prefixed.push(name)
  }
  return best?.name ?? (prefixed.length === 1 ? prefixed[0] : undefined)
}
