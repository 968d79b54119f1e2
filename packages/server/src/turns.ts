import { TurnRunner } from "@lathe/core"
import type { LatheEvent } from "@lathe/core/schema"
import { Effect } from "effect"
import type { DirectoryApp } from "./directories.js"

/** A prompt as the server takes it. */
export interface TurnPrompt {
  readonly sessionID: string
  /** What the person typed; with `command`, its arguments as typed. */
  readonly text: string
  /** A plugin command to expand where the turn runs (an MCP prompt, a command file), as `/name` names it. */
  readonly command?: string
  /** The command's arguments (default: `text` split like a shell). */
  readonly arguments?: ReadonlyArray<string>
  readonly agent?: string
  readonly model?: string
}

/** A stored prompt: its message, whether a running turn was there first, and resources that could not be read. */
export interface TurnAccepted {
  readonly messageID: string
  readonly queued: boolean
  readonly notices?: ReadonlyArray<string>
}

/**
 * Who runs the sessions' turns. `lathe serve` runs them in its own process ({@link Turns}); a server in front of a
 * cluster sends them to the runner that holds each session. The handlers only talk to this interface.
 */
export interface SessionRunner {
  /** How many turns this process runs now (what a drain waits for). */
  readonly count: number
  /** Whether a turn runs in the session now. */
  isRunning(sessionID: string): boolean
  /** Stores the prompt (through `app`) and makes sure a turn answers it. */
  prompt(app: DirectoryApp, input: TurnPrompt): Promise<TurnAccepted>
  /** Aborts the session's running turn; whether one was running. */
  abort(sessionID: string): boolean | Promise<boolean>
  /** Aborts every turn this process runs and waits (at most `timeoutMs`); how many there were. */
  abortAll(timeoutMs: number): Promise<number>
  /**
   * Undo/redo where the session's work tree lives; absent: the server's own app does it (its work tree is local).
   * Resolves to `undefined` when the runner side has no such session.
   */
  revert?(
    sessionID: string,
    verb: "undo" | "redo",
    options?: { readonly step?: boolean; readonly turn?: number; readonly force?: boolean }
  ): Promise<{ reverted: boolean; message: string }>
  /**
   * Asks and questions pending where the turns run (from their events); with `respond`, replaces the server's own
   * apps as the place replies go.
   */
  pending?(): { readonly asks: ReadonlyArray<PendingAsk>; readonly questions: ReadonlyArray<PendingAsked> }
  /** Answers a pending permission ask or question held elsewhere; whether it was pending there. */
  respond?(response: RunnerResponse): Promise<boolean>
  /** Stops what the runner holds (connections, listeners). */
  dispose?(): Promise<void>
  /**
   * Where the server's own apps' events go instead of its event log (a cluster front relays them, so they are
   * numbered in the shared store with the runners' events and every front sees them).
   */
  readonly publish?: (event: LatheEvent) => void
}

/** A pending permission ask, as its event announced it. */
export type PendingAsk = Omit<Extract<LatheEvent, { type: "permission.asked" }>, "type">
/** A pending question, as its event announced it. */
export type PendingAsked = Omit<Extract<LatheEvent, { type: "question.asked" }>, "type">

/** A person's answer, routed to where the ask is pending. */
export type RunnerResponse =
  | {
      readonly kind: "permission"
      readonly requestID: string
      readonly reply: "once" | "always" | "reject"
      readonly message?: string
    }
  | {
      readonly kind: "question"
      readonly requestID: string
      readonly answers?: ReadonlyArray<ReadonlyArray<string>>
      readonly dismissed?: string
    }

/**
 * Runs turns in this process, through each directory app's `TurnRunner` (core): a prompt is stored at once (its
 * command expanded and mentioned resources attached there); when no turn runs one starts, otherwise the running turn's
 * model sees it from its next step, and another turn answers it if that one ends without doing so. An abort ends the
 * running turn and starts nothing more. This class only remembers which app holds each session it was given.
 */
export class Turns implements SessionRunner {
  /** The app of every session prompted here (a session belongs to one directory's app). */
  private readonly apps = new Map<string, DirectoryApp>()

  /** @param titles Whether the first prompt of a session names it with the hidden `title` agent (a model call). */
  constructor(private readonly titles: boolean) {}

  /** How many sessions run turns now. */
  get count(): number {
    return this.runningSessions().length
  }

  /** Whether a turn runs in the session now. */
  isRunning(sessionID: string): boolean {
    const app = this.apps.get(sessionID)
    return app?.runtime.runSync(Effect.flatMap(TurnRunner, (runner) => runner.isRunning(sessionID))) === true
  }

  /**
   * Stores the prompt and makes sure a turn answers it. Fails (before anything is stored) with the core error when
   * the agent or the model cannot take it, or the command does not expand.
   */
  async prompt(app: DirectoryApp, input: TurnPrompt): Promise<TurnAccepted> {
    this.apps.set(input.sessionID, app)
    const submitted = await app.runtime.runPromise(
      Effect.flatMap(TurnRunner, (runner) =>
        runner.submit({
          sessionID: input.sessionID,
          text: input.text,
          ...(input.command !== undefined ? { command: input.command } : {}),
          ...(input.arguments !== undefined ? { arguments: input.arguments } : {}),
          mentions: true,
          ...(input.agent ? { agent: input.agent } : {}),
          ...(input.model ? { model: input.model } : {}),
          title: this.titles
        })
      )
    )
    return {
      messageID: submitted.message.id,
      queued: submitted.queued,
      ...(submitted.problems.length > 0 ? { notices: submitted.problems } : {})
    }
  }

  /** Aborts the session's running turn; whether one was running. */
  async abort(sessionID: string): Promise<boolean> {
    const app = this.apps.get(sessionID)
    if (app === undefined) return false
    return app.runtime.runPromise(Effect.flatMap(TurnRunner, (runner) => runner.abort(sessionID)))
  }

  /** Aborts every running turn and waits (at most `timeoutMs`) until each has recorded its end. */
  async abortAll(timeoutMs: number): Promise<number> {
    const all = this.runningSessions()
    const ended = all.map(async ([sessionID, app]) => {
      await this.abort(sessionID)
      await app.runtime.runPromise(Effect.flatMap(TurnRunner, (runner) => runner.idle(sessionID)))
    })
    let timer: NodeJS.Timeout | undefined
    await Promise.race([
      Promise.allSettled(ended),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, timeoutMs)
      })
    ])
    clearTimeout(timer)
    return all.length
  }

  /** The sessions running turns now, with their apps. */
  private runningSessions(): Array<[string, DirectoryApp]> {
    return [...this.apps.entries()].filter(([sessionID]) => this.isRunning(sessionID))
  }
}
