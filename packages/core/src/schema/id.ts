/** The kinds of ids Lathe makes, and their prefixes. */
const prefixes = { session: "ses", message: "msg", part: "prt", permission: "per", call: "cal" } as const
/** A kind of id. */
export type IdKind = keyof typeof prefixes

let last = 0n

const BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz"

/**
 * 12 random base-36 characters (about 62 bits), from `Math.random`: V8 seeds it per process from the operating
 * system's entropy, and these ids must be unique, not secret (what must not be guessed, an ask's reply id, takes
 * `node:crypto`). Loading `node:crypto` costs some 5 ms of a start, before the first model request.
 */
const randomSuffix = (): string => {
  let out = ""
  for (let i = 0; i < 12; i++) out += BASE36[Math.floor(Math.random() * 36)]
  return out
}

/**
 * A new id of `kind` that sorts after every id made before it in this process (and, across processes, after ids
 * made in earlier milliseconds): `msg_` + 14 hex digits of time and counter + 12 random base-36 characters.
 * Stores order messages and parts by id, so ascending ids are the creation order.
 */
export const ascendingId = (kind: IdKind, now: number = Date.now()): string => {
  // 56 bits: milliseconds * 4096, plus one for each id made within the same millisecond (strictly increasing).
  const candidate = BigInt(now) * 4096n
  last = candidate > last ? candidate : last + 1n
  const stamp = last.toString(16).padStart(14, "0")
  return `${prefixes[kind]}_${stamp}${randomSuffix()}`
}
