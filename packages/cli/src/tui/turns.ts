import { type Attachment, attachmentParts, refusedAttachment, unsupportedAttachment } from "../file-attachments.js"
import type { PromptHistory } from "./history.js"
import type { Listings } from "./listings.js"
import type { ModelChoice } from "./model-choice.js"
import { NextPrompt } from "./next-prompt.js"
import { type ControllerBase, unavailable } from "./session-view.js"
import { runPersonShell } from "./shell-command.js"

/** The agent or model a command's prompt runs with, instead of the chosen ones. */
export type PromptOverride = { readonly agent?: string; readonly model?: string }

/**
 * What the person sends and what runs: prompts (queued while a turn runs, or held until a model works), the turn
 * running with its interrupt, `!shell` commands and compaction, and the context the next prompt carries that the
 * person does not see as their message. One turn at a time: `busy` is set while a turn or a compaction runs.
 */
export class Turns {
  busy = false
  readonly queue: Array<string> = []
  history: PromptHistory | undefined
  private abort: AbortController | undefined
  /** What the next prompt carries besides its text (a command's parts, shell output). */
  readonly next: NextPrompt

  constructor(
    private readonly base: ControllerBase,
    private readonly choice: ModelChoice,
    listings: Listings
  ) {
    this.next = new NextPrompt(base, listings)
  }

  /** Files named with `lathe -f`, attached to the next prompt once its session may read them and its model take them. */
  private files: ReadonlyArray<Attachment> = []

  /** Attaches `files` to the next prompt (`lathe -f`). */
  attach(files: ReadonlyArray<Attachment>): void {
    this.files = files
  }

  /** Whether the next prompt may take the `-f` files (read as the read tool would, a model that takes them). */
  private async admitFiles(sessionID: string, fresh: boolean): Promise<boolean> {
    const { backend, view } = this.base
    const files = this.files
    if (files.length === 0) return true
    this.files = []
    const refusal =
      (await unsupportedAttachment(backend, files, this.choice.model, this.choice.agent)) ??
      (await refusedAttachment(backend, sessionID, files, this.choice.agent))
    if (refusal === undefined) {
      this.next.addParts(attachmentParts(files))
      return true
    }
    view.note("error", "-f", [refusal])
    if (fresh && (await backend.discardIfEmpty(sessionID))) view.forget()
    return false
  }

  /** Sends a prompt, or queues it while a turn runs (a server queues it itself: it goes there at once). */
  async send(raw: string): Promise<void> {
    const { backend, view } = this.base
    if (this.busy) {
      // A server queues it itself (the running turn's model sees it from its next step); here it waits its turn.
      if (backend.queuesPrompts && view.sessionID) return this.sendWhileBusy(view.sessionID, raw)
      this.queue.push(raw)
      view.changed()
      return
    }
    await this.prompt(raw)
  }

  /**
   * Keeps a prompt typed while no model works: it waits in the queue until `/connect` (or `/models`) sets one up.
   * The full-screen UI calls this instead of `submit`; the plain line mode has no `/connect` and fails at once.
   */
  hold(raw: string): void {
    void this.history?.add(raw.trimEnd()).catch(() => undefined)
    this.queue.push(raw)
    this.base.view.changed()
    if (this.queue.length > 1) return
    this.base.view.note("warn", "no model", [
      "No model is set up yet, so this prompt waits (queued below). Type /connect to set up a provider here:",
      "the prompt is sent as soon as a model works."
    ])
  }

  /** Sends the prompts that waited for a model, once one works. */
  sendWaiting(): void {
    const next = this.queue.shift()
    if (next !== undefined && !this.busy) void this.prompt(next)
    else if (next !== undefined) this.queue.unshift(next)
  }

  /** Sends a prompt to a server while a turn runs there; the turn already waited for covers it. */
  private async sendWhileBusy(sessionID: string, text: string): Promise<void> {
    const result = await this.base.backend.prompt({
      sessionID,
      text,
      parts: await this.next.take(text, { id: sessionID, agent: this.choice.agent }),
      agent: this.choice.agent,
      model: this.choice.model,
      allowSubagents: false,
      signal: new AbortController().signal
    })
    if (!result.ok) this.base.view.note("error", "error", result.message.split("\n"))
  }

