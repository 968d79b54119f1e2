/**
 * The behaviour every `SessionStore` layer must have, as one vitest suite over a layer. The in-memory, SQLite and
 * Postgres stores all run it, and so can a third party's backend:
 * ```ts
 * import { sessionStoreContract } from "@lathe/core/testing/store-contract"
 * sessionStoreContract("my store", () => MyStore.layerTest())
 * ```
 * Each test builds a fresh store from `make()`, so `make` must return a layer whose every build starts empty (or
 * at least holds none of the fixtures' ids). A store that keeps its rows outside the process and batches its writes
 * (SQLite, Postgres) also passes `database` and runs the tests of {@link SharedDatabase}. Needs `@effect/vitest` (an
 * optional peer dependency of `@lathe/core`).
 */
import { assert, describe, it } from "@effect/vitest"
import type { AssistantMessage, Part, Session, UserMessage } from "@lathe/plugin/schema"
import { Effect, type Layer, type Scope } from "effect"
import { SessionStore, type StoreError } from "../store/session-store.js"

/** A session updated at `updated`, optionally a child of `parentID`. */
export const session = (id: string, updated: number, extra: Partial<Session> = {}): Session => ({
  id,
  projectID: "prj",
  directory: "/work",
  title: `session ${id}`,
  time: { created: updated, updated },
  ...extra
})

/** A user message. */
export const user = (sessionID: string, id: string): UserMessage => ({
  id,
  sessionID,
  role: "user",
  time: { created: 1 },
  agent: "build",
  model: { providerID: "p", modelID: "m" }
})

/** An assistant message answering `parentID`. */
export const assistant = (sessionID: string, id: string, parentID: string): AssistantMessage => ({
  id,
  sessionID,
  role: "assistant",
  parentID,
  agent: "build",
  model: { providerID: "p", modelID: "m" },
  path: { cwd: "/work", root: "/work" },
  time: { created: 2 },
  tokens: { input: 0, output: 0, reasoning: 0, cache: { read: 0, write: 0 } },
  cost: 0
})

/** A text part. */
export const text = (sessionID: string, messageID: string, id: string, value: string): Part => ({
  id,
  sessionID,
  messageID,
  type: "text",
  text: value
})

/** One part of every type, with optional fields set, in id order. */
export const everyPart = (sessionID: string, messageID: string): ReadonlyArray<Part> => {
  const base = { sessionID, messageID }
  const tokens = { input: 10, output: 5, reasoning: 2, cache: { read: 1, write: 0 } }
  return [
    { ...base, id: "prt_01", type: "step-start", snapshot: "abc123" },
    { ...base, id: "prt_02", type: "reasoning", text: "hmm", metadata: { signature: "s" }, time: { start: 1, end: 2 } },
    { ...base, id: "prt_03", type: "text", text: "héllo 👋", synthetic: true, time: { start: 3 } },
    {
      ...base,
      id: "prt_04",
      type: "tool",
      callID: "call_1",
      tool: "read",
      state: {
        status: "completed",
        input: { path: "a.txt", nested: { list: [1, "two", null] } },
        output: "hello",
        title: "a.txt",
        metadata: { lines: 1 },
        attachments: [{ mime: "image/png", url: "data:image/png;base64,AA==", filename: "x.png" }],
        time: { start: 4, end: 5, compacted: 6 }
      }
    },
    {
      ...base,
      id: "prt_05",
      type: "tool",
      callID: "c2",
      tool: "bash",
      state: { status: "pending", input: {}, raw: '{"co' }
    },
    {
      ...base,
      id: "prt_06",
      type: "tool",
      callID: "c3",
      tool: "edit",
      state: { status: "error", input: { a: 1 }, error: "aborted", time: { start: 7, end: 8 } }
    },
    { ...base, id: "prt_07", type: "step-finish", reason: "tool-calls", snapshot: "def", tokens, cost: 0.0125 },
    { ...base, id: "prt_08", type: "patch", hash: "abc123", files: ["/work/a.txt"] },
    { ...base, id: "prt_09", type: "file", mime: "text/plain", url: "file:///work/a.txt", filename: "a.txt" },
    {
      ...base,
      id: "prt_10",
      type: "subtask",
      agent: "explore",
      description: "d",
      prompt: "p",
      childSessionID: "ses_c"
    },
    { ...base, id: "prt_11", type: "compaction", auto: true },
    { ...base, id: "prt_12", type: "retry", attempt: 2, message: "429", time: { created: 9 } },
    { ...base, id: "prt_13", type: "agent", name: "explore" }
  ]
}

