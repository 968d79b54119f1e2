import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { DatabaseSync } from "node:sqlite"
import { isDeepStrictEqual } from "node:util"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { assistant, session, text, user } from "@lathe/core/testing/store-contract"
import type { LatheEvent, Part, ReasoningPart, TextPart, ToolPart, ToolState } from "@lathe/plugin/schema"
import { Effect, Layer, Stream } from "effect"
import { Bus } from "../src/contracts/bus.js"
import { SessionStore } from "../src/store/session-store.js"
import { SqliteSessionStore } from "../src/store/session-store-sqlite.js"
import { SessionWriter } from "../src/store/session-writer.js"

const root = mkdtempSync(join(tmpdir(), "lathe-writer-test-"))
afterAll(() => rmSync(root, { recursive: true, force: true }))
let counter = 0
/** A fresh database path under this file's temp dir. */
const freshFile = () => join(root, `db-${++counter}`, "lathe.db")

const same = (a: unknown, b: unknown) => isDeepStrictEqual(a, b)

/**
 * What the store holds for `event` at the moment it is published: "stored" when the store already has exactly what the
 * event tells (or no longer has what it says was removed), "absent" otherwise.
 */
const storedFor = (store: SessionStore["Service"], event: LatheEvent): Effect.Effect<string> => {
  const partOf = (sessionID: string, messageID: string, partID: string) =>
    store.getMessage(sessionID, messageID).pipe(
      Effect.map((message) => message.parts.find((part) => part.id === partID)),
      Effect.orElseSucceed(() => undefined)
    )
  const verdict = (ok: boolean) => (ok ? "stored" : "absent")
  switch (event.type) {
    case "session.created":
    case "session.updated":
      return store.getSession(event.session.id).pipe(
        Effect.map((found) => verdict(same(found, event.session))),
        Effect.orElseSucceed(() => verdict(false))
      )
    case "session.deleted":
      return store.getSession(event.sessionID).pipe(
        Effect.as(verdict(false)),
        Effect.orElseSucceed(() => verdict(true))
      )
    case "message.updated":
      return store.getMessage(event.message.sessionID, event.message.id).pipe(
        Effect.map((found) => verdict(same(found.info, event.message))),
        Effect.orElseSucceed(() => verdict(false))
      )
    case "message.removed":
      return store.getMessage(event.sessionID, event.messageID).pipe(
        Effect.as(verdict(false)),
        Effect.orElseSucceed(() => verdict(true))
      )
    case "part.updated":
      return Effect.map(partOf(event.part.sessionID, event.part.messageID, event.part.id), (found) =>
        verdict(same(found, event.part))
      )
    case "part.delta":
      return Effect.map(partOf(event.sessionID, event.messageID, event.partID), (found) =>
        verdict(found !== undefined && "text" in found && found.text.endsWith(event.delta))
      )
    case "part.removed":
      return Effect.map(partOf(event.sessionID, event.messageID, event.partID), (found) => verdict(found === undefined))
    case "tool.pending":
    case "tool.running":
    case "tool.completed":
    case "tool.error":
      return Effect.map(partOf(event.sessionID, event.messageID, event.partID), (found) =>
        verdict(found?.type === "tool" && same(found.state, event.state))
      )
    default:
      return Effect.succeed("not a store event")
  }
}

/**
 * The writer over a real SQLite file and the real Bus, with a probe on `publish` (a layer over the real Bus, as the
 * CLI's renderer hook is) that looks into the store, and into the file through a second connection, the moment each
 * event is published.
 */
const writerOn = (
  file: string,
  seen: Array<{ readonly type: string; readonly store: string; readonly disk: string }>
) => {
  const store = SqliteSessionStore.layerFile(file)
  const probe = Layer.effect(
    Bus,
    Effect.gen(function* () {
      const bus = yield* Bus
      const sessions = yield* SessionStore
      return Bus.of({
        ...bus,
        publish: (event) =>
          storedFor(sessions, event).pipe(
            Effect.tap((verdict) =>
              Effect.sync(() => {
                const partID = event.type === "part.updated" ? event.part.id : undefined
                const db = new DatabaseSync(file)
                const row = partID ? db.prepare("SELECT id FROM part WHERE id = ?").get(partID) : undefined
                db.close()
                seen.push({ type: event.type, store: verdict, disk: row ? "on disk" : "-" })
              })
            ),
            Effect.andThen(bus.publish(event))
          )
      })
    })
  ).pipe(Layer.provide(Bus.layer))
  return SessionWriter.layer.pipe(Layer.provideMerge(probe.pipe(Layer.provideMerge(store))))
}

