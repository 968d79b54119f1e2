import { appendFileSync } from "node:fs"
import { mkdir, writeFile } from "node:fs/promises"
import { dirname, join, resolve } from "node:path"
import {
  catalogReady,
  type LatheEvent,
  type ListedCommand,
  type ListedResource,
  type PromptPart,
  ReasoningLevel,
  type Session
} from "@lathe/core"
import { userConfigFile } from "../commands/mcp-config.js"
import { turnLines } from "../commands/undo.js"
import { type ProviderSetup, writeProviderSetup } from "../connect-config.js"
import { type Contributions, pluginContributions } from "../contributions.js"
import type { CliIO } from "../io.js"
import { renderMarkdown } from "../session-markdown.js"
import { suggest } from "../suggest.js"
import { attachFiles } from "./attachments.js"
import {
  type Backend,
  type BackendAgent,
  type BackendFactory,
  type BackendSetup,
  type LocalFeature,
  notAvailableWhenAttached
} from "./backend.js"
import { askServer, type ConnectFlow } from "./connect.js"
import { commandFileContributions } from "./custom-commands.js"
import { PromptHistory } from "./history.js"
import { LocalBackend } from "./local-backend.js"
import { listFiles } from "./mentions.js"
import { runPersonShell } from "./shell-command.js"
import {
  BUILTIN_COMMANDS,
  costLines,
  helpLines,
  INIT_PROMPT,
  type SlashCommand,
  transcriptDocument
} from "./slash-commands.js"
import { Transcript } from "./transcript.js"

/** How `lathe` (interactive) starts. */
export interface ControllerOptions {
  readonly agent?: string
  readonly model?: string
  /** Resume this session. */
  readonly session?: string
  /** Resume the project's most recent session. */
  readonly continue?: boolean
}

/**
 * The interactive session, without any UI: owns the transcript built from the backend's events, the prompt queue,
 * interrupts, permission and question replies, and every slash command; the agent itself is behind a `Backend` (in
 * this process, or a server the UI is attached to). The Ink app (and the plain line mode) render `transcript` and
 * call these methods; `subscribe` tells them when to draw.
 */
export class Controller {
  transcript: Transcript
  agent: string
  model: string | undefined
  /** `/variant`: how hard a reasoning model thinks for the rest of this run; unset: the agent's or the model's. */
  variant: ReasoningLevel | undefined
  /** The resolved model's context window, for the footer. */
  contextLimit = 0
  modelLabel = ""
  busy = false
  readonly queue: Array<string> = []
  history: PromptHistory | undefined
  files: ReadonlyArray<string> = []
  /** The plugins' commands (markdown command files, MCP servers' prompts), listed at start and when they change. */
  pluginCommands: ReadonlyArray<ListedCommand> = []
  /** The plugins' resources (`@<uri>`: MCP servers' among them), listed with the commands. */
  resources: ReadonlyArray<ListedResource> = []
  /** Increases whenever the files, commands or resources listed change (the UI's completion caches by it). */
  listedRevision = 0
  private contributions: Contributions | undefined
  private stopWatching: (() => void) | undefined
  private configDir: string | undefined
  /** Whether the custom commands read here (attached to a server) may choose their agent and model. */
  private commandsTrusted = false
  private mentionCache: { files: ReadonlyArray<string>; resources: ReadonlyArray<ListedResource> } | undefined
  private mentionList: ReadonlyArray<string> = []
  primaryAgents: ReadonlyArray<string> = []
  /** Set on start in an untrusted folder whose config was narrowed: what it would grant if trusted. */
  trustPrompt: ReadonlyArray<string> | undefined
  root = ""
  /** Lathe's data folder for this project (where `/export` writes); undefined when the backend has none here. */
  private dataDir: string | undefined
  private readonly shownNotices = new Set<string>()
  private sessionID: string | undefined
  private abort: AbortController | undefined
  private readonly listeners = new Set<() => void>()
  private readonly eventListeners = new Set<(event: LatheEvent) => void>()
  private readonly noteListeners = new Set<
    (note: { level: string; title: string; lines: ReadonlyArray<string> }) => void
  >()
  /** Increases on every change (React's useSyncExternalStore snapshot). */
  revision = 0
  /** Context for the next prompt that the person does not see as their message (shell output, /init's brief). */
  private pendingShell: Array<string> = []
  /** Parts a command added to the prompt it expanded to (synthetic text, files), sent with it. */
  private pendingParts: Array<PromptPart> = []
  private agentInfos: ReadonlyArray<BackendAgent> = []
  private backend!: Backend

