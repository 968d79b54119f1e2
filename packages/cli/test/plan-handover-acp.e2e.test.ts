import * as acp from "@agentclientprotocol/sdk"
import { type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { afterEach, assert, describe, it } from "vitest"
import { type AcpProcess, startAcpProcess } from "./acp-process.js"
import { sandbox } from "./helpers.js"

// plan_exit in an editor (`lathe acp`): the editor's person approves, the editor is told the mode is build now, and
// its next prompt runs with build (the editor sends no mode of its own with a prompt; Lathe's session carries it).
let server: ScriptedServer | undefined
let lathe: AcpProcess | undefined
afterEach(async () => {
  await lathe?.close()
  await server?.close()
  lathe = undefined
  server = undefined
})

describe("plan_exit over ACP", { timeout: 60_000 }, () => {
  it("approved: a current_mode_update to build, and the next prompt is build's", async () => {
    server = await startScriptedServer([
      { steps: [{ tool: "plan_exit", input: { plan: "1. add a retry loop" } }] },
      { steps: [{ text: "on it" }] },
      { steps: [{ text: "done" }] }
    ])
    const box = sandbox()
    lathe = startAcpProcess(box.project, { ...box.env, LATHE_BASE_URL: server.url, LATHE_MODEL: "m" })
    const updates: Array<acp.SessionUpdate> = []
    const asks: Array<string> = []
    const { agent } = acp
      .client({ name: "test-editor" })
      .onNotification(acp.methods.client.session.update, ({ params }) => {
        updates.push(params.update)
      })
      .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
        asks.push(params.toolCall.title ?? "")
        return { outcome: { outcome: "selected", optionId: "once" } }
      })
      .connect(lathe.stream)
    await agent.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false }
    })
    const session = await agent.request(acp.methods.agent.session.new, { cwd: box.project, mcpServers: [] })
    await agent.request(acp.methods.agent.session.setMode, { sessionId: session.sessionId, modeId: "plan" })
    const prompt = (text: string) =>
      agent.request(acp.methods.agent.session.prompt, {
        sessionId: session.sessionId,
        prompt: [{ type: "text", text }]
      })
    await prompt("plan a retry")
    assert.strictEqual(asks.length, 1)
    const modes = updates.flatMap((u) => (u.sessionUpdate === "current_mode_update" ? [u.currentModeId] : []))
    assert.deepStrictEqual(modes, ["build"])
    assert.include(JSON.stringify(server.requests[1]?.body), "You are the build agent")
    await prompt("go on")
    assert.include(JSON.stringify(server.requests[2]?.body), "You are the build agent")
  })
})
