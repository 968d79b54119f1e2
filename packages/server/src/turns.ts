import { SessionPrompt, SessionStore, type UserMessage } from "@lathe/core"
import type { LatheEvent } from "@lathe/core/schema"
import { Effect } from "effect"
import type { DirectoryApp } from "./directories.js"

/** A prompt as the server takes it. */
export interface TurnPrompt {
  readonly sessionID: string
  readonly text: string
  readonly agent?: string
  readonly model?: string
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
  prompt(app: DirectoryApp, input: TurnPrompt): Promise<{ messageID: string; queued: boolean }>
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

interface Running {
  readonly controller: AbortController
  /** Set by `abort`: the running turn ends and nothing more starts. */
  aborted: boolean
  readonly done: Promise<void>
}

/** `provider/model` of a stored user message. */
const modelOf = (message: UserMessage): string | undefined =>
  message.model ? `${message.model.providerID}/${message.model.modelID}` : undefined

/**
 * Runs turns in the background, at most one per session. A prompt is stored at once (`SessionPrompt.append`); when
 * no turn runs one starts for it, otherwise the running turn's model sees it from its next step, and when that turn
 * ends without answering it (the newest message is still a user message no assistant message follows), another
 * turn answers the newest one. An abort ends the running turn and starts nothing more.
 */
export class Turns implements SessionRunner {
  private readonly running = new Map<string, Running>()

  /** @param titles Whether the first prompt of a session names it with the hidden `title` agent (a model call). */
  constructor(private readonly titles: boolean) {}

  /** How many turns run now. */
  get count(): number {
    return this.running.size
  }

  /** Whether a turn runs in the session now. */
  isRunning(sessionID: string): boolean {
    return this.running.has(sessionID)
  }

  /**
   * Stores the prompt and makes sure a turn answers it. Fails (before anything is stored) with the core error when
   * the agent or the model cannot take it.
   */
  async prompt(app: DirectoryApp, input: TurnPrompt): Promise<{ messageID: string; queued: boolean }> {
    const user = await app.runtime.runPromise(
      Effect.flatMap(SessionPrompt, (prompt) =>
        prompt.append({
          sessionID: input.sessionID,
          parts: [{ type: "text", text: input.text }],
          ...(input.agent ? { agent: input.agent } : {}),
          ...(input.model ? { model: input.model } : {})
        })
      )
    )
    const queued = this.running.has(input.sessionID)
    if (!queued) this.start(app, input.sessionID, user)
    return { messageID: user.id, queued }
  }

  /** Aborts the session's running turn; whether one was running. */
  abort(sessionID: string): boolean {
    const running = this.running.get(sessionID)
    if (!running) return false
    running.aborted = true
    running.controller.abort()
    return true
  }

  /** Aborts every running turn and waits (at most `timeoutMs`) until each has recorded its end. */
  async abortAll(timeoutMs: number): Promise<number> {
    const all = [...this.running.entries()]
    for (const [sessionID] of all) this.abort(sessionID)
    let timer: NodeJS.Timeout | undefined
    await Promise.race([
      Promise.allSettled(all.map(([, running]) => running.done)),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, timeoutMs)
      })
    ])
    clearTimeout(timer)
    return all.length
  }

  private start(app: DirectoryApp, sessionID: string, first: UserMessage): void {
    const controller = new AbortController()
    let resolveDone = () => {}
    const done = new Promise<void>((resolve) => {
      resolveDone = resolve
    })
    const entry: Running = { controller, aborted: false, done }
    this.running.set(sessionID, entry)
    const loop = async () => {
      let next: UserMessage | undefined = first
      while (next && !entry.aborted) {
        const model = modelOf(next)
        // The turn's own failure is recorded on its message and published (session.error); nothing to do here.
        await app.runtime.runPromiseExit(
          Effect.flatMap(SessionPrompt, (prompt) =>
            prompt.prompt({
              sessionID,
              messageID: next?.id ?? "",
              parts: [],
              ...(next?.agent ? { agent: next.agent } : {}),
              ...(model ? { model } : {}),
              abort: controller.signal,
              title: this.titles
            })
          )
        )
        if (entry.aborted) break
        next = await this.unanswered(app, sessionID)
      }
    }
    loop()
      .catch(() => undefined)
      .finally(() => {
        this.running.delete(sessionID)
        resolveDone()
        // A prompt stored between the last check and this line saw a running turn and was queued: answer it.
        if (!entry.aborted)
          void this.unanswered(app, sessionID).then((late) => {
            if (late && !this.running.has(sessionID)) this.start(app, sessionID, late)
          })
      })
  }

  /** The session's newest message when it is a user message no assistant message answered yet. */
  private async unanswered(app: DirectoryApp, sessionID: string): Promise<UserMessage | undefined> {
    const exit = await app.runtime.runPromiseExit(Effect.flatMap(SessionStore, (store) => store.messages(sessionID)))
    if (exit._tag !== "Success") return undefined
    const newest = exit.value.at(-1)?.info
    return newest?.role === "user" ? newest : undefined
  }
}
