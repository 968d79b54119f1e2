#!/usr/bin/env node
// The floor `bench/guard.ts` measures Lathe against: the least an agent loop can do for the guard's session, in plain
// Node with no Lathe code. It streams an OpenAI-compatible chat model (`LATHE_BASE_URL`, `LATHE_MODEL`), runs each
// `read` call the model makes on the file named, relative to the working directory, sends the results back, and
// prints the model's final text. `node floor-agent.mjs --version` prints a version and exits (the guard's start-up
// line compares `lathe --version` with `node -e 0`, not with this). Usage: node floor-agent.mjs "<prompt>"
import { readFileSync } from "node:fs"

if (process.argv[2] === "--version") {
  console.log("floor 0")
  process.exit(0)
}
const url = `${process.env.LATHE_BASE_URL}/chat/completions`
const tools = [
  {
    type: "function",
    function: { name: "read", parameters: { type: "object", properties: { filePath: { type: "string" } } } }
  }
]
const messages = [{ role: "user", content: process.argv.slice(2).join(" ") }]

for (;;) {
  const body = JSON.stringify({ model: process.env.LATHE_MODEL, stream: true, messages, tools })
  const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body })
  if (!response.ok) throw new Error(`model answered ${response.status}: ${await response.text()}`)
  let text = ""
  let buffer = ""
  const calls = []
  for await (const chunk of response.body.pipeThrough(new TextDecoderStream())) {
    buffer += chunk
    const events = buffer.split("\n\n")
    buffer = events.pop() ?? ""
    for (const event of events) {
      const data = event.replace(/^data: /, "")
      if (data === "[DONE]" || data === "") continue
      const delta = JSON.parse(data).choices?.[0]?.delta ?? {}
      text += delta.content ?? ""
      for (const call of delta.tool_calls ?? []) {
        calls[call.index] ??= { id: call.id, type: "function", function: { name: call.function.name, arguments: "" } }
        calls[call.index].function.arguments += call.function.arguments ?? ""
      }
    }
  }
  if (calls.length === 0) {
    console.log(text)
    break
  }
  messages.push({ role: "assistant", content: text || null, tool_calls: calls })
  for (const call of calls) {
    const { filePath } = JSON.parse(call.function.arguments)
    messages.push({ role: "tool", tool_call_id: call.id, content: readFileSync(filePath, "utf8") })
  }
}
