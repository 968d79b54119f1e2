/**
 * Lathe's own Chat Completions client (`chatCompletionsModel`, what every OpenAI-compatible server goes through so
 * that `@lathe/core` needs no SDK package) against the AI SDK's OpenAI-compatible provider it replaces, both on the
 * same servers on 127.0.0.1: for a conversation with every kind of part (system text, a user's text and image, an
 * assistant's reasoning, text and a signed tool call, a tool result, a denied call), the request bodies are the same;
 * for each stream dialect the servers speak (OpenAI's, Mistral's thinking parts, Groq's `reasoning`, DeepSeek's,
 * OpenRouter's comments), and for an error inside the stream, the stream parts are the same.
 */

import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { createOpenAICompatible } from "@ai-sdk/openai-compatible"
import type { LanguageModelV4, LanguageModelV4CallOptions, LanguageModelV4StreamPart } from "@ai-sdk/provider"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { chatCompletionsModel } from "../src/provider/chat-completions.js"
import type { ProviderSettings } from "../src/provider/descriptor.js"
import { type ScriptedServer, startScriptedServer } from "../src/testing/scripted-server.js"
import { type ChatDialect, startChatWire } from "../src/testing/wire-chat.js"

const settingsOf = (baseURL: string): ProviderSettings => ({
  id: "work-gateway",
  apiKey: "sk-gw-test",
  baseURL,
  headers: { "x-team": "lathe" },
  options: {},
  env: {},
  fetch: globalThis.fetch
})

/** The AI SDK's OpenAI-compatible model, set up as Lathe set it up before it had its own client. */
const sdkModel = (settings: ProviderSettings, modelID: string): LanguageModelV4 =>
  createOpenAICompatible({
    fetch: settings.fetch,
    ...(settings.apiKey ? { apiKey: settings.apiKey } : {}),
    baseURL: settings.baseURL ?? "",
    headers: { ...settings.headers },
    name: settings.id,
    includeUsage: true
  })(modelID)

const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3])

const call = (): LanguageModelV4CallOptions => ({
  prompt: [
    { role: "system", content: "You are Lathe." },
    { role: "user", content: [{ type: "text", text: "read a.txt" }] },
    {
      role: "assistant",
      content: [
        { type: "reasoning", text: "Read it first." },
        { type: "text", text: "Reading." },
        {
          type: "tool-call",
          toolCallId: "call_1",
          toolName: "read",
          input: { path: "a.txt" },
          providerOptions: { "work-gateway": { thoughtSignature: "sig==" } }
        },
        { type: "tool-call", toolCallId: "call_2", toolName: "bash", input: { command: "rm -rf /" } }
      ]
    },
    {
      role: "tool",
      content: [
        { type: "tool-result", toolCallId: "call_1", toolName: "read", output: { type: "text", value: "hello" } },
        {
          type: "tool-result",
          toolCallId: "call_2",
          toolName: "bash",
          output: { type: "execution-denied", reason: "not allowed" }
        }
      ]
    },
    {
      role: "user",
      content: [
        { type: "text", text: "and this picture?" },
        { type: "file", mediaType: "image/png", data: { type: "data", data: PNG } }
      ]
    }
  ],
  tools: [
    {
      type: "function",
      name: "read",
      description: "Read a file",
      inputSchema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] }
    }
  ],
  toolChoice: { type: "auto" },
  maxOutputTokens: 2000,
  temperature: 0.2,
  providerOptions: { openaiCompatible: { reasoningEffort: "high" }, "work-gateway": { top_k: 20 } },
  headers: { "x-step": "1" }
})

/** Every part of one streamed step of `model`. */
const partsOf = async (model: LanguageModelV4, options: LanguageModelV4CallOptions) => {
  const { stream } = await model.doStream(options)
  const parts: Array<LanguageModelV4StreamPart> = []
  const reader = stream.getReader()
  for (let next = await reader.read(); !next.done; next = await reader.read()) parts.push(next.value)
  return parts
}

/**
 * Parts comparable across clients: errors by their message; without what differs by request (the response id and
 * time the server numbers per request) or by design (the SDK's warning that a hyphenated provider options key is
 * deprecated: Lathe's own client reads the provider's id as it is).
 */
const comparable = (parts: ReadonlyArray<LanguageModelV4StreamPart>) =>
  parts.map((part) => {
    const plain = JSON.parse(
      JSON.stringify(part, (_key, value: unknown) => (value instanceof Error ? { error: value.message } : value))
    ) as Record<string, unknown>
    if (part.type === "stream-start")
      return { ...plain, warnings: part.warnings.filter((warning) => warning.type !== "deprecated") }
    if (part.type === "response-metadata") return { ...plain, id: "<id>", timestamp: "<time>" }
    return plain
  })

