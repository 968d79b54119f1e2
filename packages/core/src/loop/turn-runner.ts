import type { MessageWithParts, UserMessage } from "@lathe/plugin/schema"
import { Context, Deferred, Effect, Layer, Option, type Scope } from "effect"
import { Config } from "../config/config.js"
import type { PluginRequestError, UnknownCommand } from "../plugin-host/contributions.js"
import { Plugins } from "../plugin-host/plugins.js"
import type { Reasoning } from "../provider/reasoning.js"
import { SessionStore } from "../store/session-store.js"
import { type PromptError, type PromptInput, SessionBusy, SessionPrompt } from "./session-prompt.js"
import type { OutputSchema } from "./structured-output.js"
import { type PreparedTurn, prepareTurn, type TurnInput } from "./turn-input.js"

export type { PreparedTurn, TurnInput } from "./turn-input.js"

/** A turn as a front asks for it: the person's input, and how the turn runs. */
export interface TurnRequest extends TurnInput {
  /** How hard a reasoning model thinks for this turn (`--variant`, `/variant`). */
  readonly variant?: Reasoning
  /** Let an agent of mode `subagent` take the prompt (the person named it). */
  readonly allowSubagents?: boolean
  /** The model a directly addressed subagent with no model of its own runs on (the caller's). */
  readonly inheritedModel?: string
  /** The subagent the person addressed (`@name …`), when the front already took the mention off the text. */
  readonly mention?: string
  /** Name the session with the hidden `title` agent after its first message (default true). */
  readonly title?: boolean
  /** Aborting it ends the turn (as `abort(sessionID)` does). */
  readonly abort?: AbortSignal
  /** The turn's cost cap in USD, shared with its subagents (`--max-cost`; see `Budget`). */
  readonly maxCost?: number
  /** The cap on the turn's steps (`--max-steps`), over the agent's and config `max_steps`. */
  readonly maxSteps?: number
  /** The final answer must be a JSON value valid against this schema (`--output-schema`). */
  readonly outputSchema?: OutputSchema
}

/** Every way a requested turn can fail: its input (a command that does not expand) or the turn itself. */
export type TurnError = PromptError | UnknownCommand | PluginRequestError

/** A turn that ran to its end: its last assistant message, and what the input's preparation could not do. */
export interface TurnDone {
  readonly answer: MessageWithParts
  readonly problems: ReadonlyArray<string>
}

/** A prompt stored (`append`): its user message, and what the input's preparation could not do. */
export interface TurnStored {
  readonly message: UserMessage
  readonly problems: ReadonlyArray<string>
}

/** A prompt stored for a session's turns to answer (`submit`). */
export interface TurnSubmitted extends TurnStored {
  /** A turn was already running: its model sees the prompt from its next step, or the next turn answers it. */
  readonly queued: boolean
}

/** How the turns answering a stored prompt ended (`answer`). */
export type AnswerEnd =
  | { readonly status: "done" | "aborted" }
  | { readonly status: "failed"; readonly message: string }

/** What `answer` answers, and how. */
export interface AnswerRequest {
  readonly sessionID: string
  /** The stored user message to answer first (then every prompt stored behind it). */
  readonly messageID: string
  readonly abort?: AbortSignal
  /** Name the session after its first message (default true). */
  readonly title?: boolean
  /**
   * Checked before each prompt is answered, with the session's messages: a reason to give up on it (the caller's own
   * rule, such as a cluster's limit on interrupted attempts), else undefined.
   */
  readonly admit?: (messageID: string, messages: ReadonlyArray<MessageWithParts>) => string | undefined
}

/** A session's turns in progress: what stops them, and when they are over. */
interface Running {
  readonly controller: AbortController
  /** Set by `abort`: the running turn ends and nothing more starts. */
  aborted: boolean
  readonly done: Deferred.Deferred<void>
}

/** `provider/model` of a stored user message. */
const modelOf = (message: UserMessage): string | undefined =>
  message.model ? `${message.model.providerID}/${message.model.modelID}` : undefined

/**
 * The one turn-runner every front drives (the CLI's run and interactive session, `lathe serve`, cluster runners,
 * and the fronts to come): it makes a person's input a prompt in one place (commands, attachments, `@` mentions;
 * `turn-input.ts`), runs at most one series of turns per session, queues what comes meanwhile, and aborts. Asks are
 * published on the Bus by the turn as always; a front answers them through `PermissionNext` and `Question`.
 */
