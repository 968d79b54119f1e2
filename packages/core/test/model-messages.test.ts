import { assert, describe, it } from "@effect/vitest"
import { assistant, session, text, user } from "@lathe/core/testing/store-contract"
import type { AssistantMessage, MessageWithParts, Part } from "@lathe/plugin/schema"
import { Effect, type Layer } from "effect"
import { liftToolImages, PRUNED_OUTPUT, toModelMessages } from "../src/llm/model-messages.js"
import { SessionStore, type StoreError } from "../src/store/session-store.js"
import { SqliteSessionStore } from "../src/store/session-store-sqlite.js"

// A history with one image attached by the person and one returned by a tool.
const tokens = { input: 0, output: 0, reasoning: 0, cache: { read: 0, write: 0 } }
const model = { providerID: "p", modelID: "m" }
const DATA = "iVBORw0KGgo="
const history: ReadonlyArray<MessageWithParts> = [
  {
    info: { id: "msg_1", sessionID: "s", role: "user", time: { created: 1 }, agent: "build", model },
    parts: [
      { id: "prt_1", sessionID: "s", messageID: "msg_1", type: "text", text: "look" },
      {
        id: "prt_2",
        sessionID: "s",
        messageID: "msg_1",
        type: "file",
        mime: "image/png",
        filename: "shot.png",
        url: `data:image/png;base64,${DATA}`
      }
    ]
  },
  {
    info: {
      id: "msg_2",
      sessionID: "s",
      role: "assistant",
      parentID: "msg_1",
      agent: "build",
      model,
      path: { cwd: "/", root: "/" },
      time: { created: 2, completed: 3 },
      tokens,
      cost: 0
    },
    parts: [
      {
        id: "prt_3",
        sessionID: "s",
        messageID: "msg_2",
        type: "tool",
        callID: "c1",
        tool: "screenshot",
        state: {
          status: "completed",
          input: {},
          output: "[image image/png, 8 bytes, attached]",
          title: "screenshot",
          metadata: {},
          attachments: [{ mime: "image/png", url: `data:image/png;base64,${DATA}` }],
          time: { start: 2, end: 3 }
        }
      }
    ]
  }
]

describe("images in the model's history", () => {
  it("a tool's image is image content of its result for a model that takes images", () => {
    const messages = toModelMessages(history)
    const tool = messages.find((m) => m.role === "tool")
    assert.deepStrictEqual(tool?.content[0]?.type === "tool-result" ? tool.content[0].output : undefined, {
      type: "content",
      value: [
        { type: "text", text: "[image image/png, 8 bytes, attached]" },
        { type: "file", mediaType: "image/png", data: { type: "data", data: DATA } }
      ]
    })
  })

  it("a text-only model gets the tool's text and a note for the person's image, never image data", () => {
    const messages = toModelMessages(history, { images: false })
    const text = JSON.stringify(messages)
    assert.notInclude(text, DATA)
    assert.include(text, "[image shot.png: not shown, this model does not take images]")
    const tool = messages.find((m) => m.role === "tool")
    assert.deepStrictEqual(tool?.content[0]?.type === "tool-result" ? tool.content[0].output : undefined, {
      type: "text",
      value: "[image image/png, 8 bytes, attached]\n[1 image not shown: this model does not take images]"
    })
  })

  it("liftToolImages moves a result's images to a user message right after the results", () => {
    const lifted = liftToolImages(toModelMessages(history))
    assert.deepStrictEqual(
      lifted.map((m) => m.role),
      ["user", "assistant", "tool", "user"]
    )
    const tool = lifted[2]
    assert.deepStrictEqual(
      tool?.role === "tool" && tool.content[0]?.type === "tool-result" ? tool.content[0].output : 0,
      {
        type: "text",
        value: "[image image/png, 8 bytes, attached]"
      }
    )
    assert.deepStrictEqual(lifted[3], {
      role: "user",
      content: [
        { type: "text", text: "Images returned by screenshot:" },
        { type: "file", mediaType: "image/png", data: { type: "data", data: DATA } }
      ]
    })
  })
})

/** A completed `read` call of `file`, in message `messageID`. */
const readCall = (messageID: string, id: string, file: string, compacted?: number): Part => ({
  id,
  sessionID: "ses_h",
  messageID,
  type: "tool",
  callID: `call_${id}`,
  tool: "read",
  state: {
    status: "completed",
    input: { filePath: file },
    output: `contents of ${file}`,
    title: file,
    metadata: {},
    time: { start: 1, end: 2, ...(compacted !== undefined ? { compacted } : {}) }
  }
})

/** Writes a step: an assistant message answering `msg_0` with one `read` call. */
const step = (store: SessionStore["Service"], n: number) =>
  Effect.gen(function* () {
    yield* store.putMessage(assistant("ses_h", `msg_${n}`, "msg_0"))
    yield* store.putPart(readCall(`msg_${n}`, `prt_${n}`, `f${n}.txt`))
  })

