import { catalogReady } from "@lathe/core"
import type { LatheEvent, Session } from "@lathe/plugin/schema"
import type { BackendFactory } from "../backend.js"
import { type ProviderSetup, userConfigFile, writeProviderSetup } from "../connect-config.js"
import type { Attachment } from "../file-attachments.js"
import type { CliIO } from "../io.js"
import { askServer, type ConnectFlow } from "./connect.js"
import { ControllerParts } from "./controller-parts.js"
import { PromptHistory } from "./history.js"
import { LocalBackend } from "./local-backend.js"
import { type ControllerOptions, SessionView, unavailable } from "./session-view.js"

export type { ControllerOptions } from "./session-view.js"

/**
 * The interactive session, without any UI; the agent itself is behind a `Backend` (in this process, or a server the
 * UI is attached to). The Ink app (and the plain line mode) render `transcript` and call these methods; `subscribe`
 * tells them when to draw. The work is done by its parts (`ControllerParts`, one concern each); this class starts
 * them, routes what is typed, and runs what needs several of them (`/connect`).
 */
export class Controller extends ControllerParts {
  /**
   * Connects to the agent (by default in this process), loads history and the session to resume. Never throws for
   * bad config: says so instead.
   */
  static async start(
    io: CliIO,
    options: ControllerOptions = {},
    connect: BackendFactory = LocalBackend.factory(io)
  ): Promise<Controller> {
    const view = new SessionView(io.env)
    // /models and /connect list the model catalogue's models: load it now, alongside the backend (even with no model
    // set up, when no model resolution would load it).
    void catalogReady().catch(() => undefined)
    // Events may come while the backend is being built; they are applied once it is there.
    const early: Array<LatheEvent> = []
    let ready = false
    const backend = await connect({
      onEvent: (event) => (ready ? view.apply(event) : early.push(event)),
      onWarning: (title, text) => view.note("warn", title, [text])
    })
    const self = new Controller({ io, options, backend, view, project: { root: "", dataDir: undefined } })
    ready = true
    for (const event of early) view.apply(event)
    await self.init()
    return self
  }

  private async init(): Promise<void> {
    const { backend, options, project } = this.base
    const setup = await backend.setup()
    if (!setup.ok) return void this.view.note("error", "Lathe could not start", setup.message.split("\n"))
    const { root, trustPrompt, history, configDir } = setup.value
    project.root = root
    project.dataDir = history?.dataDir
    this.choice.takeAgents(setup.value)
    this.view.sayNotices(setup.value.notices)
    this.asks.trustPrompt = trustPrompt
    this.turns.history = history ? await PromptHistory.load(history.dataDir, history.projectID) : undefined
    await this.listings.start(configDir, setup.value.trusted === true)
    if (options.session || options.continue) await this.slash.resume(options.session)
    await this.choice.resolve()
    this.view.changed()
  }

  // ── what the person does ───────────────────────────────────────────────────────────────────────────────────────

  /** Handles what the person typed: a slash command, a `!shell` command, or a prompt (queued while busy). */
  async submit(raw: string): Promise<void> {
    const text = raw.trim()
    if (!text) return
    this.view.trace(`submit ${JSON.stringify(text.slice(0, 80))} (busy: ${this.turns.busy})`)
    // Not awaited: what the person typed next must not overtake this line while it is being written to disk.
    void this.turns.history?.add(raw.trimEnd()).catch(() => undefined)
    if (text.startsWith("/") && !text.startsWith("//")) return this.slash.run(text)
    if (text.startsWith("!")) return this.turns.shell(text.slice(1).trim())
    await this.turns.send(raw)
  }

  /** Attaches files (`lathe -f`) to the next prompt, which checks them first (see `Turns.attach`). */
  attachFiles(files: ReadonlyArray<Attachment>): void {
    this.turns.attach(files)
  }

  /** Keeps a prompt typed while no model works, until `/connect` (or `/models`) sets one up. */
  holdPrompt(raw: string): void {
    this.turns.hold(raw)
  }

  /** Esc: interrupts the running turn. Returns whether there was one. */
  interrupt(): boolean {
    return this.turns.interrupt()
  }

  /** Resolves when no turn runs and nothing is queued. */
  idle(): Promise<void> {
    return this.turns.idle()
  }

  /** Answers the permission ask `id`. */
  replyPermission(id: string, reply: "once" | "always" | "reject", message?: string): Promise<void> {
    return this.asks.replyPermission(id, reply, message)
  }

  /** Answers the question `id` (one list of answers per question), or dismisses it. */
  replyQuestion(id: string, answers: ReadonlyArray<ReadonlyArray<string>> | undefined): Promise<void> {
    return this.asks.replyQuestion(id, answers)
  }

  /** Answers the trust prompt (see `Asks.answerTrust`). */
  answerTrust(trust: boolean): Promise<void> {
    return this.asks.answerTrust(trust)
  }

  /** The project's sessions, newest first (the `/sessions` picker). */
  sessions(): Promise<ReadonlyArray<Session>> {
    return this.slash.sessions()
  }

  /** Resumes a session by id: loads its history and its subagents' sessions. */
  switchSession(id: string): Promise<void> {
    return this.slash.switchSession(id)
  }

  /** Switches the primary agent. */
  setAgent(name: string): void {
    this.choice.setAgent(name)
  }

  /** Tab: the next primary agent. */
  cycleAgent(): void {
    this.choice.cycleAgent()
  }

  /** Models to pick from (none when attached: the server's API does not list them). */
  models(): Promise<ReadonlyArray<string>> {
    return this.choice.models()
  }

  /** Switches the model (checked against the configured providers first, when the agent runs here). */
  setModel(model: string): Promise<void> {
    return this.slash.setModel(model)
  }

  /** The models the server `/connect` was given lists (see `askServer`), asked with this session's environment. */
  serverModels(pending: NonNullable<ConnectFlow["pending"]>): ReturnType<typeof askServer> {
    return askServer(pending, this.base.io.env)
  }

  /**
   * `/connect`'s answers: writes the provider and model to the person's own config file (never the project's),
   * rebuilds the agent's services so they apply, and sends the prompts that waited for a model.
   */
  async connect(setup: ProviderSetup): Promise<void> {
    const { backend, io, view } = this.base
    if (unavailable(this.base, "connect", "/connect", "/connect")) return
    if (this.turns.busy) view.note("info", "/connect", ["Connecting once the running turn ends."])
    // Not `idle()`: the prompts waiting for a model stay queued until the model works.
    await this.turns.notBusy()
    const file = userConfigFile(io.env)
    const written = writeProviderSetup(file, setup, io.env)
    if (typeof written === "string") return void view.note("error", "/connect", [written])
    const reloaded = await backend.reload()
    if (!reloaded.ok) return void view.note("error", "/connect", reloaded.message.split("\n"))
    void this.listings.reload()
    const ref = `${setup.id}/${setup.model}`
    const mode = written.literalKey
      ? " (it holds the key, so only you may read it: mode 0600)"
      : written.storedIn
        ? `; the key is stored in ${written.storedIn} (mode 0600), as lathe auth login does`
        : ""
    if (await this.choice.connected(ref, `Wrote provider "${setup.id}" and model ${ref} to ${file}${mode}.`))
      this.turns.sendWaiting()
  }

  /** Stops the services. */
  async dispose(): Promise<void> {
    this.listings.stop()
    await this.turns.dispose()
    await this.base.backend.dispose()
  }
}