const ids = (list: ReadonlyArray<{ readonly id: string }>) => list.map((item) => item.id)

/**
 * A fresh, empty database for the current scope; the effect it gives opens one more connection (a store of its own,
 * as another process would) to that database, closed with the scope it runs in.
 */
export type SharedDatabase = Effect.Effect<
  Effect.Effect<SessionStore["Service"], StoreError, Scope.Scope>,
  StoreError,
  Scope.Scope
>

const textsOf = (parts: ReadonlyArray<Part>) => parts.map((part) => (part.type === "text" ? part.text : part.type))

/** Runs an effect against a fresh store of the contract's kind. */
type RunStore = <A, E>(
  body: (store: SessionStore["Service"]) => Effect.Effect<A, E>
) => Effect.Effect<A, E | StoreError>

/** The contract's part on listing sessions (by project, parent, work tree) and deleting them. */
const listingContract = (run: RunStore) => {
  it.effect("lists newest first and filters by project, parent and limit", () =>
    run((store) =>
      Effect.gen(function* () {
        yield* store.putSession(session("ses_old", 1))
        yield* store.putSession(session("ses_new", 5))
        yield* store.putSession(session("ses_tie", 5))
        yield* store.putSession(session("ses_child", 3, { parentID: "ses_old" }))
        yield* store.putSession(session("ses_other", 9, { projectID: "prj_2" }))
        assert.deepStrictEqual(ids(yield* store.listSessions()), [
          "ses_other",
          "ses_tie",
          "ses_new",
          "ses_child",
          "ses_old"
        ])
        assert.deepStrictEqual(ids(yield* store.listSessions({ projectID: "prj", parentID: null })), [
          "ses_tie",
          "ses_new",
          "ses_old"
        ])
        assert.deepStrictEqual(ids(yield* store.listSessions({ parentID: "ses_old" })), ["ses_child"])
        assert.deepStrictEqual(ids(yield* store.listSessions({ projectID: "prj_2" })), ["ses_other"])
        assert.deepStrictEqual(ids(yield* store.listSessions({ projectID: "prj", limit: 2 })), ["ses_tie", "ses_new"])
        assert.deepStrictEqual(ids(yield* store.listSessions({ limit: 0 })), [])
        yield* store.putSession(session("ses_old", 10))
        assert.deepStrictEqual(ids(yield* store.listSessions({ limit: 1 })), ["ses_old"], "an update moves it up")
      })
    )
  )

  it.effect("filters by work tree: the recorded tree, or for a session without one its directory in the tree", () =>
    run((store) =>
      Effect.gen(function* () {
        yield* store.putSession(session("ses_a", 1, { directory: "/w/a", tree: "/w/a" }))
        yield* store.putSession(session("ses_a_sub", 2, { directory: "/w/a/src", tree: "/w/a" }))
        yield* store.putSession(session("ses_b", 3, { directory: "/w/b", tree: "/w/b" }))
        // Stored before trees were recorded: no tree, matched by directory.
        yield* store.putSession(session("ses_old_a", 4, { directory: "/w/a/lib" }))
        yield* store.putSession(session("ses_old_ab", 5, { directory: "/w/ab" }))
        // A worktree nested in a: its sessions record their own tree, so they are not a's.
        yield* store.putSession(session("ses_nested", 6, { directory: "/w/a/wt", tree: "/w/a/wt" }))
        assert.deepStrictEqual(ids(yield* store.listSessions({ projectID: "prj", tree: "/w/a" })), [
          "ses_old_a",
          "ses_a_sub",
          "ses_a"
        ])
        assert.deepStrictEqual(ids(yield* store.listSessions({ tree: "/w/b" })), ["ses_b"])
        assert.deepStrictEqual(ids(yield* store.listSessions({ tree: "/w/ab" })), ["ses_old_ab"])
        assert.deepStrictEqual(ids(yield* store.listSessions({ tree: "/w/a", limit: 1 })), ["ses_old_a"])
        assert.strictEqual((yield* store.getSession("ses_b")).tree, "/w/b", "the tree reads back")
        yield* store.putSession(session("ses_old_a", 7, { directory: "/w/a/lib", tree: "/w/other" }))
        assert.deepStrictEqual(
          ids(yield* store.listSessions({ tree: "/w/a" })),
          ["ses_a_sub", "ses_a"],
          "a session given a tree later leaves the tree its directory is in"
        )
      })
    )
  )

  it.effect("deletes a session with its messages, parts and descendants, and nothing else", () =>
    run((store) =>
      Effect.gen(function* () {
        yield* store.putSession(session("ses_root", 1))
        yield* store.putSession(session("ses_child", 2, { parentID: "ses_root" }))
        yield* store.putSession(session("ses_grandchild", 3, { parentID: "ses_child" }))
        yield* store.putSession(session("ses_keep", 4))
        for (const id of ["ses_root", "ses_child", "ses_grandchild", "ses_keep"]) {
          yield* store.putMessage(user(id, "msg_1"))
          yield* store.putPart(text(id, "msg_1", "prt_1", `in ${id}`))
        }
        yield* store.deleteSession("ses_root")
        assert.deepStrictEqual(ids(yield* store.listSessions()), ["ses_keep"])
        for (const id of ["ses_root", "ses_child", "ses_grandchild"]) {
          assert.deepStrictEqual(yield* store.messages(id), [])
          // A message written again under a deleted session's id starts without the old parts.
          yield* store.putMessage(user(id, "msg_1"))
          assert.deepStrictEqual((yield* store.getMessage(id, "msg_1")).parts, [])
        }
        assert.deepStrictEqual((yield* store.getMessage("ses_keep", "msg_1")).parts, [
          text("ses_keep", "msg_1", "prt_1", "in ses_keep")
        ])
        yield* store.deleteSession("ses_never_existed")
      })
    )
  )
}

