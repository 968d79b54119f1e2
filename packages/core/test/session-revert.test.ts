import { assert, describe, it } from "@effect/vitest"
import type { AssistantMessage } from "@lathe/plugin/schema"
import { Effect, Layer } from "effect"
import { Snapshot, type SnapshotPatch } from "../src/contracts/snapshot.js"
import { createSession } from "../src/store/session.js"
import { commitRevert, redoSession, undoLastStep, undoSession, unrevertSession } from "../src/store/session-revert.js"
import { SessionStore } from "../src/store/session-store.js"
import { listTurns } from "../src/store/session-turns.js"
import { testLayer } from "../src/testing/index.js"
import { tempRoot } from "./loop-helpers.js"

/**
 * A snapshot service that records what it was asked to do (the git-backed one is tested in @lathe/snapshot and end
 * to end). `drift` says which files differ in the work tree from a given tree hash (a hand edit since).
 */
const recording = (drift: Record<string, Array<string>> = {}) => {
  const calls: Array<string> = []
  let tracked = 0
  const layer = Layer.succeed(
    Snapshot,
    Snapshot.of({
      track: Effect.sync(() => {
        calls.push("track")
        return `tree${++tracked}`
      }),
      patch: (hash) => Effect.succeed({ hash, files: drift[hash] ?? [] }),
      diff: () => Effect.succeed(""),
      diffFull: () => Effect.succeed([]),
      restore: (hash) => Effect.sync(() => void calls.push(`restore ${hash}`)),
      revert: (patches: ReadonlyArray<SnapshotPatch>) =>
        Effect.sync(
          () => void calls.push(`revert ${patches.map((p) => `${p.hash}:${[...p.files].sort().join("+")}`).join(",")}`)
        )
    })
  )
  return { calls, layer }
}

const user = (sessionID: string, id: string, text: string, time = 1) =>
  Effect.gen(function* () {
    const store = yield* SessionStore
    yield* store.putMessage({
      id,
      sessionID,
      role: "user",
      time: { created: time },
      agent: "build",
      model: { providerID: "p", modelID: "m" }
    })
    yield* store.putPart({ id: `${id}_text`, sessionID, messageID: id, type: "text", text })
  })

/** One step: a patch from `hash`, then its step-finish with the tree after it (`after`, when given). */
const step = (sessionID: string, id: string, hash: string, files: Array<string>, after?: string, time = 1) =>
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
      time: { created: time },
      tokens: { input: 0, output: 0, reasoning: 0, cache: { read: 0, write: 0 } },
      cost: 0
    }
    yield* store.putMessage(message)
    if (files.length > 0)
      yield* store.putPart({ id: `${id}_patch`, sessionID, messageID: id, type: "patch", hash, files })
    yield* store.putPart({
      id: `${id}_finish`,
      sessionID,
      messageID: id,
      type: "step-finish",
      reason: "tool-calls",
      ...(after !== undefined ? { snapshot: after } : {}),
      tokens: message.tokens,
      cost: 0
    })
  })

const ids = (messages: ReadonlyArray<{ readonly info: { readonly id: string } }>) => messages.map((m) => m.info.id)

describe("session undo and redo by step", () => {
  const snapshot = recording()
  it.effect("--step walks back one changing step at a time; redo brings back each undone file", () =>
    Effect.gen(function* () {
      const session = yield* createSession()
      yield* step(session.id, "msg_1", "h1", ["a.ts"])
      yield* step(session.id, "msg_2", "h2", ["b.ts"])
      yield* step(session.id, "msg_3", "h3", ["c.ts", "a.ts"])
      const first = yield* undoLastStep(session.id)
      assert.deepStrictEqual(first.files, ["a.ts", "c.ts"])
      const second = yield* undoSession(session.id, { step: true })
      assert.deepStrictEqual(second.files, ["b.ts"], "only what this undo put back")
      assert.strictEqual(second.session.revert?.messageID, "msg_2")
      assert.strictEqual(second.session.revert?.snapshot, "tree1", "the snapshot from before the first undo is kept")
      const redo = yield* unrevertSession(session.id)
      assert.isUndefined(redo.session.revert)
      assert.deepStrictEqual(redo.files, ["a.ts", "b.ts", "c.ts"])
      // Redo puts back only the undone files, from the tree before the first undo.
      assert.deepStrictEqual(snapshot.calls, [
        "track",
        "revert h3:a.ts+c.ts",
        "revert h2:b.ts",
        "revert tree1:a.ts+b.ts+c.ts"
      ])
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
      assert.deepStrictEqual(ids(yield* store.messages(session.id)), ["msg_1"])
      assert.isUndefined((yield* store.getSession(session.id)).revert)
    }).pipe(Effect.provide(recording().layer), Effect.provide(testLayer({ root: tempRoot() })))
  )
})

