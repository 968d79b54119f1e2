/**
 * Model ids close to one a provider did not know ("claude-sonet-4-5" → "claude-sonnet-4-5"), for "did you mean"
 * hints in error messages and notices.
 */

/** Edit distance (insertions, deletions, substitutions) between `a` and `b`, giving up past `limit`. */
const distance = (a: string, b: string, limit: number): number => {
  if (Math.abs(a.length - b.length) > limit) return limit + 1
  let row = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const next = [i]
    let best = i
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      const value = Math.min((row[j] ?? 0) + 1, (next[j - 1] ?? 0) + 1, (row[j - 1] ?? 0) + cost)
      next[j] = value
      if (value < best) best = value
    }
    if (best > limit) return limit + 1
    row = next
  }
  return row[b.length] ?? 0
}

/** Length of the common prefix of `a` and `b`. */
const sharedPrefix = (a: string, b: string): number => {
  let n = 0
  while (n < a.length && n < b.length && a[n] === b[n]) n++
  return n
}

/**
 * Up to `max` (default 3) of `candidates` close to `id`, closest first: ids within a small edit distance (a third of
 * the id's length, at least 2), then ids sharing a long prefix with it (at least two thirds of the id, and 4
 * characters), such as a dated twin of an undated id. Case is ignored; `id` itself is never returned.
 */
export const closeMatches = (id: string, candidates: Iterable<string>, max = 3): ReadonlyArray<string> => {
  const wanted = id.toLowerCase()
  if (wanted.length === 0) return []
  const limit = Math.max(2, Math.floor(wanted.length / 3))
  const scored: Array<{ readonly id: string; readonly score: number }> = []
  const seen = new Set<string>()
  for (const candidate of candidates) {
    const lower = candidate.toLowerCase()
    if (lower === wanted || seen.has(candidate)) continue
    seen.add(candidate)
    const edits = distance(wanted, lower, limit)
    const prefix = sharedPrefix(wanted, lower)
    const longPrefix = prefix >= 4 && prefix >= Math.ceil((wanted.length * 2) / 3)
    if (edits <= limit) scored.push({ id: candidate, score: edits })
    else if (longPrefix)
      scored.push({ id: candidate, score: limit + 1 + (wanted.length - prefix) + lower.length / 100 })
  }
  scored.sort((a, b) => a.score - b.score || a.id.length - b.id.length || a.id.localeCompare(b.id))
  return scored.slice(0, max).map((match) => match.id)
}