export class TurnRunner extends Context.Service<
  TurnRunner,
  {
    /** Makes `input` a prompt (expands the command, reads mentioned resources) without storing anything. */
    readonly prepare: (input: TurnInput) => Effect.Effect<PreparedTurn, UnknownCommand | PluginRequestError>
    /** Runs one turn now and waits for its end (fails with `SessionBusy` while one runs in the session). */
    readonly run: (request: TurnRequest) => Effect.Effect<TurnDone, TurnError>
    /**
     * Stores the prompt as a user message without running a turn: for a front whose turns run elsewhere (a cluster
     * runner answers it with `answer`), or to steer a running turn (its model sees it from its next step).
     */
    readonly append: (request: TurnRequest) => Effect.Effect<TurnStored, TurnError>
    /**
     * Stores the prompt now and makes sure a turn answers it, in the background: when none runs one starts; else the
     * running turn's model sees it from its next step, and another turn answers it if that one ends without doing so.
     */
    readonly submit: (request: TurnRequest) => Effect.Effect<TurnSubmitted, TurnError>
    /**
     * Answers the stored prompt `messageID`, then every prompt stored behind it that is still unanswered, until the
     * session is idle, aborted, or `admit` gives up (fails with `SessionBusy` while a turn runs in the session).
     */
    readonly answer: (request: AnswerRequest) => Effect.Effect<AnswerEnd, SessionBusy>
    /** Aborts the session's turns (the running one ends, nothing more starts); whether any was running. */
    readonly abort: (sessionID: string) => Effect.Effect<boolean>
    /** Whether a turn runs (or is about to) in the session. */
    readonly isRunning: (sessionID: string) => Effect.Effect<boolean>
    /** The sessions whose turns run now. */
    readonly running: Effect.Effect<ReadonlyArray<string>>
    /** Waits until the session's turns are over (at once when none runs). */
    readonly idle: (sessionID: string) => Effect.Effect<void>
  }
>()("@lathe/core/TurnRunner") {
  static readonly layer = Layer.effect(
    TurnRunner,
    Effect.suspend(() => makeTurnRunner)
  )
}