/** Two turns: the first changes `a.ts`; the second has three steps (writes `b.ts`, edits `a.ts`, deletes `c.ts`). */
const twoTurns = Effect.gen(function* () {
  const session = yield* createSession()
  yield* user(session.id, "msg_01", "first prompt", 100)
  yield* step(session.id, "msg_02", "h0", ["a.ts"], "t1")
  yield* step(session.id, "msg_03", "t1", [], "t1")
  yield* user(session.id, "msg_04", "second prompt", 200)
  yield* step(session.id, "msg_05", "t1", ["b.ts"], "t2")
  yield* step(session.id, "msg_06", "t2", ["a.ts"], "t3")
  yield* step(session.id, "msg_07", "t3", ["c.ts"], "t4")
  yield* step(session.id, "msg_08", "t4", [], "t4")
  return session
})

describe("session undo and redo by turn", () => {
  it.effect("undo puts back every step of the last turn and hides it, prompt included; redo shows it again", () => {
    const snapshot = recording()
    return Effect.gen(function* () {
      const store = yield* SessionStore
      const session = yield* twoTurns
      const turns = yield* listTurns(session.id)
      assert.deepStrictEqual(
        turns.map((t) => [t.index, t.prompt, t.time, t.files.join(","), t.undone]),
        [
          [1, "first prompt", 100, "a.ts", false],
          [2, "second prompt", 200, "a.ts,b.ts,c.ts", false]
        ]
      )
      const undo = yield* undoSession(session.id)
      assert.deepStrictEqual(undo.files, ["a.ts", "b.ts", "c.ts"])
      assert.deepStrictEqual(undo.overwritten, [])
      assert.strictEqual(undo.session.revert?.messageID, "msg_04", "the turn's prompt is hidden too")
      // Oldest first: a.ts gets its content from before the turn's first step that changed it (t2).
      assert.deepStrictEqual(snapshot.calls, ["track", "revert t1:b.ts,t2:a.ts,t3:c.ts"])
      assert.deepStrictEqual(
        (yield* listTurns(session.id)).map((t) => t.undone),
        [false, true]
      )
      yield* redoSession(session.id)
      assert.deepStrictEqual(snapshot.calls.at(-1), "revert tree1:a.ts+b.ts+c.ts")
      assert.isUndefined((yield* store.getSession(session.id)).revert)
    }).pipe(Effect.provide(snapshot.layer), Effect.provide(testLayer({ root: tempRoot() })))
  })

  it.effect("undo <n> goes back to before turn n; an undone turn or a missing one says so", () => {
    const snapshot = recording()
    return Effect.gen(function* () {
      const session = yield* twoTurns
      const back = yield* undoSession(session.id, { turn: 1 })
      assert.strictEqual(back.session.revert?.messageID, "msg_01")
      assert.deepStrictEqual(back.files, ["a.ts", "b.ts", "c.ts"])
      assert.deepStrictEqual(snapshot.calls, ["track", "revert h0:a.ts,t1:b.ts,t2:a.ts,t3:c.ts"])
      const again = yield* undoSession(session.id, { turn: 2 }).pipe(Effect.flip)
      assert.include(again.message, "undone already")
      const none = yield* undoSession(session.id, { turn: 3 }).pipe(Effect.flip)
      assert.include(none.message, "no turn 3")
      const all = yield* undoSession(session.id).pipe(Effect.flip)
      assert.include(all.message, "every turn is undone already")
    }).pipe(Effect.provide(snapshot.layer), Effect.provide(testLayer({ root: tempRoot() })))
  })

  it.effect("undo twice goes one turn further back each time", () => {
    const snapshot = recording()
    return Effect.gen(function* () {
      const session = yield* twoTurns
      yield* undoSession(session.id)
      const second = yield* undoSession(session.id)
      assert.strictEqual(second.session.revert?.messageID, "msg_01")
      assert.deepStrictEqual(second.files, ["a.ts"])
      assert.deepStrictEqual(snapshot.calls.at(-1), "revert h0:a.ts")
    }).pipe(Effect.provide(snapshot.layer), Effect.provide(testLayer({ root: tempRoot() })))
  })

  it.effect("a file edited by hand after the turn stops the undo and is named; force overwrites it", () => {
    // a.ts differs from t3 (the tree after the last step that changed it): a hand edit since.
    const snapshot = recording({ t3: ["a.ts"], t2: ["a.ts"] })
    return Effect.gen(function* () {
      const store = yield* SessionStore
      const session = yield* twoTurns
      const refused = yield* undoSession(session.id).pipe(Effect.flip)
      assert.strictEqual(refused._tag, "RevertConflict")
      if (refused._tag !== "RevertConflict") return
      assert.deepStrictEqual(refused.files, ["a.ts"])
      assert.include(refused.message, "lathe undo --force")
      assert.deepStrictEqual(snapshot.calls, [], "nothing was changed")
      assert.isUndefined((yield* store.getSession(session.id)).revert)
      const forced = yield* undoSession(session.id, { force: true })
      assert.deepStrictEqual(forced.overwritten, ["a.ts"])
      assert.deepStrictEqual(snapshot.calls, ["track", "revert t1:b.ts,t2:a.ts,t3:c.ts"])
    }).pipe(Effect.provide(snapshot.layer), Effect.provide(testLayer({ root: tempRoot() })))
  })

  it.effect("a file edited by hand after the undo stops the redo; force brings the turn back anyway", () => {
    // After the undo, b.ts should be as at t1 (before the step that wrote it); it is not.
    const snapshot = recording({ t1: ["b.ts"] })
    return Effect.gen(function* () {
      const session = yield* twoTurns
      yield* undoSession(session.id)
      const refused = yield* redoSession(session.id).pipe(Effect.flip)
      assert.strictEqual(refused._tag, "RevertConflict")
      if (refused._tag !== "RevertConflict") return
      assert.deepStrictEqual(refused.files, ["b.ts"])
      assert.include(refused.message, "lathe redo --force")
      assert.strictEqual(snapshot.calls.length, 2, "redo changed nothing")
      const forced = yield* redoSession(session.id, { force: true })
      assert.deepStrictEqual(forced.overwritten, ["b.ts"])
    }).pipe(Effect.provide(snapshot.layer), Effect.provide(testLayer({ root: tempRoot() })))
  })

  it.effect("steps stored before step-finish held the tree after the step are not checked (no false alarms)", () => {
    const snapshot = recording({ h1: ["a.ts"] })
    return Effect.gen(function* () {
      const session = yield* createSession()
      yield* user(session.id, "msg_1", "old session")
      // Before: step-finish.snapshot was the tree before the step, the same hash as the patch's.
      yield* step(session.id, "msg_2", "h1", ["a.ts"], "h1")
      const undo = yield* undoSession(session.id)
      assert.deepStrictEqual(undo.files, ["a.ts"])
    }).pipe(Effect.provide(snapshot.layer), Effect.provide(testLayer({ root: tempRoot() })))
  })

  it.effect("a turn that changed no files is undone (messages hidden) even with snapshots off", () =>
    Effect.gen(function* () {
      const session = yield* createSession()
      yield* user(session.id, "msg_1", "just talk")
      yield* step(session.id, "msg_2", "", [])
      const undo = yield* undoSession(session.id)
      assert.deepStrictEqual(undo.files, [])
      assert.strictEqual(undo.session.revert?.messageID, "msg_1")
      const redo = yield* redoSession(session.id)
      assert.isUndefined(redo.session.revert)
    }).pipe(Effect.provide(testLayer({ root: tempRoot() })))
  )

  it.effect("a subagent's changes during the task call count in the calling turn", () => {
    const snapshot = recording()
    return Effect.gen(function* () {
      const store = yield* SessionStore
      const parent = yield* createSession()
      const child = yield* createSession({ parentID: parent.id })
      yield* user(parent.id, "msg_10", "delegate", 10)
      yield* step(parent.id, "msg_11", "", [])
      yield* store.putPart({
        id: "msg_11_task",
        sessionID: parent.id,
        messageID: "msg_11",
        type: "tool",
        callID: "c1",
        tool: "task",
        state: {
          status: "completed",
          input: {},
          output: "done",
          title: "task",
          metadata: { sessionID: child.id },
          time: { start: 20, end: 30 }
        }
      })
      yield* user(child.id, "msg_12", "do it", 21)
      yield* step(child.id, "msg_13", "k1", ["sub.ts"], "k2", 22)
      // A later resume of the same subagent session is not this turn's.
      yield* step(child.id, "msg_14", "k2", ["later.ts"], "k3", 99)
      const [turn] = yield* listTurns(parent.id)
      assert.deepStrictEqual(turn?.files, ["sub.ts"])
      const undo = yield* undoSession(parent.id)
      assert.deepStrictEqual(undo.files, ["sub.ts"])
      assert.deepStrictEqual(snapshot.calls, ["track", "revert k1:sub.ts"])
    }).pipe(Effect.provide(snapshot.layer), Effect.provide(testLayer({ root: tempRoot() })))
  })
})
