import type { LatheEvent, Session } from "@lathe/plugin/schema"
import type { BackendSetup } from "../backend.js"
import { Asks } from "./asks.js"
import type { PromptHistory } from "./history.js"
import { Listings } from "./listings.js"
import { ModelChoice } from "./model-choice.js"
import type { ControllerBase, Note, SessionView } from "./session-view.js"
import type { SlashCommand } from "./slash-commands.js"
import { SlashRunner } from "./slash-runner.js"
import type { Transcript } from "./transcript.js"
import { Turns } from "./turns.js"

/**
 * The controller's parts, one concern each, and what the UI reads of them: the session in view (`SessionView`), what
 * the person sends and what runs (`Turns`), who answers (`ModelChoice`), what can be completed (`Listings`), the
 * answers to asks (`Asks`) and the slash commands (`SlashRunner`). `Controller` adds what the person does.
 */
export class ControllerParts {
  protected readonly view: SessionView
  protected readonly choice: ModelChoice
  protected readonly listings: Listings
  protected readonly turns: Turns
  protected readonly asks: Asks
  protected readonly slash: SlashRunner

  protected constructor(protected readonly base: ControllerBase) {
    this.view = base.view
    this.choice = new ModelChoice(base)
    this.listings = new Listings(base)
    this.turns = new Turns(base, this.choice, this.listings)
    const parts = { turns: this.turns, choice: this.choice, listings: this.listings }
    this.asks = new Asks(base, parts)
    this.slash = new SlashRunner(base, parts)
    // A tool handed the session to another agent (plan_exit or plan_enter, which the person approved): the next
    // prompt goes to that agent too. Called before the transcript takes the event, so it still has the old session.
    this.view.onEvents((event) => {
      if (event.type !== "session.updated" || event.session.id !== this.view.transcript.rootID) return
      const before = this.view.transcript.session?.agent
      const after = event.session.agent
      if (before !== undefined && after !== undefined && after !== before && after !== this.choice.agent)
        this.choice.setAgent(after)
    })
  }

  /** The transcript of the session in view. */
  get transcript(): Transcript {
    return this.view.transcript
  }
  /** The session in view (undefined until the first prompt of a new session). */
  get session(): Session | undefined {
    return this.view.session
  }
  /** Increases on every change (React's useSyncExternalStore snapshot). */
  get revision(): number {
    return this.view.revision
  }
  /** `host:port` of the server the UI is attached to; undefined when the agent runs in this process. */
  get attached(): string | undefined {
    return this.base.backend.attached
  }
  /** The project's root (empty when the backend could not start). */
  get root(): string {
    return this.base.project.root
  }
  /** Whether a turn (or a compaction) runs. */
  get busy(): boolean {
    return this.turns.busy
  }
  /** The prompts waiting for the running turn (or for a model). */
  get queue(): ReadonlyArray<string> {
    return this.turns.queue
  }
  /** The person's earlier prompts (↑ and ↓), when the backend keeps them here. */
  get history(): PromptHistory | undefined {
    return this.turns.history
  }
  set history(history: PromptHistory | undefined) {
    this.turns.history = history
  }
  /** The primary agent the next prompt goes to. */
  get agent(): string {
    return this.choice.agent
  }
  /** The agents Tab and `/agents` switch between. */
  get primaryAgents(): ReadonlyArray<string> {
    return this.choice.primaryAgents
  }
  /** The resolved model's label, for the footer ("no model" when none resolves). */
  get modelLabel(): string {
    return this.choice.modelLabel
  }
  /** The resolved model's context window, for the footer. */
  get contextLimit(): number {
    return this.choice.contextLimit
  }
  /** The config's cost caps, for the budget left in the footer. */
  get budget(): BackendSetup["budget"] {
    return this.choice.budget
  }
  /** Set on start in an untrusted folder whose config was narrowed: what it would grant if trusted. */
  get trustPrompt(): ReadonlyArray<string> | undefined {
    return this.asks.trustPrompt
  }
  /** Increases whenever the files, commands or resources listed change (the UI's completion caches by it). */
  get listedRevision(): number {
    return this.listings.revision
  }
  /** What `@` completion offers: the project's files, then the plugins' resources. */
  get mentionTargets(): ReadonlyArray<string> {
    return this.listings.mentionTargets
  }
  /** Whether a prompt typed now should wait for `/connect`: no model works, and `/connect` can set one up here. */
  get waitsForModel(): boolean {
    return this.choice.waitsForModel
  }

  /** Every command the palette lists: built-ins, then the plugins' (a built-in keeps its name). */
  commands(): ReadonlyArray<SlashCommand> {
    return this.listings.commands()
  }

  /** Calls `listener` after every change; returns the unsubscribe function. */
  subscribe(listener: () => void): () => void {
    return this.view.subscribe(listener)
  }

  /** Calls `listener` with every Bus event of the app (the plain line mode renders from these). */
  onEvents(listener: (event: LatheEvent) => void): () => void {
    return this.view.onEvents(listener)
  }

  /** Calls `listener` with every note the controller adds (command answers, shell output, warnings). */
  onNotes(listener: (note: Note) => void): () => void {
    return this.view.onNotes(listener)
  }

  /** Whether a tool that changes files or runs commands is executing right now (Esc then asks twice). */
  writing(): boolean {
    return this.view.writing()
  }
}