/** Runs `body` and returns the events the Bus carried meanwhile, in order. */
const announced = <A, E, R>(count: number, body: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const events = yield* (yield* Bus).subscribe
    yield* body
    return Array.from(yield* events.pipe(Stream.take(count), Stream.runCollect))
  })

const tool = (id: string, state: ToolState): ToolPart => ({
  id,
  sessionID: "ses_a",
  messageID: "msg_2",
  type: "tool",
  callID: `call_${id}`,
  tool: "read",
  state
})

describe("SessionWriter", () => {
  it.effect("each method stores its change, then announces exactly what was stored, in order", () => {
    const seen: Array<{ readonly type: string; readonly store: string; readonly disk: string }> = []
    return Effect.gen(function* () {
      const writer = yield* SessionWriter
      const store = yield* SessionStore
      const grown: TextPart = { ...(text("ses_a", "msg_2", "prt_t", "hello") as TextPart) }
      const events = yield* announced(
        11,
        Effect.gen(function* () {
          yield* writer.createSession(session("ses_a", 1))
          yield* writer.updateSession(session("ses_a", 2, { title: "renamed" }))
          yield* writer.putMessage(user("ses_a", "msg_1"))
          yield* writer.putMessage(assistant("ses_a", "msg_2", "msg_1"))
          yield* writer.putPart(text("ses_a", "msg_1", "prt_u", "read the notes"))
          yield* writer.putPart({ ...grown, text: "hel" })
          yield* writer.delta(grown, "lo")
          yield* writer.removePart("ses_a", "msg_1", "prt_u")
          yield* writer.removeMessage("ses_a", "msg_1")
          yield* writer.flush
          yield* writer.createSession(session("ses_child", 3, { parentID: "ses_a" }), { callID: "call_task" })
          yield* writer.deleteSession("ses_a")
        })
      )
      assert.deepStrictEqual(
        events.map((event) => event.type),
        [
          "session.created",
          "session.updated",
          "message.updated",
          "message.updated",
          "part.updated",
          "part.updated",
          "part.delta",
          "part.removed",
          "message.removed",
          "session.created",
          "session.deleted"
        ]
      )
      // Each event as it went out: the store already held what it tells.
      assert.deepStrictEqual(
        seen.map((entry) => `${entry.type}: ${entry.store}`),
        events.map((event) => `${event.type}: stored`)
      )
      const [created, updated] = events
      assert.deepStrictEqual(created, { type: "session.created", session: session("ses_a", 1) })
      assert.deepStrictEqual(updated, { type: "session.updated", session: session("ses_a", 2, { title: "renamed" }) })
      assert.deepStrictEqual(events[6], {
        type: "part.delta",
        sessionID: "ses_a",
        messageID: "msg_2",
        partID: "prt_t",
        field: "text",
        delta: "lo"
      })
      assert.deepStrictEqual(events[9], {
        type: "session.created",
        session: session("ses_child", 3, { parentID: "ses_a" }),
        callID: "call_task"
      })
      assert.deepStrictEqual(events[10], { type: "session.deleted", sessionID: "ses_a" })
      // Deleting a session takes its child sessions with it.
      assert.deepStrictEqual(yield* store.listSessions(), [])
    }).pipe(Effect.provide(writerOn(freshFile(), seen)))
  })

  it.effect("a tool part announces part.updated, then tool.<status> with the state it stored", () => {
    const seen: Array<{ readonly type: string; readonly store: string; readonly disk: string }> = []
    return Effect.gen(function* () {
      const writer = yield* SessionWriter
      yield* writer.createSession(session("ses_a", 1))
      yield* writer.putMessage(assistant("ses_a", "msg_2", "msg_1"))
      const input = { filePath: "notes.txt" }
      const states: ReadonlyArray<ToolState> = [
        { status: "pending", input, raw: JSON.stringify(input) },
        { status: "running", input, time: { start: 10 } },
        { status: "completed", input, output: "hi", title: "notes.txt", metadata: {}, time: { start: 10, end: 12 } },
        { status: "error", input, error: "aborted", time: { start: 10, end: 12 } }
      ]
      const events = yield* announced(
        8,
        Effect.forEach(states, (state, index) => writer.putPart(tool(`prt_${index}`, state)), { discard: true })
      )
      assert.deepStrictEqual(
        events.map((event) => event.type),
        [
          "part.updated",
          "tool.pending",
          "part.updated",
          "tool.running",
          "part.updated",
          "tool.completed",
          "part.updated",
          "tool.error"
        ]
      )
      const completed = events[5]
      assert.deepStrictEqual(completed, {
        type: "tool.completed",
        sessionID: "ses_a",
        messageID: "msg_2",
        partID: "prt_2",
        callID: "call_prt_2",
        tool: "read",
        state: states[2] as ToolState
      })
      assert.deepStrictEqual(
        seen.slice(-8).map((entry) => entry.store),
        Array.from({ length: 8 }, () => "stored")
      )
    }).pipe(Effect.provide(writerOn(freshFile(), seen)))
  })

  it.effect("toolEvent: false announces the part only (a pruned output, a call settled after a crash)", () =>
    Effect.gen(function* () {
      const writer = yield* SessionWriter
      yield* writer.createSession(session("ses_a", 1))
      yield* writer.putMessage(assistant("ses_a", "msg_2", "msg_1"))
      const pruned = tool("prt_p", {
        status: "completed",
        input: {},
        output: "long",
        title: "t",
        metadata: {},
        time: { start: 1, end: 2, compacted: 3 }
      })
      const events = yield* announced(
        2,
        Effect.gen(function* () {
          yield* writer.putPart(pruned, { toolEvent: false })
          // A text part after it: had a tool event gone out, it would be the second event instead of this one.
          yield* writer.putPart(text("ses_a", "msg_2", "prt_z", "after"))
        })
      )
      assert.deepStrictEqual(
        events.map((event) => (event.type === "part.updated" ? `${event.type} ${event.part.id}` : event.type)),
        ["part.updated prt_p", "part.updated prt_z"]
      )
    }).pipe(Effect.provide(writerOn(freshFile(), [])))
  )

  it.effect("a durable part is in the database file before anyone hears of it", () => {
    const seen: Array<{ readonly type: string; readonly store: string; readonly disk: string }> = []
    return Effect.gen(function* () {
      const writer = yield* SessionWriter
      yield* writer.createSession(session("ses_a", 1))
      yield* writer.putMessage(assistant("ses_a", "msg_2", "msg_1"))
      const done: Part = tool("prt_w", {
        status: "completed",
        input: { filePath: "a.txt" },
        output: "wrote a.txt",
        title: "a.txt",
        metadata: {},
        time: { start: 1, end: 2 }
      })
      yield* writer.putPart(done, { durable: true })
      assert.deepStrictEqual(
        seen.filter((entry) => entry.type === "part.updated"),
        [{ type: "part.updated", store: "stored", disk: "on disk" }]
      )
    }).pipe(Effect.provide(writerOn(freshFile(), seen)))
  })

  it.effect("an empty delta stores the part (a reasoning signature) and announces nothing", () =>
    Effect.gen(function* () {
      const writer = yield* SessionWriter
      const store = yield* SessionStore
      yield* writer.createSession(session("ses_a", 1))
      yield* writer.putMessage(assistant("ses_a", "msg_2", "msg_1"))
      const signed: ReasoningPart = {
        id: "prt_r",
        sessionID: "ses_a",
        messageID: "msg_2",
        type: "reasoning",
        text: "",
        time: { start: 1 },
        metadata: { google: { thoughtSignature: "sig" } }
      }
      const events = yield* announced(
        1,
        Effect.gen(function* () {
          yield* writer.delta(signed, "")
          // A marker: had the empty delta announced anything, it would be the first event instead of this one.
          yield* writer.putPart(text("ses_a", "msg_2", "prt_z", "after"))
        })
      )
      assert.deepStrictEqual(
        events.map((event) => (event.type === "part.updated" ? `${event.type} ${event.part.id}` : event.type)),
        ["part.updated prt_z"]
      )
      assert.deepStrictEqual((yield* store.getMessage("ses_a", "msg_2")).parts[0], signed)
    }).pipe(Effect.provide(writerOn(freshFile(), [])))
  )
})
