import { existsSync } from "node:fs"
import { join } from "node:path"
import { type ScriptedServer, startScriptedServer } from "@lathe/core/testing"
import type { Session } from "@lathe/plugin/schema"
import { afterEach, assert, describe, it } from "vitest"
import type { Backend, BackendFactory, BackendPrompt } from "../src/backend.js"
import type { CliIO } from "../src/io.js"
import { Controller } from "../src/tui/controller.js"
import type { PromptHistory } from "../src/tui/history.js"
import { sandbox } from "./helpers.js"

let server: ScriptedServer | undefined
const controllers: Array<Controller> = []
afterEach(async () => {
  for (const controller of controllers.splice(0)) await controller.dispose()
  await server?.close()
  server = undefined
})

const ioFor = (cwd: string, env: Record<string, string>): CliIO => ({
  stdout: () => undefined,
  stderr: () => undefined,
  env,
  cwd,
  isTTY: false
})

const start = async (io: CliIO, connect?: BackendFactory) => {
  const controller = await Controller.start(io, {}, connect)
  controllers.push(controller)
  return controller
}

const localNotes = (controller: Controller) =>
  controller.transcript.timeline.flatMap((item) =>
    item.kind === "local" ? [`${item.title}: ${item.lines.join(" ")}`] : []
  )

const session: Session = {
  id: "ses_1",
  projectID: "p",
  directory: "/tmp",
  title: "t",
  time: { created: 0, updated: 0 }
}

/**
 * A backend as a server gives it: no local features, prompts go straight through. It records what the controller
 * asked, so the controller's side of the split is checked without a server (the attach e2e test covers the rest).
 */
const recordingBackend = (root: string) => {
  const prompts: Array<BackendPrompt> = []
  let release: () => void = () => undefined
  const backend: Backend = {
    attached: "127.0.0.1:9",
    queuesPrompts: true,
    supports: () => false,
    setup: async () => ({
      ok: true,
      value: {
        root,
        agents: [{ name: "build", mode: "primary", hidden: false }],
        defaultAgent: undefined,
        notices: [],
        trustPrompt: undefined,
        history: undefined,
        configDir: undefined
      }
    }),
    createSession: async () => ({ ok: true, value: session }),
    discardIfEmpty: async () => false,
    prompt: async (input) => {
      prompts.push(input)
      // The first prompt's turn runs until the test releases it; later ones return at once (queued on the server).
      if (prompts.length === 1) await new Promise<void>((resolve) => (release = resolve))
      return { ok: true, value: undefined }
    },
    replyPermission: async () => ({ ok: true, value: undefined }),
    replyQuestion: async () => ({ ok: true, value: undefined }),
    revert: async () => ({ ok: true, value: { files: ["a.txt"], overwritten: [] } }),
    turns: async () => ({ ok: true, value: [] }),
    sessions: async () => [session],
    load: async () => ({ ok: true, value: undefined }),
    models: async () => ["x/y"],
    resolveModel: async (model) => ({ ok: true, value: { label: model ?? "server's model", contextLimit: 0 } }),
    compact: async () => ({ ok: false, message: "must not be called" }),
    trust: async () => ({ ok: false, message: "must not be called" }),
    decline: async () => ({ ok: false, message: "must not be called" }),
    reload: async () => ({ ok: false, message: "must not be called" }),
    dispose: async () => undefined
  }
  return { backend, prompts, release: () => release() }
}

describe("the controller over a Backend", () => {
  it("the local backend runs a turn in this process and the transcript shows the streamed answer", {
    timeout: 30_000
  }, async () => {
    server = await startScriptedServer(() => ({ steps: [{ text: "Hello from the local backend." }] }))
    const box = sandbox()
    const controller = await start(
      ioFor(box.project, { ...box.env, LATHE_BASE_URL: server.url, LATHE_MODEL: "test-model" })
    )
    assert.strictEqual(controller.attached, undefined)
    assert.strictEqual(controller.modelLabel.endsWith("test-model"), true, controller.modelLabel)
    await controller.submit("say hello")
    await controller.idle()
    const texts = controller.transcript
      .messages()
      .flatMap((m) => m.parts.flatMap((p) => (p.type === "text" ? [p.text] : [])))
    assert.include(texts, "Hello from the local backend.")
    assert.include(texts, "say hello")
  })

  it("a prompt that fails before it is stored (no model) leaves no empty session; the next one starts anew", {
    timeout: 30_000
  }, async () => {
    const box = sandbox()
    const controller = await start(ioFor(box.project, box.env))
    assert.strictEqual(controller.modelLabel, "no model")
    for (const text of ["first try", "second try"]) {
      await controller.submit(text)
      await controller.idle()
      assert.strictEqual(controller.session, undefined, text)
      assert.deepStrictEqual(await controller.sessions(), [], text)
    }
    assert.lengthOf(
      localNotes(controller).filter((n) => n.startsWith("error: No model provider is configured")),
      2,
      localNotes(controller).join("\n")
    )
  })

  it("attached: features without a route say so in one line and never reach the backend", async () => {
    const box = sandbox()
    const { backend } = recordingBackend(box.project)
    const controller = await start(ioFor(box.project, box.env), () => backend)
    assert.strictEqual(controller.attached, "127.0.0.1:9")
    assert.strictEqual(controller.modelLabel, "server's model")
    await controller.submit("!touch ran.txt")
    await controller.submit("/compact")
    await controller.submit("/docs:intro")
    assert.deepStrictEqual(await controller.models(), [])
    const notes = localNotes(controller)
    assert.lengthOf(
      notes.filter((n) => n.includes("not available when attached")),
      4,
      notes.join("\n")
    )
    assert.isFalse(notes.some((n) => n.includes("must not be called")))
    assert.isFalse(existsSync(join(box.project, "ran.txt")), "the shell command did not run")
  })

  it("lines sent one after another run in that order, however long the history takes to write them", async () => {
    const box = sandbox()
    const recording = recordingBackend(box.project)
    const controller = await start(ioFor(box.project, box.env), () => recording.backend)
    // The first line's history write is slow, the second's fast: before, "first" then ran before /new (which it
    // then refused as busy), as a CI run of the TUI end-to-end test once showed with /new and /init.
    let writes = 0
    controller.history = {
      add: () => new Promise<void>((resolve) => setTimeout(resolve, writes++ === 0 ? 100 : 0)),
      written: async () => undefined
    } as unknown as PromptHistory
    const newSession = controller.submit("/new")
    const first = controller.submit("first")
    await newSession // done while "first"'s turn is still held by the backend
    assert.notInclude(localNotes(controller).join("\n"), "Wait for the turn to end")
    while (recording.prompts.length === 0) await new Promise((resolve) => setTimeout(resolve, 5))
    recording.release()
    await first
    assert.deepStrictEqual(
      recording.prompts.map((p) => p.text),
      ["first"]
    )
  })

  it("attached: a prompt sent while a turn runs goes to the server at once instead of the local queue", async () => {
    const box = sandbox()
    const recording = recordingBackend(box.project)
    const controller = await start(ioFor(box.project, box.env), () => recording.backend)
    const first = controller.submit("first")
    while (recording.prompts.length === 0) await new Promise((resolve) => setTimeout(resolve, 5))
    assert.isTrue(controller.busy)
    await controller.submit("second")
    assert.deepStrictEqual(controller.queue, [])
    assert.deepStrictEqual(
      recording.prompts.map((p) => p.text),
      ["first", "second"]
    )
    recording.release()
    await first
    assert.isFalse(controller.busy)
    await controller.submit("/undo")
    assert.include(localNotes(controller).join("\n"), "Restored 1 file")
  })
})