  /** Sends one prompt and runs the turn; afterwards, the next queued prompt. */
  async prompt(text: string, override: PromptOverride = {}): Promise<void> {
    const { backend, view } = this.base
    view.trace(`busy: prompt ${JSON.stringify(text.slice(0, 80))}`)
    this.busy = true
    view.changed()
    try {
      const fresh = view.sessionID === undefined
      const sessionID = await this.ensureSession()
      if (!sessionID) return
      if (!(await this.admitFiles(sessionID, fresh))) return
      const sub = this.choice.subagentFor(text)
      const parts = await this.next.take(text, {
        id: sessionID,
        agent: sub ? sub.name : (override.agent ?? this.choice.agent)
      })
      const abort = new AbortController()
      this.abort = abort
      const result = await backend.prompt({
        sessionID,
        text,
        parts,
        agent: sub ? sub.name : (override.agent ?? this.choice.agent),
        model: override.model ?? this.choice.model,
        ...(this.choice.variant ? { variant: this.choice.variant } : {}),
        allowSubagents: sub !== undefined,
        signal: abort.signal
      })
      if (!result.ok && !abort.signal.aborted) {
        view.note("error", "error", result.message.split("\n"))
        // A session made for this prompt that failed before the prompt was stored goes again: no empty session is
        // left behind, and the next prompt starts a new one.
        if (fresh && (await backend.discardIfEmpty(sessionID))) view.forget()
      }
    } finally {
      this.abort = undefined
      this.busy = false
      view.trace("idle: prompt ended")
      view.changed()
    }
    const next = this.queue.shift()
    if (next !== undefined) await this.prompt(next)
  }

  /** Sends a command's prompt (with `instructions` the person does not see), unless a turn runs. */
  async submitPrompt(text: string, override: PromptOverride = {}, instructions?: string): Promise<void> {
    if (this.busy) {
      this.base.view.note("warn", "busy", ["Wait for the running turn to end (or press Esc to interrupt it)."])
      return
    }
    if (instructions) this.next.addContext(instructions)
    await this.prompt(text, override)
  }

  private async ensureSession(): Promise<string | undefined> {
    const { backend, view } = this.base
    if (view.sessionID) return view.sessionID
    const created = await backend.createSession(this.choice.agent)
    if (!created.ok) {
      view.note("error", "could not create a session", [created.message])
      return undefined
    }
    view.adopt(created.value)
    return created.value.id
  }

  /** Esc: interrupts the running turn. Returns whether there was one. */
  interrupt(): boolean {
    if (!this.abort) return false
    this.abort.abort()
    // The transcript shows the interrupt itself (on the stopped tool, or the answer); this says only what else went.
    const dropped = this.queue.splice(0).length
    if (dropped > 0)
      this.base.view.note("warn", "interrupted", [
        `Dropped ${dropped} queued prompt${dropped === 1 ? "" : "s"} with the turn.`
      ])
    return true
  }

  /** Resolves when no turn runs and nothing is queued. */
  async idle(): Promise<void> {
    while (this.busy || this.queue.length > 0) await new Promise((resolve) => setTimeout(resolve, 20))
  }

  /** Resolves when no turn runs (the prompts waiting for a model stay queued). */
  async notBusy(): Promise<void> {
    while (this.busy) await new Promise((resolve) => setTimeout(resolve, 20))
  }

  /** `!cmd`: runs a command in the project as the person (no permission ask), shows its output, and tells the model. */
  async shell(command: string): Promise<void> {
    const { io, view, project } = this.base
    if (!command) return
    if (unavailable(this.base, "shell", `$ ${command}`, "Running a shell command with !")) return
    const id = view.transcript.addLocal({ level: "info", title: `$ ${command}`, lines: [], running: true })
    view.changed()
    const outcome = await runPersonShell(command, project.root || io.cwd, io.env, (lines) => {
      view.transcript.updateLocal(id, { lines })
      view.changed()
    })
    view.transcript.updateLocal(id, {
      running: false,
      level: outcome.code === 0 ? "info" : "warn",
      lines: outcome.lines
    })
    const final = view.transcript.timeline.find((item) => item.kind === "local" && item.id === id)
    if (final?.kind === "local") view.tellNote(final)
    this.next.addContext(outcome.forModel)
    view.changed()
  }

  /** `/compact`: summarises the session so far, as a turn does (busy, interruptible). */
  async compact(): Promise<void> {
    const { backend, view } = this.base
    const sessionID = view.sessionID
    if (unavailable(this.base, "compact", "/compact", "/compact")) return
    if (!sessionID) return void view.note("warn", "/compact", ["Nothing to compact yet."])
    if (this.busy) return void view.note("warn", "/compact", ["Wait for the turn to end (or press Esc) first."])
    view.trace("busy: compact")
    this.busy = true
    view.changed()
    const abort = new AbortController()
    this.abort = abort
    const result = await backend.compact(sessionID, this.choice.model, abort.signal)
    this.abort = undefined
    this.busy = false
    view.trace(`idle: compact ended (${result.ok ? "ok" : result.message})`)
    if (!result.ok) view.note("warn", "/compact", [result.message])
    view.changed()
  }

  /** Stops the running turn and waits for the history's last line to be written. */
  async dispose(): Promise<void> {
    this.abort?.abort()
    await this.history?.written()
  }
}
