import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { SessionStore } from "../src/store/session-store.js"
import { assistant, text, user, session as withParent } from "../src/testing/session-store-contract.js"

const session = (id: string, updated: number, parentID?: string) =>
  withParent(id, updated, parentID ? { parentID } : {})

describe("SessionStore.memory", () => {
  it.effect("keeps messages and parts in id order, and upserts", () =>
    Effect.gen(function* () {
      const store = yield* SessionStore
      yield* store.putSession(session("ses_a", 1))
      yield* store.putMessage(assistant("ses_a", "msg_2", "msg_1"))
      yield* store.putMessage(user("ses_a", "msg_1"))
      yield* store.putPart(text("ses_a", "msg_2", "prt_b", "second"))
      yield* store.putPart(text("ses_a", "msg_2", "prt_a", "first"))
      yield* store.putPart(text("ses_a", "msg_2", "prt_b", "second, edited"))
      const messages = yield* store.messages("ses_a")
      assert.deepStrictEqual(
        messages.map((m) => m.info.id),
        ["msg_1", "msg_2"]
      )
      assert.deepStrictEqual(
        messages[1]?.parts.map((p) => (p.type === "text" ? p.text : "")),
        ["first", "second, edited"]
      )
      yield* store.removePart("ses_a", "msg_2", "prt_a")
      assert.strictEqual((yield* store.getMessage("ses_a", "msg_2")).parts.length, 1)
      yield* store.removeMessage("ses_a", "msg_1")
      assert.strictEqual((yield* store.messages("ses_a")).length, 1)
    }).pipe(Effect.provide(SessionStore.memory))
  )

  it.effect("fails with typed errors that say what is missing", () =>
    Effect.gen(function* () {
      const store = yield* SessionStore
      const missing = yield* store.getSession("ses_nope").pipe(Effect.flip)
      assert.strictEqual(missing._tag, "SessionNotFound")
      assert.strictEqual(missing.message, 'No session "ses_nope". List sessions with `lathe session list`.')
      const orphan = yield* store.putPart(text("ses_x", "msg_x", "prt_x", "hi")).pipe(Effect.flip)
      assert.strictEqual(orphan._tag, "StoreError")
      assert.strictEqual(orphan.message, "Part prt_x was written before its message msg_x; write the message first.")
      const noMessage = yield* store.getMessage("ses_x", "msg_x").pipe(Effect.flip)
      assert.strictEqual(noMessage._tag, "MessageNotFound")
    }).pipe(Effect.provide(SessionStore.memory))
  )

  it.effect("lists newest first, filters by parent, and deletes a session with its children", () =>
    Effect.gen(function* () {
      const store = yield* SessionStore
      yield* store.putSession(session("ses_old", 1))
      yield* store.putSession(session("ses_new", 5))
      yield* store.putSession(session("ses_child", 3, "ses_old"))
      yield* store.putMessage(user("ses_child", "msg_1"))
      assert.deepStrictEqual(
        (yield* store.listSessions()).map((s) => s.id),
        ["ses_new", "ses_child", "ses_old"]
      )
      assert.deepStrictEqual(
        (yield* store.listSessions({ parentID: null })).map((s) => s.id),
        ["ses_new", "ses_old"]
      )
      assert.deepStrictEqual(
        (yield* store.listSessions({ parentID: "ses_old" })).map((s) => s.id),
        ["ses_child"]
      )
      assert.deepStrictEqual(
        (yield* store.listSessions({ limit: 1 })).map((s) => s.id),
        ["ses_new"]
      )
      yield* store.deleteSession("ses_old")
      assert.deepStrictEqual(
        (yield* store.listSessions()).map((s) => s.id),
        ["ses_new"]
      )
      assert.deepStrictEqual(yield* store.messages("ses_child"), [])
    }).pipe(Effect.provide(SessionStore.memory))
  )
})
