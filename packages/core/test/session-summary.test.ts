import { assert, describe, it } from "@effect/vitest"
import { assistant, session, user } from "@lathe/core/testing/store-contract"
import type { Part } from "@lathe/plugin/schema"
import { Effect, type Layer } from "effect"
import { SessionStore } from "../src/store/session-store.js"
import { SqliteSessionStore } from "../src/store/session-store-sqlite.js"
import { sessionSummaries, summarizeMessages } from "../src/store/session-summary.js"

// The list page's totals: the SQLite store computes them in one query; a store without that query (memory, Postgres)
// falls back to reading each session's messages. Both must give the same answer.
const tokens = (input: number) => ({ input, output: 5, reasoning: 1, cache: { read: 2, write: 0 } })

const fill = Effect.gen(function* () {
  const store = yield* SessionStore
  yield* store.putSession(session("ses_a", 2))
  yield* store.putSession(session("ses_b", 1))
  yield* store.putSession(session("ses_empty", 0))
  yield* store.putMessage(user("ses_a", "msg_1"))
  yield* store.putMessage({
    ...assistant("ses_a", "msg_2", "msg_1"),
    agent: "plan",
    time: { created: 1_000, completed: 1_500 },
    tokens: tokens(10),
    cost: 0.25
  })
  yield* store.putMessage({
    ...assistant("ses_a", "msg_3", "msg_1"),
    time: { created: 2_000, completed: 2_100 },
    tokens: tokens(20),
    cost: 0.5
  })
  const part = (messageID: string, id: string, extra: Record<string, unknown>) =>
    ({ id, sessionID: "ses_a", messageID, ...extra }) as Part
  const finish = { type: "step-finish", reason: "stop", tokens: tokens(1), cost: 0 }
  for (const p of [
    part("msg_2", "prt_1", { type: "step-start" }),
    part("msg_2", "prt_2", { type: "patch", hash: "h1", files: ["a.ts", "b.ts"] }),
    part("msg_2", "prt_3", finish),
    part("msg_2", "prt_4", { type: "step-start" }),
    part("msg_2", "prt_5", { type: "patch", hash: "h2", files: ["b.ts", "c.ts"] }),
    part("msg_2", "prt_6", finish),
    part("msg_3", "prt_7", finish)
  ])
    yield* store.putPart(p)
  yield* store.putMessage(user("ses_b", "msg_9"))
})

const none = { input: 0, output: 0, reasoning: 0, cache: { read: 0, write: 0 } }
const expected = [
  {
    sessionID: "ses_a",
    steps: 3,
    tokens: { input: 30, output: 10, reasoning: 2, cache: { read: 4, write: 0 } },
    cost: 0.75,
    files: 3,
    agent: "plan",
    model: "p/m",
    ms: 600
  },
  { sessionID: "ses_b", steps: 0, tokens: none, cost: 0, files: 0, ms: 0 },
  { sessionID: "ses_missing", steps: 0, tokens: none, cost: 0, files: 0, ms: 0 }
]

const check = (layer: Layer.Layer<SessionStore, unknown>) =>
  Effect.gen(function* () {
    yield* fill
    const ids = ["ses_a", "ses_b", "ses_missing"]
    assert.deepStrictEqual(yield* sessionSummaries(ids), expected)
    // The fallback reads the messages the same way the query does.
    const store = yield* SessionStore
    assert.deepStrictEqual(summarizeMessages("ses_a", yield* store.messages("ses_a")), expected[0])
    assert.deepStrictEqual(yield* sessionSummaries([]), [])
  }).pipe(Effect.provide(layer))

describe("session summaries", () => {
  it.effect("SQLite: one aggregate query", () =>
    Effect.gen(function* () {
      const store = yield* SessionStore
      assert.isFunction(store.summaries)
    }).pipe(Effect.provide(SqliteSessionStore.layerTemp()), Effect.andThen(check(SqliteSessionStore.layerTemp())))
  )
  it.effect("memory: from each session's messages", () => check(SessionStore.memory))
})
