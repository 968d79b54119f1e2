import { type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { afterEach, assert, describe, it } from "vitest"
import { Controller } from "../src/tui/controller.js"
import { sandbox } from "./helpers.js"

// The interactive session (its controller, the agent in this process): the person approves plan_exit, and the
// footer's agent, which the next prompt goes to, follows the session to build.
let server: ScriptedServer | undefined
let controller: Controller | undefined
afterEach(async () => {
  await controller?.dispose()
  await server?.close()
  controller = undefined
  server = undefined
})

describe("plan_exit in the interactive session", () => {
  it("approved: the session and the next prompt go to build", { timeout: 30_000 }, async () => {
    server = await startScriptedServer((request) => {
      const body = request.body as { tools?: ReadonlyArray<{ function: { name: string } }> }
      const tools = (body.tools ?? []).map((t) => t.function.name)
      // The title request has no tools; plan proposes; build answers.
      if (tools.length === 0) return { steps: [{ text: "Retry plan" }] }
      if (tools.includes("plan_exit")) return { steps: [{ tool: "plan_exit", input: { plan: "1. add a retry loop" } }] }
      return { steps: [{ text: "on it" }] }
    })
    const box = sandbox()
    const env = { ...box.env, LATHE_BASE_URL: server.url, LATHE_MODEL: "m" }
    const c = await Controller.start(
      { stdout: () => undefined, stderr: () => undefined, env, cwd: box.project, isTTY: false },
      {}
    )
    controller = c
    c.setAgent("plan")
    c.onEvents((event) => {
      if (event.type === "permission.asked" && event.permission === "plan_exit")
        void c.replyPermission(event.id, "once")
    })
    await c.submit("plan a retry")
    await c.idle()
    assert.strictEqual(c.session?.agent, "build")
    assert.strictEqual(c.agent, "build")
  })
})