/**
 * Runs the shared `SessionStore` contract against stores built by `make`; with `database`, also what a store whose
 * rows outlive it and whose writes go through the write-behind batch must do.
 */
export const sessionStoreContract = (
  name: string,
  make: () => Layer.Layer<SessionStore, StoreError>,
  database?: () => SharedDatabase
) =>
  describe(`SessionStore contract: ${name}`, () => {
    if (database !== undefined) sharedDatabaseContract(database)

    const run = <A, E>(body: (store: SessionStore["Service"]) => Effect.Effect<A, E>) =>
      Effect.gen(function* () {
        return yield* body(yield* SessionStore)
      }).pipe(Effect.provide(make()))

    it.effect("keeps messages and parts in id order and upserts them", () =>
      run((store) =>
        Effect.gen(function* () {
          yield* store.putSession(session("ses_a", 1))
          yield* store.putMessage(assistant("ses_a", "msg_2", "msg_1"))
          yield* store.putMessage(user("ses_a", "msg_1"))
          yield* store.putPart(text("ses_a", "msg_2", "prt_b", "second"))
          yield* store.putPart(text("ses_a", "msg_2", "prt_a", "first"))
          yield* store.putPart(text("ses_a", "msg_2", "prt_b", "second, edited"))
          const messages = yield* store.messages("ses_a")
          assert.deepStrictEqual(ids(messages.map((m) => m.info)), ["msg_1", "msg_2"])
          assert.deepStrictEqual(messages[1]?.parts, [
            text("ses_a", "msg_2", "prt_a", "first"),
            text("ses_a", "msg_2", "prt_b", "second, edited")
          ])
          yield* store.putMessage({ ...assistant("ses_a", "msg_2", "msg_1"), cost: 3 })
          const updated = yield* store.getMessage("ses_a", "msg_2")
          assert.strictEqual(updated.info.role === "assistant" && updated.info.cost, 3)
          assert.strictEqual(updated.parts.length, 2, "replacing a message keeps its parts")
        })
      )
    )

    it.effect("round-trips every part type and every optional field exactly", () =>
      run((store) =>
        Effect.gen(function* () {
          const full = session("ses_f", 7, {
            parentID: "ses_p",
            agent: "plan",
            time: { created: 1, updated: 7, compacting: 5 },
            revert: { messageID: "msg_1", partID: "prt_03", snapshot: "abc" }
          })
          yield* store.putSession(full)
          const message = { ...assistant("ses_f", "msg_1", "msg_0"), finish: "stop", summary: true }
          yield* store.putMessage({
            ...message,
            error: { name: "DoomLoopDetected", message: "read 3 times", tool: "read", count: 3 }
          })
          for (const part of everyPart("ses_f", "msg_1")) yield* store.putPart(part)
          assert.deepStrictEqual(yield* store.getSession("ses_f"), full)
          const read = yield* store.getMessage("ses_f", "msg_1")
          assert.deepStrictEqual(read.info, {
            ...message,
            error: { name: "DoomLoopDetected", message: "read 3 times", tool: "read", count: 3 }
          })
          assert.deepStrictEqual(read.parts, everyPart("ses_f", "msg_1"))
        })
      )
    )

    it.effect("fails with typed errors that say what is missing", () =>
      run((store) =>
        Effect.gen(function* () {
          const missing = yield* store.getSession("ses_nope").pipe(Effect.flip)
          assert.strictEqual(missing._tag, "SessionNotFound")
          assert.strictEqual(missing.message, 'No session "ses_nope". List sessions with `lathe session list`.')
          const orphan = yield* store.putPart(text("ses_x", "msg_x", "prt_x", "hi")).pipe(Effect.flip)
          assert.strictEqual(orphan._tag, "StoreError")
          assert.strictEqual(
            orphan.message,
            "Part prt_x was written before its message msg_x; write the message first."
          )
          const noMessage = yield* store.getMessage("ses_x", "msg_x").pipe(Effect.flip)
          assert.strictEqual(noMessage._tag, "MessageNotFound")
          assert.deepStrictEqual(yield* store.messages("ses_x"), [])
          yield* store.flush
        })
      )
    )

    listingContract(run)

    it.effect("removes a message with its parts, and a single part", () =>
      run((store) =>
        Effect.gen(function* () {
          yield* store.putSession(session("ses_a", 1))
          yield* store.putMessage(user("ses_a", "msg_1"))
          yield* store.putMessage(user("ses_a", "msg_2"))
          yield* store.putPart(text("ses_a", "msg_1", "prt_1", "one"))
          yield* store.putPart(text("ses_a", "msg_2", "prt_2", "two"))
          yield* store.putPart(text("ses_a", "msg_2", "prt_3", "three"))
          yield* store.removePart("ses_a", "msg_2", "prt_2")
          assert.deepStrictEqual(ids((yield* store.getMessage("ses_a", "msg_2")).parts), ["prt_3"])
          yield* store.removeMessage("ses_a", "msg_1")
          assert.deepStrictEqual(ids((yield* store.messages("ses_a")).map((m) => m.info)), ["msg_2"])
          const gone = yield* store.putPart(text("ses_a", "msg_1", "prt_9", "late")).pipe(Effect.flip)
          assert.strictEqual(gone._tag, "StoreError")
          yield* store.putMessage(user("ses_a", "msg_1"))
          assert.deepStrictEqual((yield* store.getMessage("ses_a", "msg_1")).parts, [], "old parts stay gone")
        })
      )
    )

    it.effect("reads see every earlier write without an explicit flush", () =>
      run((store) =>
        Effect.gen(function* () {
          yield* store.putSession(session("ses_a", 1))
          assert.strictEqual((yield* store.getSession("ses_a")).title, "session ses_a")
          yield* store.putMessage(user("ses_a", "msg_1"))
          for (let i = 1; i <= 200; i++) {
            yield* store.putPart(text("ses_a", "msg_1", "prt_1", "x".repeat(i)))
            if (i % 50 === 0) {
              const [only] = (yield* store.getMessage("ses_a", "msg_1")).parts
              assert.strictEqual(only?.type === "text" && only.text.length, i)
            }
          }
          yield* store.putSession(session("ses_a", 2, { title: "renamed" }))
          assert.strictEqual((yield* store.listSessions())[0]?.title, "renamed")
          const [message] = yield* store.messages("ses_a")
          assert.strictEqual(message?.parts.length, 1)
        })
      )
    )
  })

