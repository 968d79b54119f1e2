// The interactive controller's parts on their own: the session in view, the choice of agent and model, what /undo
// says, and the UI's popup and bottom panels, each from what it reads (no backend run, no terminal).
import type { LatheEvent, Session } from "@lathe/plugin/schema"
import { assert, describe, it } from "vitest"
import type { Backend, BackendAgent } from "../src/backend.js"
import { createStyle, stripAnsi } from "../src/style.js"
import { bottomLines } from "../src/tui/app-bottom.js"
import { initialUi, offered, type PopupCache } from "../src/tui/app-state.js"
import { editorFrom } from "../src/tui/editor.js"
import { ModelChoice } from "../src/tui/model-choice.js"
import { type ControllerBase, type ControllerOptions, SessionView } from "../src/tui/session-view.js"
import { BUILTIN_COMMANDS } from "../src/tui/slash-commands.js"
import { revertLines } from "../src/tui/slash-runner.js"
import { Transcript } from "../src/tui/transcript.js"

const session: Session = {
  id: "ses_1",
  projectID: "p",
  directory: "/tmp",
  title: "t",
  time: { created: 0, updated: 0 }
}
const asked: LatheEvent = {
  type: "permission.asked",
  id: "per_1",
  sessionID: "ses_1",
  permission: "bash",
  patterns: ["touch made"],
  always: ["touch *"],
  metadata: {}
}
const notes = (view: SessionView) =>
  view.transcript.timeline.flatMap((item) => (item.kind === "local" ? [`${item.title}: ${item.lines.join(" ")}`] : []))

/** A controller's shared part over `backend` (only what the part under test calls of it). */
const baseWith = (backend: Partial<Backend>, options: ControllerOptions = {}): ControllerBase => ({
  io: { stdout: () => undefined, stderr: () => undefined, env: {}, cwd: "/tmp", isTTY: false },
  options,
  backend: backend as Backend,
  view: new SessionView({}),
  project: { root: "/tmp", dataDir: undefined }
})

const agents: ReadonlyArray<BackendAgent> = [
  { name: "build", mode: "primary", hidden: false },
  { name: "plan", mode: "primary", hidden: false, model: "x/planner" },
  { name: "explore", mode: "subagent", hidden: false },
  { name: "title", mode: "primary", hidden: true }
]
const setupOf = (defaultAgent?: string) => ({
  root: "/tmp",
  agents,
  defaultAgent,
  notices: [],
  trustPrompt: undefined,
  history: undefined,
  configDir: undefined
})

describe("SessionView", () => {
  it("takes a session's events only once there is one; notices always; every event goes to the listeners", () => {
    const view = new SessionView({})
    const heard: Array<string> = []
    view.onEvents((event) => heard.push(event.type))
    view.apply(asked)
    assert.lengthOf(view.transcript.permissions, 0)
    view.apply({ type: "notice", level: "warn", message: "narrowed" })
    assert.lengthOf(view.transcript.timeline, 1)
    view.adopt(session)
    view.apply(asked)
    assert.strictEqual(view.transcript.permissions[0]?.id, "per_1")
    assert.deepStrictEqual(heard, ["permission.asked", "notice", "permission.asked"])
  })

  it("a session made for the first prompt keeps the notes said before it; clear starts over", () => {
    const view = new SessionView({})
    let draws = 0
    view.subscribe(() => draws++)
    const told: Array<string> = []
    view.onNotes((note) => told.push(note.title))
    view.note("error", "no model", ["Set one up."])
    view.adopt(session)
    assert.strictEqual(view.sessionID, "ses_1")
    assert.strictEqual(view.session?.id, "ses_1")
    assert.deepStrictEqual(notes(view), ["no model: Set one up."])
    assert.deepStrictEqual(told, ["no model"])
    assert.strictEqual(draws, 1)
    view.forget()
    assert.strictEqual(view.sessionID, undefined)
    assert.strictEqual(view.session, undefined)
    view.clear()
    assert.deepStrictEqual(notes(view), [])
  })

  it("says each config notice once, however often the setup is read again", () => {
    const view = new SessionView({})
    view.sayNotices(["ignored provider"])
    view.sayNotices(["ignored provider", "ignored mcp"])
    assert.deepStrictEqual(notes(view), ["config: ignored provider", "config: ignored mcp"])
  })
})

