import type { DatabaseSync } from "node:sqlite"
import { emptyTokens, type MessageWithParts } from "@lathe/plugin/schema"
import { Effect } from "effect"
import { addTokens } from "../llm/usage.js"
import { SessionStore, type SessionSummary, type StoreError } from "./session-store.js"

/** A summary from a session's messages: for stores without an aggregate query (one read of the session each). */
export const summarizeMessages = (sessionID: string, messages: ReadonlyArray<MessageWithParts>): SessionSummary => {
  let tokens = emptyTokens()
  const files = new Set<string>()
  let steps = 0
  let cost = 0
  let ms = 0
  let first: { agent: string; model: string } | undefined
  for (const { info, parts } of messages) {
    if (info.role === "assistant") {
      first ??= { agent: info.agent, model: `${info.model.providerID}/${info.model.modelID}` }
      tokens = addTokens(tokens, info.tokens)
      cost += info.cost
      ms += Math.max(0, (info.time.completed ?? info.time.created) - info.time.created)
    }
    for (const part of parts) {
      if (part.type === "step-finish") steps++
      else if (part.type === "patch") for (const file of part.files) files.add(file)
    }
  }
  return { sessionID, steps, tokens, cost, files: files.size, ...(first ?? {}), ms }
}

/**
 * The summaries of many sessions in one SQL query over the store's JSON rows: the assistant messages' stored sums
 * (tokens, cost, time), a count of `step-finish` parts and of the distinct files of `patch` parts. No part is
 * decoded; the work per session is one pass over its own rows (the keys lead with the session's id).
 */
const summarySql = `
WITH ids(id) AS (SELECT value FROM json_each(?)),
answers AS (
  SELECT m.session_id AS sid, m.id AS id, m.data AS data FROM message m JOIN ids ON m.session_id = ids.id
  WHERE json_extract(m.data, '$.role') = 'assistant'
),
sums AS (
  SELECT sid, MIN(id) AS first,
    TOTAL(json_extract(data, '$.cost')) AS cost,
    TOTAL(json_extract(data, '$.tokens.input')) AS input,
    TOTAL(json_extract(data, '$.tokens.output')) AS output,
    TOTAL(json_extract(data, '$.tokens.reasoning')) AS reasoning,
    TOTAL(json_extract(data, '$.tokens.cache.read')) AS cache_read,
    TOTAL(json_extract(data, '$.tokens.cache.write')) AS cache_write,
    TOTAL(MAX(0, COALESCE(json_extract(data, '$.time.completed'), json_extract(data, '$.time.created'))
      - json_extract(data, '$.time.created'))) AS ms
  FROM answers GROUP BY sid
),
steps AS (
  SELECT p.session_id AS sid, COUNT(*) AS n FROM part p JOIN ids ON p.session_id = ids.id
  WHERE json_extract(p.data, '$.type') = 'step-finish' GROUP BY p.session_id
),
files AS (
  SELECT p.session_id AS sid, COUNT(DISTINCT f.value) AS n FROM part p JOIN ids ON p.session_id = ids.id,
    json_each(p.data, '$.files') f
  WHERE json_extract(p.data, '$.type') = 'patch' GROUP BY p.session_id
)
SELECT ids.id AS sid, sums.cost, sums.input, sums.output, sums.reasoning, sums.cache_read, sums.cache_write, sums.ms,
  json_extract(a.data, '$.agent') AS agent,
  json_extract(a.data, '$.model.providerID') AS provider, json_extract(a.data, '$.model.modelID') AS model,
  steps.n AS steps, files.n AS files
FROM ids
LEFT JOIN sums ON sums.sid = ids.id
LEFT JOIN message a ON a.session_id = ids.id AND a.id = sums.first
LEFT JOIN steps ON steps.sid = ids.id
LEFT JOIN files ON files.sid = ids.id`

const num = (value: unknown): number => (typeof value === "number" ? value : Number(value ?? 0) || 0)

/** Runs the summary query on `db` for `sessionIDs`, in their order. */
export const querySummaries = (db: DatabaseSync, sessionIDs: ReadonlyArray<string>): Array<SessionSummary> => {
  if (sessionIDs.length === 0) return []
  const rows = db.prepare(summarySql).all(JSON.stringify(sessionIDs))
  const byID = new Map(rows.map((row) => [String(row.sid), row]))
  return sessionIDs.map((sessionID): SessionSummary => {
    const row = byID.get(sessionID) ?? {}
    return {
      sessionID,
      steps: num(row.steps),
      tokens: {
        input: num(row.input),
        output: num(row.output),
        reasoning: num(row.reasoning),
        cache: { read: num(row.cache_read), write: num(row.cache_write) }
      },
      cost: num(row.cost),
      files: num(row.files),
      ...(typeof row.agent === "string" ? { agent: row.agent } : {}),
      ...(typeof row.provider === "string" && typeof row.model === "string"
        ? { model: `${row.provider}/${row.model}` }
        : {}),
      ms: num(row.ms)
    }
  })
}

/** The summaries of `sessionIDs`, in their order: the store's aggregate when it has one, else from each session's messages. */
export const sessionSummaries = (
  sessionIDs: ReadonlyArray<string>
): Effect.Effect<ReadonlyArray<SessionSummary>, StoreError, SessionStore> =>
  Effect.flatMap(SessionStore, (store) =>
    store.summaries
      ? store.summaries(sessionIDs)
      : Effect.forEach(sessionIDs, (id) =>
          Effect.map(store.messages(id), (messages) => summarizeMessages(id, messages))
        )
  )