/** The tests of a store on a database that several connections share, with batched writes. */
const sharedDatabaseContract = (database: () => SharedDatabase) => {
  it.effect("writes the batch when the store shuts down, and a new connection reads it back", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const open = yield* database()
        yield* Effect.scoped(
          Effect.gen(function* () {
            const store = yield* open
            yield* store.putSession(session("ses_a", 1))
            yield* store.putMessage(user("ses_a", "msg_1"))
            yield* store.putPart(text("ses_a", "msg_1", "prt_1", "never flushed by hand"))
          })
        )
        const again = yield* Effect.scoped(open.pipe(Effect.flatMap((store) => store.messages("ses_a"))))
        assert.deepStrictEqual(textsOf(again[0]?.parts ?? []), ["never flushed by hand"])
      })
    )
  )

  it.effect(
    "two connections on one database: both write, also the same row, each sees the other's flushed writes",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const open = yield* database()
          const [a, b] = [yield* open, yield* open]
          const writer = (store: SessionStore["Service"], name: string) =>
            Effect.gen(function* () {
              for (let step = 0; step < 20; step++) {
                const messageID = `msg_${String(step).padStart(2, "0")}`
                yield* store.putSession(session(`ses_${name}`, step))
                yield* store.putMessage(user(`ses_${name}`, messageID))
                yield* store.putPart(text(`ses_${name}`, messageID, "prt_1", `${name}${step}`))
                // Both also write the same shared row, to race on one key.
                yield* store.putSession(session("ses_shared", step, { title: name }))
                yield* store.flush
                yield* Effect.yieldNow
              }
            })
          yield* Effect.all([writer(a, "a"), writer(b, "b")], { concurrency: "unbounded" })
          for (const [reader, other] of [
            [a, "b"],
            [b, "a"]
          ] as const) {
            const messages = yield* reader.messages(`ses_${other}`)
            assert.strictEqual(messages.length, 20)
            assert.deepStrictEqual(textsOf(messages[19]?.parts ?? []), [`${other}19`])
          }
          assert.deepStrictEqual((yield* a.listSessions()).map((s) => s.id).sort(), ["ses_a", "ses_b", "ses_shared"])
        })
      )
  )

  it.effect("a batch is not poisoned by a part whose message another connection deleted", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const open = yield* database()
        const [a, b] = [yield* open, yield* open]
        yield* a.putSession(session("ses_a", 1))
        yield* a.putMessage(user("ses_a", "msg_1"))
        yield* a.putMessage(user("ses_a", "msg_2"))
        yield* a.flush
        yield* a.putPart(text("ses_a", "msg_1", "prt_1", "orphaned"))
        yield* a.putPart(text("ses_a", "msg_2", "prt_2", "kept"))
        yield* b.removeMessage("ses_a", "msg_1")
        yield* a.flush
        const messages = yield* b.messages("ses_a")
        assert.deepStrictEqual(
          messages.map((m) => [m.info.id, textsOf(m.parts)]),
          [["msg_2", ["kept"]]]
        )
      })
    )
  )

  it.effect("a part that is not JSON is reported and dropped; the rest of the batch is saved", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const store = yield* yield* database()
        yield* store.putSession(session("ses_a", 1))
        yield* store.putMessage(user("ses_a", "msg_1"))
        yield* store.putPart(text("ses_a", "msg_1", "prt_ok", "x"))
        yield* store.putPart({
          id: "prt_big",
          sessionID: "ses_a",
          messageID: "msg_1",
          type: "tool",
          callID: "call_1",
          tool: "bash",
          state: { status: "running", input: {}, metadata: { size: 10n }, time: { start: 1 } }
        })
        const error = yield* store.flush.pipe(Effect.flip)
        assert.match(error.message, /Not saved, because their data is not plain JSON: part prt_big \(.*BigInt.*\)/)
        assert.deepStrictEqual(
          (yield* store.messages("ses_a"))[0]?.parts.map((p) => p.id),
          ["prt_ok"]
        )
        yield* store.flush
      })
    )
  )
}