  private constructor(
    private readonly io: CliIO,
    private readonly options: ControllerOptions
  ) {
    this.transcript = new Transcript("")
    this.agent = options.agent ?? "build"
    this.model = options.model
  }

  /**
   * Connects to the agent (by default in this process), loads history and the session to resume. Never throws for
   * bad config: says so instead.
   */
  static async start(
    io: CliIO,
    options: ControllerOptions = {},
    connect: BackendFactory = LocalBackend.factory(io)
  ): Promise<Controller> {
    const self = new Controller(io, options)
    // /models and /connect list the model catalogue's models: load it now, alongside the backend (even with no model
    // set up, when no model resolution would load it).
    void catalogReady().catch(() => undefined)
    // Events may come while the backend is being built; they are applied once it is there.
    const early: Array<LatheEvent> = []
    let ready = false
    self.backend = await connect({
      onEvent: (event) => (ready ? self.onEvent(event) : early.push(event)),
      onWarning: (title, text) => self.note("warn", title, [text])
    })
    ready = true
    for (const event of early) self.onEvent(event)
    await self.init()
    return self
  }

  /** `host:port` of the server the UI is attached to; undefined when the agent runs in this process. */
  get attached(): string | undefined {
    return this.backend.attached
  }

  /** Says (one line) that `feature` needs the agent in this process, when it does and the UI is attached. */
  private unavailable(feature: LocalFeature, title: string, what: string): boolean {
    if (this.backend.supports(feature)) return false
    this.note("warn", title, [notAvailableWhenAttached(what)])
    return true
  }

  private async init(): Promise<void> {
    const setup = await this.backend.setup()
    if (!setup.ok) {
      this.note("error", "Lathe could not start", setup.message.split("\n"))
      return
    }
    const { root, trustPrompt, history, configDir } = setup.value
    this.root = root
    this.dataDir = history?.dataDir
    this.applySetup(setup.value)
    this.trustPrompt = trustPrompt
    this.configDir = configDir
    this.commandsTrusted = setup.value.trusted === true
    this.history = history ? await PromptHistory.load(history.dataDir, history.projectID) : undefined
    await this.loadContributions()
    void listFiles(root).then((files) => {
      this.files = files
      this.listedRevision++
    })
    if (this.options.session || this.options.continue) await this.resume(this.options.session)
    await this.resolveModel()
    this.changed()
  }

  /** Takes the agents and the config's notices of the backend at start, or reloaded (`reload`: keeps the agent). */
  private applySetup({ agents, defaultAgent, notices }: BackendSetup, reload = false): void {
    this.agentInfos = agents
    this.primaryAgents = this.agentInfos.filter((a) => !a.hidden && a.mode !== "subagent").map((a) => a.name)
    if (!this.options.agent && !(reload && this.primaryAgents.includes(this.agent)))
      this.agent = defaultAgent ?? "build"
    // A reload (after trusting the folder) says only what is new.
    for (const notice of notices) if (!this.shownNotices.has(notice)) this.note("warn", "config", [notice])
    for (const notice of notices) this.shownNotices.add(notice)
  }

  /**
   * Takes the plugins' commands and resources for `/` and `@` completion from the backend's plugin host (again after
   * the host is rebuilt), and lists them again whenever a plugin's commands change (an MCP server connected: the UI
   * does not wait for them). Attached to a server, whose plugins run there, only the command files are read, here.
   */
  private async loadContributions(): Promise<void> {
    this.stopWatching?.()
    this.stopWatching = undefined
    const host = this.backend.plugins ? await this.backend.plugins() : undefined
    if (host && !host.ok) return void this.note("warn", "plugins", [host.message])
    this.contributions = host
      ? pluginContributions(host.value)
      : this.configDir !== undefined
        ? commandFileContributions(this.root, this.configDir, this.commandsTrusted, (problem) =>
            this.note("warn", "custom command", [problem])
          )
        : undefined
    const contributions = this.contributions
    if (!contributions) return
    this.stopWatching = contributions.watch(() => void this.listContributions(contributions))
    await this.listContributions(contributions)
  }

  /** Lists the commands and resources again (a listing that fails keeps what was listed before). */
  private async listContributions(contributions: Contributions): Promise<void> {
    const listed = await Promise.all([contributions.commands(), contributions.resources()]).catch(() => undefined)
    if (!listed) return
    const [commands, resources] = listed
    if (contributions !== this.contributions) return // the host was rebuilt meanwhile
    this.pluginCommands = commands
    this.resources = resources
    this.listedRevision++
    this.changed()
  }

