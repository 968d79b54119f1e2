/**
 * The Chat Completions request body written from kept pieces (`bodyBytes`: each prompt message's and each tool's JSON
 * kept for its object) is byte for byte `JSON.stringify` of the body, step after step as a history grows, when a kept
 * object comes back and when what it says changes.
 */
import type { LanguageModelV4CallOptions, LanguageModelV4FunctionTool, LanguageModelV4Message } from "@ai-sdk/provider"
import { assert, describe, it } from "vitest"
import { bodyBytes, bodyOf, type ChatSettings } from "../src/provider/chat-completions-request.js"

const settings: ChatSettings = {
  id: "work-gateway",
  url: "http://127.0.0.1:1/v1/chat/completions",
  headers: {},
  fetch: globalThis.fetch,
  structuredOutputs: false
}

/** The bytes the client sends for `options`, and the bytes of `JSON.stringify` of the same body. */
const both = (options: LanguageModelV4CallOptions) => {
  const { body, arrays } = bodyOf(settings, "coder", options)
  const sent = { ...body, stream: true, stream_options: { include_usage: true } }
  return { ours: bodyBytes(sent, arrays).toString("utf8"), plain: JSON.stringify(sent) }
}

const readSchema = { type: "object", properties: { path: { type: "string" } }, required: ["path"] }
const read: LanguageModelV4FunctionTool = {
  type: "function",
  name: "read",
  description: "Read a file — whole, or from a line",
  inputSchema: readSchema
}

const step = (n: number): Array<LanguageModelV4Message> => [
  {
    role: "assistant",
    content: [
      { type: "reasoning", text: `step ${n}: read it` },
      { type: "text", text: n % 2 === 0 ? "" : `Reading f${n} \u{1F642}` },
      { type: "tool-call", toolCallId: `call_${n}`, toolName: "read", input: { path: `f${n}.txt` } }
    ]
  },
  {
    role: "tool",
    content: [
      {
        type: "tool-result",
        toolCallId: `call_${n}`,
        toolName: "read",
        output:
          n % 3 === 0
            ? { type: "json", value: { lines: [`\u2028line ${n}`, "\ud800 lone", '"quoted"\n\ttab'] } }
            : { type: "text", value: `     1\tline of f${n} "é" \\ \u0000` }
      }
    ]
  }
]

describe("the Chat Completions body from kept pieces", () => {
  it("is JSON.stringify of the body, byte for byte, step after step and when what is kept changes", () => {
    const history: Array<LanguageModelV4Message> = [
      { role: "system", content: "You are Lathe." },
      { role: "user", content: [{ type: "text", text: "read the files" }] }
    ]
    const base: Omit<LanguageModelV4CallOptions, "prompt"> = {
      tools: [read],
      toolChoice: { type: "auto" },
      temperature: 0.2,
      providerOptions: { "work-gateway": { top_k: 20, ["__proto__"]: { polluted: true } } }
    }
    for (let n = 0; n < 12; n++) {
      const { ours, plain } = both({ ...base, prompt: history })
      assert.strictEqual(ours, plain, `step ${n}`)
      // The same objects again (a retry) send the same bytes.
      assert.strictEqual(both({ ...base, prompt: history }).ours, plain, `step ${n} again`)
      history.push(...step(n))
    }
    assert.include(both({ ...base, prompt: history }).ours, '"__proto__":{"polluted":true}')

    // The same schema object under another description, or another name: the body says what the tool says now.
    const renamed = { ...read, description: "Reads one file" }
    assert.strictEqual(
      both({ ...base, tools: [renamed], prompt: history }).ours,
      both({ ...base, tools: [renamed], prompt: history }).plain
    )
    assert.include(both({ ...base, tools: [renamed], prompt: history }).ours, '"description":"Reads one file"')
    const strict = { ...read, name: "open", strict: true }
    assert.include(
      both({ ...base, tools: [strict], prompt: history }).ours,
      '"name":"open","description":"Read a file — whole, or from a line","parameters":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]},"strict":true'
    )

    // No tools, no messages but the system prompt, and no options.
    for (const options of [
      { prompt: history },
      { prompt: history.slice(0, 1) },
      { prompt: [], tools: [] },
      { prompt: history, tools: [read, { ...read, name: "list", inputSchema: { type: "object" } }] }
    ]) {
      const { ours, plain } = both(options)
      assert.strictEqual(ours, plain)
    }
  })

  it("writes each message under the provider it is sent to", () => {
    const call: LanguageModelV4Message = {
      role: "assistant",
      content: [
        {
          type: "tool-call",
          toolCallId: "call_1",
          toolName: "read",
          input: "{}",
          providerOptions: { "work-gateway": { thoughtSignature: "sig-a" }, other: { thoughtSignature: "sig-b" } }
        }
      ]
    }
    const prompt: Array<LanguageModelV4Message> = [call]
    const ours = (id: string) => {
      const { body, arrays } = bodyOf({ ...settings, id }, "coder", { prompt })
      return bodyBytes(body, arrays).toString("utf8")
    }
    assert.include(ours("work-gateway"), '"thought_signature":"sig-a"')
    assert.include(ours("other"), '"thought_signature":"sig-b"')
    assert.include(ours("work-gateway"), '"thought_signature":"sig-a"')
  })
})
