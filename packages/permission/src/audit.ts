import { appendFileSync, mkdirSync } from "node:fs"
import { readFile } from "node:fs/promises"
import { dirname, join } from "node:path"
import { Rule } from "@lathe/plugin"
import { Effect, Schema } from "effect"

/** Who or what decided. */
export const AuditDecider = Schema.Literals(["rule", "hook", "approval", "reply", "abort", "yes"])
/** Who or what decided. */
export type AuditDecider = typeof AuditDecider.Type

/** One decision on one pattern: a line of `<data>/permission/audit.jsonl`. */
export const AuditEntry = Schema.Struct({
  /** Epoch milliseconds, from the Effect `Clock`. */
  time: Schema.Number,
  sessionID: Schema.String,
  callID: Schema.optionalKey(Schema.String),
  /** The pending ask's id, when the decision waited for a reply. */
  requestID: Schema.optionalKey(Schema.String),
  permission: Schema.String,
  pattern: Schema.String,
  /** `allow`, `deny` or `ask` for rules; `once`, `always` or `reject` for replies. */
  decision: Schema.Literals(["allow", "deny", "ask", "once", "always", "reject"]),
  by: AuditDecider,
  /** The deciding rule, with its `source` (the file it came from). */
  rule: Schema.optionalKey(Rule),
  /** Why, in words: the hook's message, the person's words, "aborted". */
  reason: Schema.optionalKey(Schema.String)
})
/** One audited decision. */
export type AuditEntry = typeof AuditEntry.Type

const AuditLine = Schema.fromJsonString(AuditEntry)
const decodeLine = Schema.decodeUnknownOption(AuditLine)
/** `value`'s own values of `keys`, in that order (undefined ones are left out by `JSON.stringify`). */
const pick = (value: object, keys: ReadonlyArray<string>): Record<string, unknown> =>
  Object.fromEntries(keys.map((key) => [key, (value as Record<string, unknown>)[key]]))
const entryKeys = Object.keys(AuditEntry.fields)
const ruleKeys = Object.keys(Rule.fields)

/**
 * One entry as its JSON line: the schema's fields in order, as `Schema.encodeSync(AuditLine)` writes them (the encoded
 * form is the entry itself), without a schema walk on every ask.
 */
const encodeLine = (entry: AuditEntry): string =>
  JSON.stringify({ ...pick(entry, entryKeys), rule: entry.rule === undefined ? undefined : pick(entry.rule, ruleKeys) })

/** Where the audit trail lives: `<data>/permission/audit.jsonl`. */
export const auditPath = (dataDir: string): string => join(dataDir, "permission", "audit.jsonl")

/**
 * Appends decisions, one JSON line each, in one write. Auditing never fails an ask: a write error is logged
 * as a warning and the decision stands.
 */
export const appendAudit = Effect.fn("Audit.append")(function* (path: string, entries: ReadonlyArray<AuditEntry>) {
  if (entries.length === 0) return
  const text = entries.map((entry) => `${encodeLine(entry)}\n`).join("")
  // One small synchronous append (tens of microseconds): an ask on the hot path never waits on the thread pool.
  yield* Effect.try(() => {
    if (!auditDirs.has(path)) {
      mkdirSync(dirname(path), { recursive: true, mode: 0o700 })
      auditDirs.add(path)
    }
    appendFileSync(path, text, { mode: 0o600 })
  }).pipe(Effect.catch((error) => Effect.logWarning(`Cannot write the permission audit trail ${path}`, error)))
})

/** Trails whose folder is known to exist. */
const auditDirs = new Set<string>()

/** What to read from the audit trail. */
export interface AuditFilter {
  readonly sessionID?: string
  readonly permission?: string
  /** Only the last this many matching entries. */
  readonly limit?: number
}

/**
 * Reads the audit trail, oldest first. A missing file is an empty trail; a line that is not a valid entry (a
 * torn write, a hand edit) is skipped.
 */
export const readAudit = async (path: string, filter: AuditFilter = {}): Promise<Array<AuditEntry>> => {
  const text = await readFile(path, "utf8").catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return ""
    throw error
  })
  const entries = text
    .split("\n")
    .flatMap((line) => {
      if (line.trim() === "") return []
      const entry = decodeLine(line)
      return entry._tag === "Some" ? [entry.value] : []
    })
    .filter(
      (entry) =>
        (filter.sessionID === undefined || entry.sessionID === filter.sessionID) &&
        (filter.permission === undefined || entry.permission === filter.permission)
    )
  return filter.limit === undefined ? entries : entries.slice(-filter.limit)
}