/** The converted history as it is stored now, as the loop builds it at each step. */
const converted = (store: SessionStore["Service"], images = true) =>
  store.messages("ses_h").pipe(Effect.map((messages) => toModelMessages(messages, { images })))

const cacheSuite = (name: string, layer: () => Layer.Layer<SessionStore, StoreError>) =>
  describe(`converted history reused across steps (${name} store)`, () => {
    const setup = Effect.gen(function* () {
      const store = yield* SessionStore
      yield* store.putSession(session("ses_h", 1))
      yield* store.putMessage(user("ses_h", "msg_0"))
      yield* store.putPart(text("ses_h", "msg_0", "prt_0", "read the files"))
      for (let n = 1; n <= 3; n++) yield* step(store, n)
      return store
    })

    it.effect("a step converts only what changed: earlier messages are the same objects", () =>
      Effect.gen(function* () {
        const store = yield* setup
        const first = yield* converted(store)
        const again = yield* converted(store)
        assert.notStrictEqual(again, first, "a new array each call")
        assert.strictEqual(again.length, first.length)
        for (const [i, message] of first.entries()) assert.strictEqual(again[i], message)
        yield* step(store, 4)
        const next = yield* converted(store)
        assert.strictEqual(next.length, first.length + 2)
        for (const [i, message] of first.entries()) assert.strictEqual(next[i], message)
        assert.deepStrictEqual(next, toModelMessages(structuredClone(yield* store.messages("ses_h"))))
      }).pipe(Effect.provide(layer()))
    )

    it.effect("an edited part, a pruned output and a finished message are converted again", () =>
      Effect.gen(function* () {
        const store = yield* setup
        const before = yield* converted(store)
        yield* store.putPart(text("ses_h", "msg_0", "prt_0", "read the files again"))
        yield* store.putPart(readCall("msg_2", "prt_2", "f2.txt", 5))
        const done: AssistantMessage = { ...assistant("ses_h", "msg_3", "msg_0"), finish: "tool-calls" }
        yield* store.putMessage(done)
        const after = yield* converted(store)
        assert.deepStrictEqual(after, toModelMessages(structuredClone(yield* store.messages("ses_h"))))
        assert.deepStrictEqual(after[0], { role: "user", content: [{ type: "text", text: "read the files again" }] })
        const pruned = after[4]
        assert.deepStrictEqual(
          pruned?.role === "tool" && pruned.content[0]?.type === "tool-result" ? pruned.content[0].output : undefined,
          { type: "text", value: PRUNED_OUTPUT }
        )
        // msg_1 did not change: its messages are still the ones converted before.
        assert.strictEqual(after[1], before[1])
        assert.strictEqual(after[2], before[2])
      }).pipe(Effect.provide(layer()))
    )

    it.effect("a reverted message leaves the history; a compaction shows only its summary and what follows", () =>
      Effect.gen(function* () {
        const store = yield* setup
        yield* converted(store)
        yield* store.removeMessage("ses_h", "msg_3")
        const reverted = yield* converted(store)
        assert.strictEqual(reverted.length, 5)
        assert.notInclude(JSON.stringify(reverted), "f3.txt")
        yield* store.putMessage({ ...user("ses_h", "msg_5"), agent: "compaction" })
        yield* store.putPart({ id: "prt_5", sessionID: "ses_h", messageID: "msg_5", type: "compaction", auto: true })
        yield* store.putMessage({
          ...assistant("ses_h", "msg_6", "msg_5"),
          agent: "compaction",
          summary: true,
          finish: "stop"
        })
        yield* store.putPart(text("ses_h", "msg_6", "prt_6", "the summary"))
        const compacted = yield* converted(store)
        assert.deepStrictEqual(
          compacted.map((m) => m.role),
          ["user", "assistant"]
        )
        assert.deepStrictEqual(compacted[1], { role: "assistant", content: [{ type: "text", text: "the summary" }] })
      }).pipe(Effect.provide(layer()))
    )

    it.effect("a model without images gets its own conversion, not one made for a model with images", () =>
      Effect.gen(function* () {
        const store = yield* setup
        yield* store.putPart({
          id: "prt_7",
          sessionID: "ses_h",
          messageID: "msg_0",
          type: "file",
          mime: "image/png",
          filename: "shot.png",
          url: `data:image/png;base64,${DATA}`
        })
        const withImages = yield* converted(store, true)
        const without = yield* converted(store, false)
        assert.include(JSON.stringify(withImages), DATA)
        assert.notInclude(JSON.stringify(without), DATA)
        assert.include(JSON.stringify(yield* converted(store, true)), DATA)
      }).pipe(Effect.provide(layer()))
    )
  })

cacheSuite("memory", () => SessionStore.memory)
cacheSuite("SQLite", () => SqliteSessionStore.layerTemp())

describe("liftToolImages without images", () => {
  it("keeps every message as it is", () => {
    const messages = toModelMessages(history.slice(1), { images: false })
    const lifted = liftToolImages(messages)
    assert.strictEqual(lifted.length, messages.length)
    for (const [i, message] of messages.entries()) assert.strictEqual(lifted[i], message)
  })
})