const makeTurnRunner = Effect.gen(function* () {
  const sessionPrompt = yield* SessionPrompt
  const plugins = yield* Plugins
  const store = yield* SessionStore
  const config = yield* Config
  // Background turns (`submit`) live as long as the app: closing it interrupts them.
  const scope: Scope.Scope = yield* Effect.scope
  const sessions = new Map<string, Running>()

  const prepare = Effect.fn("TurnRunner.prepare")(function* (input: TurnInput) {
    return yield* prepareTurn(plugins, config.info.agent, input)
  })

  /** The prompt `SessionPrompt` runs or stores for a prepared input. */
  const promptInput = (request: TurnRequest, prepared: PreparedTurn, abort: AbortSignal | undefined): PromptInput => {
    const inherited = request.inheritedModel ?? prepared.inheritedModel
    const mention = prepared.mention ?? request.mention
    return {
      sessionID: request.sessionID,
      parts: [...prepared.parts],
      ...(prepared.agent !== undefined ? { agent: prepared.agent } : {}),
      ...(prepared.model !== undefined ? { model: prepared.model } : {}),
      ...(request.allowSubagents || prepared.allowSubagents ? { allowSubagents: true } : {}),
      ...(mention !== undefined ? { mention } : {}),
      ...(inherited !== undefined ? { inheritedModel: inherited } : {}),
      ...(request.variant !== undefined ? { variant: request.variant } : {}),
      ...(request.title !== undefined ? { title: request.title } : {}),
      ...(request.maxCost !== undefined ? { maxCost: request.maxCost } : {}),
      ...(request.maxSteps !== undefined ? { maxSteps: request.maxSteps } : {}),
      ...(request.outputSchema !== undefined ? { outputSchema: request.outputSchema } : {}),
      ...(abort !== undefined ? { abort } : {})
    }
  }

  /** Marks the session running; its controller follows `abort` (already fired included). */
  const claim = Effect.fnUntraced(function* (sessionID: string, abort: AbortSignal | undefined) {
    if (sessions.has(sessionID))
      return yield* new SessionBusy({
        sessionID,
        message: `Session ${sessionID} is already working on a prompt; wait for it to finish or cancel it.`
      })
    const entry: Running = { controller: new AbortController(), aborted: false, done: yield* Deferred.make<void>() }
    const onAbort = () => {
      entry.aborted = true
      entry.controller.abort()
    }
    if (abort?.aborted) onAbort()
    else abort?.addEventListener("abort", onAbort, { once: true })
    sessions.set(sessionID, entry)
    const release = Effect.gen(function* () {
      abort?.removeEventListener("abort", onAbort)
      if (sessions.get(sessionID) === entry) sessions.delete(sessionID)
      yield* Deferred.succeed(entry.done, undefined)
    })
    return { entry, release }
  })

  const run = Effect.fn("TurnRunner.run")(function* (request: TurnRequest) {
    const prepared = yield* prepare(request)
    const { entry, release } = yield* claim(request.sessionID, request.abort)
    const answer = yield* sessionPrompt
      .prompt(promptInput(request, prepared, entry.controller.signal))
      .pipe(Effect.ensuring(release))
    return { answer, problems: prepared.problems }
  })

  /** The session's newest message when it is a user message no assistant message answered yet. */
  const unanswered = (sessionID: string) =>
    store.messages(sessionID).pipe(
      Effect.map((messages) => {
        const newest = messages.at(-1)?.info
        return newest?.role === "user" ? Option.some({ user: newest, messages }) : Option.none()
      }),
      Effect.orElseSucceed(() => Option.none())
    )

  /**
   * Answers the prompt `first` (its agent and model as stored, when it is found), then the newest unanswered prompt,
   * until none is left or the turns are stopped.
   */
  const drain = Effect.fnUntraced(function* (
    request: AnswerRequest,
    entry: Running,
    first: { readonly id: string; readonly user: UserMessage | undefined },
    messages: ReadonlyArray<MessageWithParts> | undefined
  ) {
    let next: Option.Option<{
      readonly id: string
      readonly user: UserMessage | undefined
      readonly messages: ReadonlyArray<MessageWithParts> | undefined
    }> = Option.some({ ...first, messages })
    while (Option.isSome(next) && !entry.aborted) {
      const { id, user } = next.value
      if (request.admit) {
        const history = next.value.messages ?? (yield* store.messages(request.sessionID).pipe(Effect.orDie))
        const refused = request.admit(id, history)
        if (refused !== undefined) return { status: "failed" as const, message: refused }
      }
      const model = user ? modelOf(user) : undefined
      // The turn's own failure is recorded on its message and published (session.error); nothing to do here.
      yield* Effect.exit(
        sessionPrompt.prompt({
          sessionID: request.sessionID,
          messageID: id,
          parts: [],
          ...(user?.agent ? { agent: user.agent } : {}),
          ...(model ? { model } : {}),
          abort: entry.controller.signal,
          ...(request.title !== undefined ? { title: request.title } : {})
        })
      )
      if (entry.aborted) break
      next = Option.map(yield* unanswered(request.sessionID), (found) => ({ ...found, id: found.user.id }))
    }
    return { status: entry.aborted ? ("aborted" as const) : ("done" as const) }
  })

  /** Answers the stored `first` in the background; a prompt stored after the last check starts the next series. */
  const startBackground = (request: AnswerRequest, entry: Running, release: Effect.Effect<void>, first: UserMessage) =>
    drain(request, entry, { id: first.id, user: first }, undefined).pipe(
      Effect.ensuring(release),
      Effect.andThen(
        Effect.gen(function* () {
          if (entry.aborted || sessions.has(request.sessionID)) return
          const late = yield* unanswered(request.sessionID)
          if (Option.isSome(late)) yield* background(request, late.value.user)
        })
      ),
      Effect.ignore,
      Effect.forkIn(scope)
    )

  const background = (request: Omit<AnswerRequest, "messageID">, first: UserMessage): Effect.Effect<void> =>
    Effect.gen(function* () {
      const claimed = yield* Effect.option(claim(request.sessionID, undefined))
      if (Option.isNone(claimed)) return
      yield* startBackground({ ...request, messageID: first.id }, claimed.value.entry, claimed.value.release, first)
    })

  const append = Effect.fn("TurnRunner.append")(function* (request: TurnRequest) {
    const prepared = yield* prepare(request)
    const message = yield* sessionPrompt.append(promptInput(request, prepared, undefined))
    return { message, problems: prepared.problems }
  })

  const submit = Effect.fn("TurnRunner.submit")(function* (request: TurnRequest) {
    const stored = yield* append(request)
    const queued = sessions.has(request.sessionID)
    if (!queued) yield* background({ sessionID: request.sessionID, ...titleOf(request) }, stored.message)
    return { ...stored, queued }
  })

  const answer = Effect.fn("TurnRunner.answer")(function* (request: AnswerRequest) {
    const { entry, release } = yield* claim(request.sessionID, request.abort)
    return yield* Effect.gen(function* () {
      const messages = yield* store.messages(request.sessionID).pipe(Effect.orElseSucceed(() => []))
      const found = messages.find((m) => m.info.id === request.messageID)?.info
      const user = found?.role === "user" ? found : undefined
      return yield* drain(request, entry, { id: request.messageID, user }, messages)
    }).pipe(Effect.ensuring(release))
  })

  const abort = (sessionID: string) =>
    Effect.sync(() => {
      const entry = sessions.get(sessionID)
      if (!entry) return false
      entry.aborted = true
      entry.controller.abort()
      return true
    }).pipe(Effect.withSpan("TurnRunner.abort"))

  const idle = (sessionID: string) =>
    Effect.suspend(() => {
      const entry = sessions.get(sessionID)
      return entry ? Deferred.await(entry.done) : Effect.void
    })

  return TurnRunner.of({
    prepare,
    run,
    append,
    submit,
    answer,
    abort,
    isRunning: (sessionID) => Effect.sync(() => sessions.has(sessionID)),
    running: Effect.sync(() => [...sessions.keys()]),
    idle
  })
})

const titleOf = (request: { readonly title?: boolean }) => (request.title !== undefined ? { title: request.title } : {})
