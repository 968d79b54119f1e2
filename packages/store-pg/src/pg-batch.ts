import { batchKey as key, type WriteBatch, type WriteOutcome } from "@lathe/core"
import { Effect } from "effect"
import type { SqlClient } from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"

/** Rows per INSERT: 7 columns × 2,000 rows stays well under Postgres's 65,535 parameters per statement. */
const CHUNK = 2_000

const chunks = <A>(rows: ReadonlyArray<A>): Array<ReadonlyArray<A>> => {
  const out: Array<ReadonlyArray<A>> = []
  for (let i = 0; i < rows.length; i += CHUNK) out.push(rows.slice(i, i + CHUNK))
  return out
}

/** `INSERT … VALUES ($1,…),(…) ON CONFLICT (keys) DO UPDATE SET …` over `rows`, one statement per chunk. */
const upsert = (
  sql: SqlClient,
  table: string,
  columns: ReadonlyArray<string>,
  keys: ReadonlyArray<string>,
  rows: ReadonlyArray<ReadonlyArray<string | number | null>>
): Effect.Effect<void, SqlError> =>
  Effect.forEach(
    chunks(rows),
    (chunk) => {
      const params: Array<string | number | null> = []
      const tuples = chunk.map((row) => {
        const start = params.length
        params.push(...row)
        return `(${row.map((_, i) => `$${start + i + 1}`).join(", ")})`
      })
      const updates = columns.filter((c) => !keys.includes(c)).map((c) => `${c} = excluded.${c}`)
      return sql.unsafe(
        `INSERT INTO ${table} (${columns.join(", ")}) VALUES ${tuples.join(", ")}
         ON CONFLICT (${keys.join(", ")}) DO UPDATE SET ${updates.join(", ")}`,
        params
      )
    },
    { discard: true }
  )

/**
 * Writes `batch` with the statements of one transaction (the caller opens it). Rows go in key order, so two
 * processes writing overlapping batches lock rows in the same order. Parts are written only for messages that
 * exist, locked `FOR KEY SHARE` first: a part whose message another process deleted is dropped, and no delete can
 * slip in between the check and the insert.
 */
export const writeBatch = (sql: SqlClient, batch: WriteBatch): Effect.Effect<WriteOutcome, SqlError> =>
  Effect.gen(function* () {
    const rejected: Array<string> = []
    const json = (table: string, value: { readonly id: string }): string | undefined => {
      try {
        return JSON.stringify(value)
      } catch (error) {
        rejected.push(`${table} ${value.id} (${error instanceof Error ? error.message : String(error)})`)
        return undefined
      }
    }
    const sorted = <A>(map: Map<string, A>) => [...map.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))

    const sessions = sorted(batch.sessions).flatMap(([, s]) => {
      const data = json("session", s)
      return data === undefined
        ? []
        : [[s.id, s.projectID, s.parentID || null, s.time.updated, data, s.tree ?? null, s.directory] as const]
    })
    yield* upsert(
      sql,
      "lathe_session",
      ["id", "project_id", "parent_id", "time_updated", "data", "tree", "directory"],
      ["id"],
      sessions
    )

    const messages = sorted(batch.messages).flatMap(([k, m]) => {
      const data = json("message", m)
      return data === undefined ? [] : [{ key: k, row: [m.sessionID, m.id, data] as const }]
    })
    yield* upsert(
      sql,
      "lathe_message",
      ["session_id", "id", "data"],
      ["session_id", "id"],
      messages.map((m) => m.row)
    )

    const parts = sorted(batch.parts)
    const live = new Set<string>()
    const wanted = [...new Set(parts.map(([, p]) => key(p.sessionID, p.messageID)))].sort()
    for (const chunk of chunks(wanted)) {
      const params = chunk.flatMap((k) => k.split("\u0000"))
      const tuples = chunk.map((_, i) => `($${2 * i + 1}, $${2 * i + 2})`)
      const rows = yield* sql.unsafe<{ readonly session_id: string; readonly id: string }>(
        `SELECT session_id, id FROM lathe_message WHERE (session_id, id) IN (${tuples.join(", ")})
         ORDER BY session_id, id FOR KEY SHARE`,
        params
      )
      for (const row of rows) live.add(key(row.session_id, row.id))
    }
    const partRows = parts.flatMap(([, p]) => {
      if (!live.has(key(p.sessionID, p.messageID))) return []
      const data = json("part", p)
      return data === undefined ? [] : [[p.sessionID, p.messageID, p.id, data] as const]
    })
    yield* upsert(
      sql,
      "lathe_part",
      ["session_id", "message_id", "id", "data"],
      ["session_id", "message_id", "id"],
      partRows
    )
    return { rejected, messages: messages.map((m) => m.key) }
  })
