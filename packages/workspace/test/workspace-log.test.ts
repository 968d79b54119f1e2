import { assert, describe, it, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { hashPatch } from "../src/checkout.js"
import { WorkspaceLog } from "../src/workspace-log.js"
import { MemoryWorkspaceLog } from "../src/workspace-log-memory.js"
import { SqlWorkspaceLog } from "../src/workspace-log-sql.js"
import { freshDatabase } from "./helpers.js"

const origin = { repo: "https://example.com/acme/app.git", ref: "main", base: "a".repeat(40) }
const patch = (text: string) => {
  const bytes = new TextEncoder().encode(text)
  return { patch: bytes, hash: hashPatch(bytes) }
}
let counter = 0
const session = () => `ses_${++counter}_${Math.random().toString(36).slice(2, 8)}`

/** The contract every WorkspaceLog layer keeps (run on memory and on Postgres). */
const contract = (log: Layer.Layer<WorkspaceLog, unknown>) =>
  layer(log, { timeout: 60_000 })((it) => {
    it.effect("begin records the origin once; latest has no checkpoint yet", () =>
      Effect.gen(function* () {
        const log = yield* WorkspaceLog
        const id = session()
        assert.strictEqual(yield* log.latest(id), undefined)
        yield* log.begin(id, origin)
        yield* log.begin(id, origin)
        const entry = yield* log.latest(id)
        assert.deepStrictEqual({ repo: entry?.repo, ref: entry?.ref, base: entry?.base }, origin)
        assert.strictEqual(entry?.checkpoint, undefined)
        assert.strictEqual(entry?.patch, undefined)
        assert.isNumber(entry?.updated)
      })
    )

    it.effect("a second begin with another base, ref or repo is a WorkspaceConflict", () =>
      Effect.gen(function* () {
        const log = yield* WorkspaceLog
        const id = session()
        yield* log.begin(id, origin)
        const error = yield* Effect.flip(log.begin(id, { ...origin, base: "b".repeat(40) }))
        assert.strictEqual(error._tag, "WorkspaceConflict")
        assert.include(error.message, "cannot begin again")
        assert.strictEqual((yield* Effect.flip(log.begin(id, { ...origin, ref: "dev" })))._tag, "WorkspaceConflict")
        assert.strictEqual((yield* log.latest(id))?.base, origin.base)
      })
    )

    it.effect("record numbers checkpoints 1, 2, …; latest returns the newest patch byte for byte", () =>
      Effect.gen(function* () {
        const log = yield* WorkspaceLog
        const id = session()
        yield* log.begin(id, origin)
        assert.strictEqual(yield* log.record(id, patch("one")), 1)
        const bytes = Uint8Array.from([0, 255, 10, 13, 128, 0])
        assert.strictEqual(yield* log.record(id, { patch: bytes, hash: hashPatch(bytes) }), 2)
        const entry = yield* log.latest(id)
        assert.strictEqual(entry?.checkpoint, 2)
        assert.deepStrictEqual([...(entry?.patch ?? [])], [...bytes])
        assert.strictEqual(entry?.hash, hashPatch(bytes))
      })
    )

    it.effect("recording the newest hash again writes nothing and returns the newest number", () =>
      Effect.gen(function* () {
        const log = yield* WorkspaceLog
        const id = session()
        yield* log.begin(id, origin)
        yield* log.record(id, patch("same"))
        assert.strictEqual(yield* log.record(id, patch("same")), 1)
        assert.deepStrictEqual(yield* log.checkpoints(id), [1])
        assert.strictEqual(yield* log.record(id, patch("other")), 2)
      })
    )

    it.effect("record on a session never begun is WorkspaceNotFound", () =>
      Effect.gen(function* () {
        const error = yield* Effect.flip((yield* WorkspaceLog).record(session(), patch("x")))
        assert.strictEqual(error._tag, "WorkspaceNotFound")
      })
    )

    it.effect("concurrent records never share a number", () =>
      Effect.gen(function* () {
        const log = yield* WorkspaceLog
        const id = session()
        yield* log.begin(id, origin)
        const numbers = yield* Effect.forEach(
          Array.from({ length: 12 }, (_, i) => i),
          (i) => log.record(id, patch(`edit ${i}`)),
          { concurrency: "unbounded" }
        )
        assert.deepStrictEqual(
          [...numbers].sort((a, b) => a - b),
          Array.from({ length: 12 }, (_, i) => i + 1)
        )
        assert.strictEqual((yield* log.latest(id))?.checkpoint, 12)
      })
    )

    it.effect("keeps only the newest 20 checkpoints", () =>
      Effect.gen(function* () {
        const log = yield* WorkspaceLog
        const id = session()
        yield* log.begin(id, origin)
        for (let i = 0; i < 23; i++) yield* log.record(id, patch(`edit ${i}`))
        const kept = yield* log.checkpoints(id)
        assert.deepStrictEqual(
          kept,
          Array.from({ length: 20 }, (_, i) => i + 4)
        )
        assert.strictEqual((yield* log.latest(id))?.checkpoint, 23)
      })
    )

    it.effect("at returns a kept checkpoint's patch and hash, and nothing for one never recorded or dropped", () =>
      Effect.gen(function* () {
        const log = yield* WorkspaceLog
        const id = session()
        yield* log.begin(id, origin)
        for (let i = 0; i < 22; i++) yield* log.record(id, patch(`edit ${i}`))
        const third = yield* log.at(id, 3)
        assert.strictEqual(Buffer.from(third?.patch ?? []).toString("utf8"), "edit 2")
        assert.strictEqual(third?.hash, patch("edit 2").hash)
        assert.strictEqual(yield* log.at(id, 2), undefined)
        assert.strictEqual(yield* log.at(id, 23), undefined)
        assert.strictEqual(yield* log.at(session(), 1), undefined)
      })
    )

    it.effect("remove forgets the workspace and its checkpoints", () =>
      Effect.gen(function* () {
        const log = yield* WorkspaceLog
        const id = session()
        yield* log.begin(id, origin)
        yield* log.record(id, patch("x"))
        yield* log.remove(id)
        assert.strictEqual(yield* log.latest(id), undefined)
        assert.deepStrictEqual(yield* log.checkpoints(id), [])
        yield* log.remove(id)
      })
    )
  })

describe("MemoryWorkspaceLog.layer", () => {
  contract(MemoryWorkspaceLog.layer())
})

describe("SqlWorkspaceLog.layer on Postgres", () => {
  const db = Layer.unwrap(Effect.promise(() => freshDatabase("lathe_ws_log")).pipe(Effect.map((d) => d.layer)))
  contract(SqlWorkspaceLog.layer().pipe(Layer.provide(db)))

  it.effect(
    "two processes starting at once run each migration once",
    () =>
      Effect.gen(function* () {
        const fresh = yield* Effect.promise(() => freshDatabase("lathe_ws_mig"))
        const start = Effect.gen(function* () {
          const log = yield* WorkspaceLog
          return yield* log.latest("nobody")
        }).pipe(Effect.provide(SqlWorkspaceLog.layer().pipe(Layer.provide(Layer.fresh(fresh.layer)))))
        yield* Effect.all([start, start, start], { concurrency: "unbounded" })
        const rows = yield* Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          return yield* sql<{ version: number }>`select version from lathe_workspace_migrations`
        }).pipe(Effect.provide(fresh.layer))
        assert.deepStrictEqual(
          rows.map((r) => r.version),
          [1]
        )
      }),
    60_000
  )
})