describe("Lathe's Chat Completions client and the AI SDK's OpenAI-compatible provider", () => {
  let servers: Array<ScriptedServer> = []
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.close()))
  })

  it("send the same request body and headers for every kind of part", async () => {
    const server = await startChatWire("openai", [{ text: "ok" }])
    servers.push(server)
    await partsOf(chatCompletionsModel(settingsOf(server.url), "coder"), call())
    await partsOf(sdkModel(settingsOf(server.url), "coder"), call())
    const [ours, theirs] = server.requests
    assert.strictEqual(ours?.path, "/v1/chat/completions")
    assert.strictEqual(ours?.path, theirs?.path)
    assert.deepStrictEqual(ours?.body, theirs?.body)
    for (const header of ["authorization", "x-team", "x-step", "content-type"])
      assert.strictEqual(ours?.headers[header], theirs?.headers[header], header)
  })

  it("read a body that comes in pieces: events, lines and characters cut between reads", async () => {
    // One reply as a server writes it: CRLF and LF line ends, a comment, an event of two data lines, text with
    // characters of two to four bytes, a tool call in three chunks, usage, then [DONE].
    const events = [
      ": keep-alive\r\n\r\n",
      `data: ${JSON.stringify({ id: "c1", model: "coder", created: 1, choices: [{ index: 0, delta: { role: "assistant", content: "Déjà vu 🙂, " } }] })}\r\n\r\n`,
      `data: ${JSON.stringify({ id: "c1", choices: [{ index: 0, delta: { content: "naïve → ok" } }] })}\n\n`,
      `data: ${JSON.stringify({ id: "c1", choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "read", arguments: "" } }] } }] })}\n\n`,
      `data: ${JSON.stringify({ id: "c1", choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '{"path":' } }] } }] })}\n\n`,
      `data: ${JSON.stringify({ id: "c1", choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '"é.txt"}' } }] } }] })}\n\n`,
      `data: ${JSON.stringify({ id: "c1", choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }] })}\n\n`,
      `data: ${JSON.stringify({ id: "c1", choices: [], usage: { prompt_tokens: 9, completion_tokens: 4 } })}\n\n`,
      "data: [DONE]\n\n"
    ]
    const bytes = Buffer.from(events.join(""))
    let piece = 0
    const server = createServer((request, response) => {
      request.resume()
      request.on("end", async () => {
        response.writeHead(200, { "content-type": "text/event-stream" })
        response.socket?.setNoDelay(true)
        if (piece === 0) response.end(bytes)
        else {
          // Pieces of 1 to 3 bytes, each its own write after a turn of the event loop.
          for (let at = 0; at < bytes.length; ) {
            const size = 1 + (at % 3)
            response.write(bytes.subarray(at, at + size))
            at += size
            await new Promise((resolve) => setTimeout(resolve, 0))
          }
          response.end()
        }
        piece++
      })
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`
    try {
      const whole = await partsOf(chatCompletionsModel(settingsOf(url), "coder"), call())
      const cut = await partsOf(chatCompletionsModel(settingsOf(url), "coder"), call())
      assert.deepStrictEqual(comparable(cut), comparable(whole))
      const text = whole.flatMap((part) => (part.type === "text-delta" ? [part.delta] : [])).join("")
      assert.strictEqual(text, "Déjà vu 🙂, naïve → ok")
      const toolCall = whole.find((part) => part.type === "tool-call")
      assert.deepStrictEqual(toolCall && { name: toolCall.toolName, input: toolCall.input }, {
        name: "read",
        input: '{"path":"é.txt"}'
      })
      assert.deepStrictEqual(
        whole.map((part) => part.type),
        [
          "stream-start",
          "response-metadata",
          "text-start",
          "text-delta",
          "text-delta",
          "tool-input-start",
          "tool-input-delta",
          "tool-input-delta",
          "text-end",
          "tool-input-end",
          "tool-call",
          "finish"
        ]
      )
    } finally {
      await new Promise((resolve) => server.close(resolve))
    }
  })

  const dialects: ReadonlyArray<ChatDialect> = ["openai", "groq", "deepseek", "mistral", "openrouter"]
  beforeAll(() => {
    servers = []
  })
  for (const dialect of dialects)
    it(`stream the same parts: ${dialect} (reasoning, text, a tool call, usage)`, async () => {
      const replies = [
        {
          reasoning: "Think.",
          tool: { name: "read", input: { path: "a.txt" }, id: "call_abc123xy", signature: "sig==" },
          usage: { prompt: 100, completion: 20, cached: 40, reasoning: 5 }
        },
        { text: "Done reading.", usage: { prompt: 120, completion: 6 } }
      ]
      // Each reply twice: once for each client.
      const server = await startChatWire(dialect, (_request, index) => replies[Math.floor(index / 2)] ?? {})
      servers.push(server)
      for (const script of [0, 1]) {
        const ours = await partsOf(chatCompletionsModel(settingsOf(server.url), "coder"), call())
        const theirs = await partsOf(sdkModel(settingsOf(server.url), "coder"), call())
        assert.deepStrictEqual(comparable(ours), comparable(theirs), `${dialect}, reply ${script + 1}`)
      }
    })

  it("report an error inside the stream the same way, and an HTTP error with its status and body", async () => {
    const server = await startScriptedServer([
      { type: "in-band-error", steps: [{ text: "Partly" }], error: { message: "Too many requests", type: "rate" } },
      { type: "in-band-error", steps: [{ text: "Partly" }], error: { message: "Too many requests", type: "rate" } },
      { type: "error", status: 429, headers: { "retry-after": "2" } },
      { type: "error", status: 429, headers: { "retry-after": "2" } }
    ])
    servers.push(server)
    const ours = await partsOf(chatCompletionsModel(settingsOf(server.url), "coder"), call())
    const theirs = await partsOf(sdkModel(settingsOf(server.url), "coder"), call())
    assert.deepStrictEqual(comparable(ours), comparable(theirs))
    const failure = async (model: LanguageModelV4) =>
      model.doStream(call()).then(
        () => assert.fail("a 429 should throw"),
        (error: unknown) => error as { statusCode: number; responseBody: string; message: string; url: string }
      )
    const [a, b] = [
      await failure(chatCompletionsModel(settingsOf(server.url), "coder")),
      await failure(sdkModel(settingsOf(server.url), "coder"))
    ]
    for (const key of ["statusCode", "responseBody", "message", "url"] as const)
      assert.deepStrictEqual(a[key], b[key], key)
  })
})
