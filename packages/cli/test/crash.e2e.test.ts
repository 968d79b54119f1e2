/**
 * Crash-safe history, end to end: a real `lathe run` is SIGKILLed while its bash call sleeps, then
 * `lathe run --continue` carries on. The provider must receive a well-formed history: the killed call with a
 * result saying it was interrupted.
 */
import type { ChildProcess } from "node:child_process"
import { existsSync, mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { type RecordedRequest, type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import { afterEach, assert, describe, it } from "vitest"
import { runLathe, sandbox } from "./helpers.js"

let server: ScriptedServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

const INTERRUPTED = "interrupted: the process stopped before the tool finished"

/** The chat messages of an OpenAI-style request. */
interface ChatMessage {
  readonly role: string
  readonly content?: unknown
  readonly tool_calls?: ReadonlyArray<{ readonly id: string; readonly function: { readonly name: string } }>
  readonly tool_call_id?: string
}
const messagesOf = (request: RecordedRequest | undefined): ReadonlyArray<ChatMessage> =>
  (request?.body as { messages?: ReadonlyArray<ChatMessage> } | undefined)?.messages ?? []

describe("crash-safe history (end to end)", () => {
  it("a run killed mid-tool is continued with the call closed as interrupted, and finishes", async () => {
    // First request: a bash call that marks its start and sleeps; after the crash: a plain answer.
    // Keyed on the person's messages: tool descriptions in the body may say "go on" too.
    server = await startScriptedServer((request) =>
      messagesOf(request).some((m) => m.role === "user" && JSON.stringify(m.content).includes("go on"))
        ? { steps: [{ text: "Carrying on." }] }
        : {
            steps: [
              { text: "Running the slow step." },
              { tool: "bash", input: { command: "touch started && sleep 8", description: "slow step" } }
            ]
          }
    )
    const box = sandbox()
    mkdirSync(join(box.dir, "config", "lathe"), { recursive: true })
    writeFileSync(join(box.dir, "config", "lathe", "lathe.json"), JSON.stringify({ permission: { bash: "allow" } }))
    const env = { ...box.env, LATHE_BASE_URL: server.url, LATHE_MODEL: "m" }

    let child: ChildProcess | undefined
    const first = runLathe(["run", "--format", "json", "do the slow thing"], {
      cwd: box.project,
      env,
      onSpawn: (spawned) => {
        child = spawned
      }
    })
    const deadline = Date.now() + 20_000
    while (!existsSync(join(box.project, "started"))) {
      if (Date.now() > deadline) {
        child?.kill("SIGKILL")
        const run = await first
        throw new Error(`the bash call never started\nstdout:\n${run.stdout}\nstderr:\n${run.stderr}`)
      }
      await sleep(50)
    }
    await sleep(400) // the store writes its batch 50 ms after a change; leave it time to land
    child?.kill("SIGKILL")
    const killed = await first
    assert.strictEqual(killed.code, null, killed.stderr)
    assert.isTrue(killed.events.some((e) => e.type === "tool.running"))
    assert.isFalse(killed.events.some((e) => e.type === "tool.completed" || e.type === "tool.error"))

    const resumed = await runLathe(["run", "--continue", "--format", "json", "go on"], { cwd: box.project, env })
    assert.strictEqual(resumed.code, 0, resumed.stderr)
    assert.strictEqual(server.requests.length, 2)
    const history = messagesOf(server.requests[1])
    const call = history.flatMap((m) => m.tool_calls ?? []).find((c) => c.function.name === "bash")
    assert.isDefined(call, JSON.stringify(history))
    const result = history.find((m) => m.role === "tool" && m.tool_call_id === call?.id)
    assert.include(String(result?.content), INTERRUPTED)
    // What was streamed before the crash is kept, and the new prompt comes after the closed call.
    const assistant = history.find((m) => m.tool_calls !== undefined)
    assert.include(JSON.stringify(assistant?.content), "Running the slow step.")
    assert.isAbove(
      history.findIndex((m) => m.role === "user" && JSON.stringify(m.content).includes("go on")),
      history.indexOf(result as ChatMessage)
    )
    assert.include(resumed.stdout, "Carrying on.")
  }, 60_000)
})
