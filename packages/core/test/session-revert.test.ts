import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import type { AssistantMessage } from "../src/message.js"
import { createSession } from "../src/session.js"
import { commitRevert, undoLastStep, unrevertSession } from "../src/session-revert.js"
import { SessionStore } from "../src/session-store.js"
import { Snapshot, type SnapshotPatch } from "../src/snapshot.js"
import { testLayer } from "../src/testing.js"
import { tempRoot } from "./loop-helpers.js"

/** A snapshot service that records what it was asked to do (the git-backed one is tested in @lathe/snapshot). */
const recording = () => {
  const calls: Array<string> = []
  let tracked = 0
  const layer = Layer.succeed(
    Snapshot,
    Snapshot.of({
      track: Effect.sync(() => {
        calls.push("track")
        return `tree${++tracked}`
      }),
      patch: (hash) => Effect.succeed({ hash, files: [] }),
      diff: () => Effect.succeed(""),
      diffFull: () => Effect.succeed([]),
      restore: (hash) => Effect.sync(() => void calls.push(`restore ${hash}`)),
      revert: (patches: ReadonlyArray<SnapshotPatch>) =>
        Effect.sync(() => void calls.push(`revert ${patches.map((p) => p.hash).join(",")}`))
    })
  )
  return { calls, layer }
}

const step = (sessionID: string, id: string, hash: string, files: Array<string>) =>
  Effect.gen(function* () {
    const store = yield* SessionStore
    const message: AssistantMessage = {
      id,
      sessionID,
      role: "assistant",
      parentID: "msg_user",
      agent: "build",
      model: { providerID: "p", modelID: "m" },
      path: { cwd: "/", root: "/" },
      time: { created: 1 },
      tokens: { input: 0, output: 0, reasoning: 0, cache: { read: 0, write: 0 } },
      cost: 0
    }
    yield* store.putMessage(message)
    yield* store.putPart({ id: `${id}_patch`, sessionID, messageID: id, type: "patch", hash, files })
  })

describe("session undo and redo", () => {
  const snapshot = recording()
  it.effect("undo walks back one changing step at a time, redo restores the state before the first undo", () =>
    Effect.gen(function* () {
      const session = yield* createSession()
      yield* step(session.id, "msg_1", "h1", ["a.ts"])
      yield* step(session.id, "msg_2", "h2", ["b.ts"])
      yield* step(session.id, "msg_3", "h3", ["c.ts", "a.ts"])
      const first = yield* undoLastStep(session.id)
      assert.deepStrictEqual(first.files, ["a.ts", "c.ts"])
      const second = yield* undoLastStep(session.id)
      assert.deepStrictEqual(second.files, ["a.ts", "b.ts", "c.ts"])
      assert.strictEqual(second.session.revert?.messageID, "msg_2")
      assert.strictEqual(second.session.revert?.snapshot, "tree1", "the snapshot from before the first undo is kept")
      const redo = yield* unrevertSession(session.id)
      assert.isUndefined(redo.session.revert)
      // Oldest patch first (the earliest snapshot decides a file several steps changed); redo restores the first snapshot.
      assert.deepStrictEqual(snapshot.calls, ["track", "revert h3", "revert h2,h3", "restore tree1"])
      const nothing = yield* unrevertSession(session.id).pipe(Effect.flip)
      assert.strictEqual(nothing._tag, "NothingToRevert")
    }).pipe(Effect.provide(snapshot.layer), Effect.provide(testLayer({ root: tempRoot() })))
  )

  it.effect("a new prompt's commit removes the undone messages", () =>
    Effect.gen(function* () {
      const store = yield* SessionStore
      const session = yield* createSession()
      yield* step(session.id, "msg_1", "h1", ["a.ts"])
      yield* step(session.id, "msg_2", "h2", ["b.ts"])
      yield* undoLastStep(session.id)
      yield* commitRevert(session.id)
      assert.deepStrictEqual(
        (yield* store.messages(session.id)).map((m) => m.info.id),
        ["msg_1"]
      )
      assert.isUndefined((yield* store.getSession(session.id)).revert)
    }).pipe(Effect.provide(recording().layer), Effect.provide(testLayer({ root: tempRoot() })))
  )
})
