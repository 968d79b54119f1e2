import { type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { createLatheClient } from "@lathe/sdk"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { sandbox } from "./helpers.js"
import { type ServeProcess, startServe } from "./serve-helpers.js"

// plan_exit through `lathe serve` and the SDK: the ask arrives on the event stream as one only a person may answer,
// a client answers it, and the stream shows the switch (the session's agent, then the next message's).
const TOKEN = "plan-s3cret"
let scripted: ScriptedServer
let server: ServeProcess

beforeAll(async () => {
  scripted = await startScriptedServer([
    { steps: [{ tool: "plan_exit", input: { plan: "1. add a retry loop" } }] },
    { steps: [{ text: "on it" }] }
  ])
  const box = sandbox()
  server = await startServe(["--port", "0", "--token", TOKEN], {
    cwd: box.project,
    env: { ...box.env, LATHE_BASE_URL: scripted.url, LATHE_MODEL: "m" }
  })
})

afterAll(async () => {
  server?.child.kill("SIGTERM")
  await server?.exited
  await scripted?.close()
})

describe("plan_exit over lathe serve", () => {
  it("the client approves the person-only ask; the stream shows the session and its next message on build", async () => {
    const lathe = createLatheClient({ baseUrl: server.url, token: TOKEN })
    const session = await lathe.sessions.create({ agent: "plan", title: "plan" })
    const events = lathe.events({ sessionID: session.id })
    await events.ready
    await lathe.sessions.prompt(session.id, "plan a retry")
    const agents: Array<string> = []
    let asked: { permission: string; requiresPerson: unknown } | undefined
    for await (const event of events) {
      if (event.type === "permission.asked") {
        asked = { permission: event.permission, requiresPerson: event.metadata.requiresPerson }
        await lathe.permissions.reply(event.id, { reply: "once" })
      }
      if (event.type === "session.updated" && event.session.agent) agents.push(`session:${event.session.agent}`)
      if (event.type === "message.updated" && event.message.role === "assistant")
        agents.push(`message:${event.message.agent}`)
      if (event.type === "session.idle") break
    }
    assert.deepStrictEqual(asked, { permission: "plan_exit", requiresPerson: true })
    const order = [...new Set(agents)]
    assert.deepStrictEqual(order.slice(order.indexOf("session:build")), ["session:build", "message:build"])
    assert.include(order, "message:plan")
    assert.strictEqual((await lathe.sessions.get(session.id)).agent, "build")
    const body = JSON.stringify(scripted.requests[1]?.body)
    assert.include(body, "You are the build agent")
    assert.include(body, "1. add a retry loop")
  }, 60_000)
})
