import { randomBytes } from "node:crypto"

/** The kinds of ids Lathe makes, and their prefixes. */
const prefixes = { session: "ses", message: "msg", part: "prt", permission: "per", call: "cal" } as const
/** A kind of id. */
export type IdKind = keyof typeof prefixes

let last = 0n

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
  const random = [...randomBytes(12)].map((byte) => (byte % 36).toString(36)).join("")
  return `${prefixes[kind]}_${stamp}${random}`
}
