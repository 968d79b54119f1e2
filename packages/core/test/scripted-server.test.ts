import { afterAll, assert, describe, it } from "vitest"
import { type ScriptedServer, startScriptedServer } from "../src/testing/scripted-server.js"

const servers: Array<ScriptedServer> = []
afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()))
})

const ask = async (url: string) => {
  const sent = performance.now()
  const response = await fetch(`${url}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }], stream: true })
  })
  const firstByte = performance.now() - sent
  return { firstByte, text: await response.text() }
}

describe("the scripted server's firstByteMs", () => {
  it("answers only after the wait, with the whole scripted stream", async () => {
    const server = await startScriptedServer([
      { steps: [{ text: "hello" }], firstByteMs: 150 },
      { steps: [{ text: "now" }] }
    ])
    servers.push(server)
    const slow = await ask(server.url)
    assert.isAtLeast(slow.firstByte, 150)
    assert.include(slow.text, '"content":"hello"')
    assert.include(slow.text, "data: [DONE]")
    const fast = await ask(server.url)
    assert.include(fast.text, '"content":"now"')
    assert.isAtLeast(server.requests[0]?.answeredAt ?? 0, (server.requests[0]?.receivedAt ?? 0) + 150)
  })
})