  /** What `@` completion offers: the project's files, then the plugins' resources. */
  get mentionTargets(): ReadonlyArray<string> {
    const cache = this.mentionCache
    if (!cache || cache.files !== this.files || cache.resources !== this.resources) {
      this.mentionCache = { files: this.files, resources: this.resources }
      this.mentionList = [...this.files, ...this.resources.map((resource) => resource.uri)]
    }
    return this.mentionList
  }

  /** Calls `listener` after every change; returns the unsubscribe function. */
  subscribe(listener: () => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  /** Calls `listener` with every Bus event of the app (the plain line mode renders from these). */
  onEvents(listener: (event: LatheEvent) => void): () => void {
    this.eventListeners.add(listener)
    return () => this.eventListeners.delete(listener)
  }

  /** Calls `listener` with every note the controller adds (command answers, shell output, warnings). */
  onNotes(listener: (note: { level: string; title: string; lines: ReadonlyArray<string> }) => void): () => void {
    this.noteListeners.add(listener)
    return () => this.noteListeners.delete(listener)
  }

  private changed(): void {
    this.revision++
    for (const listener of this.listeners) listener()
  }

  /** Resolves when no turn runs and nothing is queued. */
  async idle(): Promise<void> {
    while (this.busy || this.queue.length > 0) await new Promise((resolve) => setTimeout(resolve, 20))
  }

  private onEvent(event: LatheEvent): void {
    for (const listener of this.eventListeners) listener(event)
    if (event.type === "notice" || event.type === "plugin.error" || this.transcript.rootID !== "") {
      if (this.transcript.apply(event)) this.changed()
    }
  }

  /** Adds a local note to the transcript. */
  note(level: "info" | "warn" | "error", title: string, lines: ReadonlyArray<string>): string {
    const id = this.transcript.addLocal({ level, title, lines })
    for (const listener of this.noteListeners) listener({ level, title, lines })
    this.changed()
    return id
  }

  /** The session in view (undefined until the first prompt of a new session). */
  get session(): Session | undefined {
    return this.transcript.session
  }

  // ── prompts ──────────────────────────────────────────────────────────────────────────────────────────────────

  /** Handles what the person typed: a slash command, a `!shell` command, or a prompt (queued while busy). */
  async submit(raw: string): Promise<void> {
    const text = raw.trim()
    if (!text) return
    this.trace(`submit ${JSON.stringify(text.slice(0, 80))} (busy: ${this.busy})`)
    // Not awaited: what the person typed next must not overtake this line while it is being written to disk.
    void this.history?.add(raw.trimEnd()).catch(() => undefined)
    if (text.startsWith("/") && !text.startsWith("//")) return this.command(text)
    if (text.startsWith("!")) return this.shell(text.slice(1).trim())
    if (this.busy) {
      // A server queues it itself (the running turn's model sees it from its next step); here it waits its turn.
      if (this.backend.queuesPrompts && this.sessionID) return this.sendWhileBusy(this.sessionID, raw)
      this.queue.push(raw)
      this.changed()
      return
    }
    await this.prompt(raw)
  }

  /** Whether a prompt typed now should wait for `/connect`: no model works, and `/connect` can set one up here. */
  get waitsForModel(): boolean {
    return this.modelLabel === "no model" && this.backend.supports("connect")
  }

  /**
   * Keeps a prompt typed while no model works: it waits in the queue until `/connect` (or `/models`) sets one up.
   * The full-screen UI calls this instead of `submit`; the plain line mode has no `/connect` and fails at once.
   */
  holdPrompt(raw: string): void {
    void this.history?.add(raw.trimEnd()).catch(() => undefined)
    this.queue.push(raw)
    this.changed()
    if (this.queue.length > 1) return
    this.note("warn", "no model", [
      "No model is set up yet, so this prompt waits (queued below). Type /connect to set up a provider here:",
      "the prompt is sent as soon as a model works."
    ])
  }

  /** Sends the prompts that waited for a model, once one works. */
  private sendWaiting(): void {
    const next = this.queue.shift()
    if (next !== undefined && !this.busy) void this.prompt(next)
    else if (next !== undefined) this.queue.unshift(next)
  }

  /** Sends a prompt to a server while a turn runs there; the turn already waited for covers it. */
  private async sendWhileBusy(sessionID: string, text: string): Promise<void> {
    const result = await this.backend.prompt({
      sessionID,
      text,
      parts: await this.promptParts(text),
      agent: this.agent,
      model: this.model,
      allowSubagents: false,
      signal: new AbortController().signal
    })
    if (!result.ok) this.note("error", "error", result.message.split("\n"))
  }

  /** Sends one prompt and runs the turn; afterwards, the next queued prompt. */
  async prompt(text: string, override: { readonly agent?: string; readonly model?: string } = {}): Promise<void> {
    this.trace(`busy: prompt ${JSON.stringify(text.slice(0, 80))}`)
    this.busy = true
    this.changed()
    try {
      const fresh = this.sessionID === undefined
      const sessionID = await this.ensureSession()
      if (!sessionID) return
      const parts = await this.promptParts(text)
      const abort = new AbortController()
      this.abort = abort
      const agent = override.agent ?? this.agent
      const model = override.model ?? this.model
      const direct = /^@([a-z][a-z0-9_-]*)\s+([\s\S]+)$/.exec(text.trim())
      const sub = direct
        ? this.agentInfos.find((a) => a.name === direct[1] && a.mode !== "primary" && !a.hidden)
        : undefined
      const result = await this.backend.prompt({
        sessionID,
        text,
        parts,
        agent: sub ? sub.name : agent,
        model,
        ...(this.variant ? { variant: this.variant } : {}),
        allowSubagents: sub !== undefined,
        signal: abort.signal
      })
      if (!result.ok && !abort.signal.aborted) {
        this.note("error", "error", result.message.split("\n"))
        // A session made for this prompt that failed before the prompt was stored goes again: no empty session is
        // left behind, and the next prompt starts a new one.
        if (fresh && (await this.backend.discardIfEmpty(sessionID))) {
          this.sessionID = undefined
          this.transcript.session = undefined
        }
      }
    } finally {
      this.abort = undefined
      this.busy = false
      this.trace("idle: prompt ended")
      this.changed()
    }
    const next = this.queue.shift()
    if (next !== undefined) await this.prompt(next)
  }

  private async ensureSession(): Promise<string | undefined> {
    if (this.sessionID) return this.sessionID
    const created = await this.backend.createSession(this.agent)
    if (!created.ok) {
      this.note("error", "could not create a session", [created.message])
      return undefined
    }
    this.sessionID = created.value.id
    const before = this.transcript
    this.transcript = new Transcript(created.value.id)
    this.transcript.session = created.value
    // What was said before the session existed (config notices, a missing model) stays on screen.
    for (const item of before.timeline) if (item.kind === "local") this.transcript.timeline.push(item)
    return created.value.id
  }

  /** The prompt's parts: its text, each @mentioned file (text inlined, images and PDFs attached), shell context. */
  private async promptParts(text: string): Promise<Array<PromptPart>> {
    const parts: Array<PromptPart> = [{ type: "text", text }]
    for (const context of this.pendingShell.splice(0)) parts.push({ type: "text", text: context, synthetic: true })
    parts.push(...this.pendingParts.splice(0))
    if (this.contributions) {
      const resources = await this.contributions.attach(text)
      parts.push(...resources.parts)
      for (const problem of resources.problems) this.note("warn", "resource not attached", [problem])
    }
    const files = await attachFiles(text, this.root)
    for (const part of files.parts) {
      // Images and PDFs travel as data URLs, which a server's prompt route does not take.
      if (part.type === "file" && part.mime !== "text/plain" && !this.backend.supports("binary-attachments")) {
        this.note("warn", `@${part.filename ?? "file"}`, [notAvailableWhenAttached("Attaching an image or PDF")])
        continue
      }
      parts.push(part)
    }
    for (const problem of files.problems) this.note("warn", problem.title, [problem.message])
    return parts
  }

  /** Esc: interrupts the running turn. Returns whether there was one. */
  interrupt(): boolean {
    if (!this.abort) return false
    this.abort.abort()
    // The transcript shows the interrupt itself (on the stopped tool, or the answer); this says only what else went.
    const dropped = this.queue.splice(0).length
    if (dropped > 0)
      this.note("warn", "interrupted", [`Dropped ${dropped} queued prompt${dropped === 1 ? "" : "s"} with the turn.`])
    return true
  }

  /** Whether a tool that changes files or runs commands is executing right now (Esc then asks twice). */
  writing(): boolean {
    return this.transcript
      .messages()
      .some((m) =>
        m.parts.some(
          (p) =>
            p.type === "tool" &&
            p.state.status === "running" &&
            ["edit", "write", "multiedit", "apply_patch", "patch", "bash"].includes(p.tool)
        )
      )
  }

  /** Answers the permission ask `id`. */
  async replyPermission(id: string, reply: "once" | "always" | "reject", message?: string): Promise<void> {
    const result = await this.backend.replyPermission(id, reply, message)
    if (!result.ok && this.backend.attached) this.note("warn", "permission", [result.message])
  }

  /** Answers the question `id` (one list of answers per question), or dismisses it. */
  async replyQuestion(id: string, answers: ReadonlyArray<ReadonlyArray<string>> | undefined): Promise<void> {
    const result = await this.backend.replyQuestion(id, answers)
    if (!result.ok && this.backend.attached) this.note("warn", "question", [result.message])
  }

  // ── shell ────────────────────────────────────────────────────────────────────────────────────────────────────

  /** `!cmd`: runs a command in the project as the person (no permission ask), shows its output, and tells the model. */
  async shell(command: string): Promise<void> {
    if (!command) return
    if (this.unavailable("shell", `$ ${command}`, "Running a shell command with !")) return
    const id = this.transcript.addLocal({ level: "info", title: `$ ${command}`, lines: [], running: true })
    this.changed()
    const outcome = await runPersonShell(command, this.root || this.io.cwd, this.io.env, (lines) => {
      this.transcript.updateLocal(id, { lines })
      this.changed()
    })
    this.transcript.updateLocal(id, {
      running: false,
      level: outcome.code === 0 ? "info" : "warn",
      lines: outcome.lines
    })
    const final = this.transcript.timeline.find((item) => item.kind === "local" && item.id === id)
    if (final?.kind === "local") for (const listener of this.noteListeners) listener(final)
    this.pendingShell.push(outcome.forModel)
    this.changed()
  }

  // ── slash commands ───────────────────────────────────────────────────────────────────────────────────────────

  /**
   * Every command the palette lists: built-ins, then the plugins' (the project's and the user's command files, then
   * MCP servers' prompts, then other plugins'); a built-in keeps its name.
   */
  commands(): ReadonlyArray<SlashCommand> {
    return [
      ...BUILTIN_COMMANDS,
      ...this.pluginCommands
        .filter((c) => !BUILTIN_COMMANDS.some((b) => b.name === c.name))
        .map((command) => ({ name: command.name, description: command.description, plugin: command }))
    ]
  }

  /** Runs `/name args`. Pickers (`/sessions`, `/agents`, `/models` without an argument) are the UI's to open. */
  async command(text: string): Promise<void> {
    const head = text.slice(1).split(/\s+/)[0] ?? ""
    const args = text.slice(1 + head.length).trim()
    switch (head) {
      case "undo":
      case "redo":
        return this.revert(head, args)
      case "new":
        return this.newSession()
      case "compact":
        return this.compact()
      case "cost":
        return this.cost()
      case "export":
        return this.export(args)
      case "init":
        return this.submitPrompt("/init: write an AGENTS.md for this project", {}, INIT_PROMPT)
      case "agents":
      case "agent":
        if (args) this.setAgent(args)
        return
      case "models":
      case "model":
        if (args) await this.setModel(args)
        return
      case "variant":
        return this.setVariant(args)
      case "sessions":
        if (args) await this.switchSession(args)
        return
      case "help":
        this.note("info", "/help", helpLines(this.commands()))
        return
      case "connect":
        if (this.unavailable("connect", "/connect", "/connect")) return
        // The full-screen UI asks its questions itself; the plain line mode has no dialog.
        this.note("info", "/connect", [
          `/connect asks its questions in the full-screen UI (lathe at a terminal). Here, set the provider in ` +
            `${userConfigFile(this.io.env)} as the README's "Configure a model provider" shows.`
        ])
        return
      default:
        return this.pluginCommand(head, args)
    }
  }

  /**
   * `/<name> args`: a plugin's command (a command file, an MCP server's prompt, listed or not: the plugin says if it has
   * none) expands to the prompt that runs, with the command's agent and model.
   */
  private async pluginCommand(name: string, args: string): Promise<void> {
    if (this.busy)
      return void this.note("warn", "busy", ["Wait for the running turn to end (or press Esc to interrupt it)."])
    const expanded = this.contributions
      ? await this.contributions.expand(name, args).then(
          (command) => ({ command }),
          (error: unknown) => ({ error: error instanceof Error ? error.message : String(error) })
        )
      : { command: undefined }
    if ("error" in expanded) return void this.note("warn", `/${name}`, [expanded.error])
    const command = expanded.command
    if (!command) {
      // Attached to a server, an MCP prompt (`/<server>:<prompt>`) would run there, which its API does not offer.
      if (name.includes(":") && this.unavailable("mcp", `/${name}`, "An MCP prompt")) return
      const near = suggest(
        name,
        this.commands().map((c) => c.name)
      )
      const hint = near === undefined ? "" : ` Did you mean /${near}?`
      return void this.note("warn", `/${name}`, [`No command /${name}.${hint} Type / to see the commands, or /help.`])
    }
    this.pendingParts.push(...command.parts)
    await this.submitPrompt(command.text, {
      ...(command.agent ? { agent: command.agent } : {}),
      ...(command.model ? { model: command.model } : {})
    })
  }

  private async submitPrompt(
    text: string,
    override: { readonly agent?: string; readonly model?: string } = {},
    instructions?: string
  ) {
    if (this.busy) {
      this.note("warn", "busy", ["Wait for the running turn to end (or press Esc to interrupt it)."])
      return
    }
    if (instructions) this.pendingShell.push(instructions)
    await this.prompt(text, override)
  }

  /** `/undo [<n>] [--step] [--list] [--force]` and `/redo [--force]`, as `lathe undo` and `lathe redo`. */
  private async revert(verb: "undo" | "redo", args: string): Promise<void> {
    const title = `/${verb}`
    const words = args.split(/\s+/).filter((w) => w !== "")
    const flags = new Set(words.filter((w) => w.startsWith("--")))
    const numbers = words.filter((w) => !w.startsWith("--"))
    const allowed = verb === "undo" ? ["--step", "--list", "--force"] : ["--force"]
    const turn = numbers[0] === undefined ? undefined : Number(numbers[0])
    if (
      [...flags].some((f) => !allowed.includes(f)) ||
      numbers.length > (verb === "undo" ? 1 : 0) ||
      (turn !== undefined && !(Number.isInteger(turn) && turn >= 1))
    )
      return void this.note("warn", title, [
        verb === "undo" ? "Usage: /undo [<n>] [--step] [--list] [--force]" : "Usage: /redo [--force]"
      ])
    const sessionID = this.sessionID
    if (!sessionID) return void this.note("warn", title, ["Nothing to do: this session has no turns yet."])
    if (flags.has("--list")) {
      const turns = await this.backend.turns(sessionID)
      return void this.note(
        turns.ok ? "info" : "warn",
        title,
        turns.ok ? turnLines(sessionID, turns.value, "/") : [turns.message]
      )
    }
    if (this.busy) return void this.note("warn", title, ["Wait for the turn to end (or press Esc) first."])
    const result = await this.backend.revert(verb, sessionID, {
      ...(flags.has("--step") ? { step: true } : {}),
      ...(turn !== undefined ? { turn } : {}),
      ...(flags.has("--force") ? { force: true } : {})
    })
    if (!result.ok) return void this.note("warn", title, [result.message])
    const { files, overwritten } = result.value
    this.note("info", title, [
      ...(files.length === 0
        ? [
            verb === "undo"
              ? "Nothing to put back: no file changed; the messages are hidden from the model."
              : "No files to bring back."
          ]
        : [
            `${verb === "undo" ? "Restored" : "Re-applied"} ${files.length} file${files.length === 1 ? "" : "s"}:`,
            ...files.map((f) => `  ${f}`)
          ]),
      ...(overwritten.length > 0 ? [`Overwrote changes made since to ${overwritten.join(", ")}.`] : [])
    ])
  }

  /** Starts a new, empty session (created with the first prompt). */
  newSession(): void {
    if (this.busy) {
      this.trace("/new refused: busy")
      return void this.note("warn", "/new", ["Wait for the turn to end (or press Esc) first."])
    }
    this.sessionID = undefined
    this.transcript = new Transcript("")
    this.changed()
  }

  /** The project's sessions, newest first. */
  async sessions(): Promise<ReadonlyArray<Session>> {
    return this.backend.sessions()
  }

  /** Resumes a session by id (or the most recent one): loads its history and its subagents' sessions. */
  async switchSession(id: string): Promise<void> {
    if (this.busy) return void this.note("warn", "/sessions", ["Wait for the turn to end (or press Esc) first."])
    await this.resume(id)
    this.changed()
  }

  private async resume(id: string | undefined): Promise<void> {
    const loaded = await this.backend.load(id)
    if (!loaded.ok) return void this.note("error", "resume", [loaded.message])
    if (!loaded.value) return void this.note("info", "resume", ["This project has no session yet; starting a new one."])
    const { session, messages, children } = loaded.value
    this.sessionID = session.id
    this.transcript = new Transcript(session.id)
    this.transcript.session = session
    this.transcript.load(messages, children)
    if (session.agent && !this.options.agent && this.primaryAgents.includes(session.agent)) this.agent = session.agent
  }

  /** Switches the primary agent. */
  setAgent(name: string): void {
    if (!this.primaryAgents.includes(name)) {
      this.note("warn", "/agents", [`No primary agent "${name}". Primary agents: ${this.primaryAgents.join(", ")}.`])
      return
    }
    this.agent = name
    const model = this.agentInfos.find((a) => a.name === name)?.model
    if (model && !this.options.model) this.model = model
    void this.resolveModel()
    this.changed()
  }

  /** Tab: the next primary agent. */
  cycleAgent(): void {
    const list = this.primaryAgents
    if (list.length === 0) return
    this.setAgent(list[(list.indexOf(this.agent) + 1) % list.length] ?? this.agent)
  }

  /** `/variant <low|medium|high|default>` sets how hard a reasoning model thinks; without an argument, says which. */
  setVariant(args: string): void {
    if (this.unavailable("variant", "/variant", "Choosing a reasoning variant")) return
    const current = () => `Reasoning: ${this.variant ?? "default (the agent's or the model's setting)"}.`
    if (args === "") return void this.note("info", "/variant", [current()])
    if (args === "default" || args === "off") this.variant = undefined
    else {
      const level = ReasoningLevel.safeParse(args)
      if (!level.success)
        return void this.note("warn", "/variant", [`"${args}" is not a variant: use low, medium, high or default.`])
      this.variant = level.data
    }
    this.note("info", "/variant", [`${current()} Only models that reason use it.`])
    this.changed()
  }

  /** Models to pick from (none when attached: the server's API does not list them). */
  async models(): Promise<ReadonlyArray<string>> {
    if (this.unavailable("models", "/models", "Listing models")) return []
    return this.backend.models()
  }

  /** Switches the model (checked against the configured providers first, when the agent runs here). */
  async setModel(model: string): Promise<void> {
    const check = await this.backend.resolveModel(model, this.agent)
    if (!check.ok) return void this.note("warn", "/models", check.message.split("\n"))
    this.model = model
    await this.resolveModel()
    this.changed()
    this.sendWaiting()
  }

  /** The models the server `/connect` was given lists (see `askServer`), asked with this session's environment. */
  serverModels(pending: NonNullable<ConnectFlow["pending"]>): ReturnType<typeof askServer> {
    return askServer(pending, this.io.env)
  }

  /**
   * `/connect`'s answers: writes the provider and model to the person's own config file (never the project's),
   * rebuilds the agent's services so they apply, and sends the prompts that waited for a model.
   */
  async connect(setup: ProviderSetup): Promise<void> {
    if (this.unavailable("connect", "/connect", "/connect")) return
    if (this.busy) this.note("info", "/connect", ["Connecting once the running turn ends."])
    // Not `idle()`: the prompts waiting for a model stay queued until the model works.
    while (this.busy) await new Promise((resolve) => setTimeout(resolve, 20))
    const file = userConfigFile(this.io.env)
    const written = writeProviderSetup(file, setup, this.io.env)
    if (typeof written === "string") return void this.note("error", "/connect", [written])
    const reloaded = await this.backend.reload()
    if (!reloaded.ok) return void this.note("error", "/connect", reloaded.message.split("\n"))
    void this.loadContributions()
    const ref = `${setup.id}/${setup.model}`
    if (this.model !== undefined && this.model !== ref && !this.options.model) this.model = undefined
    const resolved = await this.backend.resolveModel(this.model, this.agent)
    const mode = written.literalKey
      ? " (it holds the key, so only you may read it: mode 0600)"
      : written.storedIn
        ? `; the key is stored in ${written.storedIn} (mode 0600), as lathe auth login does`
        : ""
    this.note("info", "/connect", [`Wrote provider "${setup.id}" and model ${ref} to ${file}${mode}.`])
    if (!resolved.ok) {
      this.modelLabel = "no model"
      this.note("error", "no model", resolved.message.split("\n"))
      return
    }
    this.modelLabel = resolved.value.label
    this.contextLimit = resolved.value.contextLimit
    this.changed()
    this.sendWaiting()
  }

  private async resolveModel(): Promise<void> {
    const resolved = await this.backend.resolveModel(this.model, this.agent)
    if (!resolved.ok) {
      // The setup guide names /connect itself; a message about an untrusted project's settings does not.
      const connect =
        this.backend.supports("connect") && !resolved.message.includes("/connect")
          ? ["Or type /connect to set up a provider here (a prompt you type meanwhile waits for it)."]
          : []
      if (this.modelLabel === "") this.note("error", "no model", [...resolved.message.split("\n"), ...connect])
      this.modelLabel = "no model"
      return
    }
    this.modelLabel = resolved.value.label
    this.contextLimit = resolved.value.contextLimit
  }

  private async compact(): Promise<void> {
    const sessionID = this.sessionID
    if (this.unavailable("compact", "/compact", "/compact")) return
    if (!sessionID) return void this.note("warn", "/compact", ["Nothing to compact yet."])
    if (this.busy) return void this.note("warn", "/compact", ["Wait for the turn to end (or press Esc) first."])
    this.trace("busy: compact")
    this.busy = true
    this.changed()
    const abort = new AbortController()
    this.abort = abort
    const result = await this.backend.compact(sessionID, this.model, abort.signal)
    this.abort = undefined
    this.busy = false
    this.trace(`idle: compact ended (${result.ok ? "ok" : result.message})`)
    if (!result.ok) this.note("warn", "/compact", [result.message])
    this.changed()
  }

  private cost(): void {
    this.note("info", "/cost", costLines(this.transcript))
  }

  /**
   * `/export [file]`: the session as `lathe export` writes it (every call with its input, output and decisions), to
   * `file` (from the working directory) or to `<data>/exports/<session>.md`, never into the project unasked.
   */
  private async export(target: string): Promise<void> {
    const session = this.transcript.session
    if (!session) return void this.note("warn", "/export", ["Nothing to export yet."])
    const file = target
      ? resolve(this.io.cwd, target)
      : this.dataDir !== undefined
        ? join(this.dataDir, "exports", `${session.id}.md`)
        : undefined
    if (file === undefined) return void this.note("warn", "/export", ["Name the file to write: /export <file>."])
    const stored = this.backend.document ? await this.backend.document(session.id) : undefined
    if (stored && !stored.ok) return void this.note("warn", "/export", [stored.message])
    const doc = stored?.value ?? transcriptDocument(session, this.transcript)
    try {
      await mkdir(dirname(file), { recursive: true })
      // A transcript holds file contents and command output: readable by its owner only (as `lathe export -o`).
      await writeFile(file, renderMarkdown(doc), { mode: 0o600 })
    } catch (error) {
      return void this.note("warn", "/export", [
        `Cannot write ${file}: ${error instanceof Error ? error.message : String(error)}`
      ])
    }
    this.note("info", "/export", [`Wrote ${file}`])
  }

  /**
   * Answers the trust prompt. `true` trusts the project and reloads the agent's services, so its config (plugins,
   * MCP servers, providers, rules) applies from the next prompt, in this session; `false` remembers the "no" for this
   * folder (`lathe trust` still trusts it later).
   */
  async answerTrust(trust: boolean): Promise<void> {
    this.trustPrompt = undefined
    this.changed()
    if (!trust) {
      const declined = await this.backend.decline()
      this.note("info", "trust", [
        `Not trusted: the project's config stays narrowed${declined.ok ? ", and Lathe will not ask again here" : ""}. ` +
          `\`lathe trust\` in ${this.root} trusts it later.`
      ])
      return
    }
    // The services are rebuilt between turns, never under a running one.
    if (this.busy) this.note("info", "trust", ["Trusting this folder once the running turn ends."])
    await this.idle()
    const result = await this.backend.trust()
    if (!result.ok) return void this.note("error", "trust", [result.message])
    const setup = await this.backend.setup()
    if (!setup.ok) return void this.note("error", "trust", setup.message.split("\n"))
    this.applySetup(setup.value, true)
    void this.loadContributions()
    await this.resolveModel()
    this.note("info", "trust", [`Trusted ${this.root}: its config applies in full from now on, in this session.`])
  }

  /**
   * Appends a line to the file `$LATHE_TUI_TRACE` names, when it names one: what was submitted and when a turn or a
   * compaction made the session busy and idle again. For finding out what held a session busy (tests set it).
   */
  private trace(line: string): void {
    const file = this.io.env.LATHE_TUI_TRACE
    if (!file) return
    try {
      appendFileSync(file, `${new Date().toISOString()} ${line}\n`)
    } catch {
      // tracing is best effort
    }
  }

  /** Stops the services. */
  async dispose(): Promise<void> {
    this.stopWatching?.()
    this.abort?.abort()
    await this.history?.written()
    await this.backend.dispose()
  }
}
