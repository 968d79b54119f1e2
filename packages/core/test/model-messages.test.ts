import { assert, describe, it } from "@effect/vitest"
import type { MessageWithParts } from "../src/message.js"
import { liftToolImages, toModelMessages } from "../src/model-messages.js"

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