describe("ModelChoice", () => {
  it("lists the visible primary agents, takes the default agent, and keeps the agent on a reload that has it", () => {
    const choice = new ModelChoice(baseWith({}))
    choice.takeAgents(setupOf("plan"))
    assert.deepStrictEqual(choice.primaryAgents, ["build", "plan"])
    assert.strictEqual(choice.agent, "plan")
    choice.agent = "build"
    choice.takeAgents(setupOf("plan"), true)
    assert.strictEqual(choice.agent, "build")
    const chosen = new ModelChoice(baseWith({}, { agent: "build" }))
    chosen.takeAgents(setupOf("plan"))
    chosen.takeSessionAgent("plan")
    assert.strictEqual(chosen.agent, "build", "--agent wins over the default and the resumed session's")
  })

  it("`@<subagent> text` names a subagent; a primary or unknown name is a plain prompt", () => {
    const choice = new ModelChoice(baseWith({}))
    choice.takeAgents(setupOf())
    assert.strictEqual(choice.subagentFor("@explore find the tests")?.name, "explore")
    assert.isUndefined(choice.subagentFor("@plan do it"))
    assert.isUndefined(choice.subagentFor("@nobody hi"))
    assert.isUndefined(choice.subagentFor("explore this"))
  })

  it("with no model a prompt waits for /connect (said once), and an agent's own model applies when chosen", async () => {
    const asked: Array<string | undefined> = []
    const base = baseWith({
      supports: () => true,
      resolveModel: async (model) => {
        asked.push(model)
        return model ? { ok: true, value: { label: model, contextLimit: 8 } } : { ok: false, message: "No model." }
      }
    })
    const choice = new ModelChoice(base)
    choice.takeAgents(setupOf())
    await choice.resolve()
    await choice.resolve()
    assert.isTrue(choice.waitsForModel)
    assert.deepStrictEqual(notes(base.view), [
      "no model: No model. Or type /connect to set up a provider here (a prompt you type meanwhile waits for it)."
    ])
    choice.setAgent("plan")
    await new Promise((resolve) => setTimeout(resolve, 0))
    assert.strictEqual(choice.modelLabel, "x/planner")
    assert.strictEqual(choice.contextLimit, 8)
    assert.isFalse(choice.waitsForModel)
    assert.deepStrictEqual(asked, [undefined, undefined, "x/planner"])
  })
})

describe("what /undo and /redo say", () => {
  it("names the files put back and what it overwrote, or that none changed", () => {
    assert.deepStrictEqual(revertLines("undo", { files: ["a.ts", "b.ts"], overwritten: ["b.ts"] }), [
      "Restored 2 files:",
      "  a.ts",
      "  b.ts",
      "Overwrote changes made since to b.ts."
    ])
    assert.deepStrictEqual(revertLines("redo", { files: ["a.ts"], overwritten: [] }), ["Re-applied 1 file:", "  a.ts"])
    assert.deepStrictEqual(revertLines("redo", { files: [], overwritten: [] }), ["No files to bring back."])
  })
})

describe("the UI's popup and bottom panels", () => {
  const source = (transcript = new Transcript("ses_1")) => ({
    transcript,
    listedRevision: 0,
    commands: () => BUILTIN_COMMANDS,
    mentionTargets: ["src/app.ts", "docs/readme.md"]
  })
  const cache = (): PopupCache => ({ key: "", items: [] })

  it("offers commands after / and files after @, none once dismissed or while an ask is open", () => {
    const ui = initialUi()
    ui.editor = editorFrom("/hel")
    assert.deepStrictEqual(
      offered(ui, source(), cache()).popupItems.map((item) => item.label),
      ["/help"]
    )
    ui.editor = editorFrom("look at @app")
    assert.include(
      offered(ui, source(), cache()).popupItems.map((item) => item.label),
      "@src/app.ts"
    )
    ui.popup = { index: 0, dismissed: "look at @app" }
    assert.lengthOf(offered(ui, source(), cache()).popupItems, 0)
    const asking = new Transcript("ses_1")
    asking.apply(asked)
    ui.editor = editorFrom("/hel")
    assert.lengthOf(offered(ui, source(asking), cache()).popupItems, 0)
  })

  it("the trust prompt takes the bottom before the editor; the queue, the armed key's hint and the footer show", () => {
    const style = createStyle(false)
    const screen = { width: 80, rows: 24, style }
    const controller = {
      transcript: new Transcript("ses_1"),
      trustPrompt: undefined as ReadonlyArray<string> | undefined,
      queue: ["one", "two", "three", "four", "five"],
      agent: "build",
      modelLabel: "x/y",
      contextLimit: 0,
      attached: undefined,
      busy: false,
      budget: undefined
    }
    const ui = { ...initialUi(), armed: { kind: "ctrl-c" as const, at: 0 } }
    const editing = bottomLines(controller, ui, offered(ui, source(), cache()), false, screen).map(stripAnsi)
    assert.include(editing, "queued: one")
    assert.include(editing, "… and 2 more queued")
    assert.include(editing, "Press Ctrl+C again to quit")
    assert.match(editing.at(-1) ?? "", /build/)
    controller.trustPrompt = ["It would load the plugin ./p.js"]
    const trusting = bottomLines(controller, ui, offered(ui, source(), cache()), false, screen).map(stripAnsi)
    assert.match(trusting[0] ?? "", /Trust this folder\?/)
    assert.notInclude(trusting, "queued: one")
  })
})
