import type { AgentInfo, AnyTool, Ruleset } from "@lathe/plugin"
import type { AssistantMessage } from "@lathe/plugin/schema"
import { emptyTokens, type StepFinishPart, type StepStartPart, type ToolPart } from "@lathe/plugin/schema"
import { Clock, Context, Deferred, Effect, Exit, Fiber, Layer, Stream } from "effect"
import type { ModelInfo } from "../catalog/model-info.js"
import { Bus } from "../contracts/bus.js"
import { Snapshot, type SnapshotPatch } from "../contracts/snapshot.js"
import type { LLMEvent } from "../llm/llm.js"
import type { ProviderError } from "../llm/provider-error.js"
import { addTokens, isOverflow, stepCost } from "../llm/usage.js"
import { Plugins } from "../plugin-host/plugins.js"
import { afterNextRequestSent } from "../process/request-sent.js"
import { ascendingId } from "../schema/id.js"
import type { StoreError } from "../store/session-store.js"
import { SessionWriter } from "../store/session-writer.js"
import type { DoomLoopDetected, DoomLoopGuard } from "./doom-loop.js"
import { handleEvent, type StepState, save } from "./processor-stream.js"
import { stepSummary } from "./step-summary.js"
import { type ChildUsage, type ToolOutcome, ToolRunner } from "./tool-runner.js"

/** What the outer loop does after a step: call the model again, stop, or compact history first. */
export type ProcessorResult = "continue" | "stop" | "compact"

/** One step to consume. */
export interface ProcessorInput {
  /** The assistant message the step's parts belong to (already stored). */
  readonly assistant: AssistantMessage
  readonly agent: AgentInfo
  readonly model: ModelInfo
  /** The tools offered in this step, by id. */
  readonly tools: Readonly<Record<string, AnyTool>>
  /** The step's stream, from `LLM.stream`. */
  readonly stream: Stream.Stream<LLMEvent, ProviderError>
  readonly abort: AbortSignal
  /** The effective permission ruleset of the step (agent, user config, session), for the tools' asks. */
  readonly ruleset: Ruleset
  /** The step's number within the turn, from 1. */
  readonly step: number
  /** The turn's doom-loop guard; it sees every call of the turn in order. */
  readonly guard: DoomLoopGuard
  /** Rulesets of the sessions above this one (a subagent's parents): every ask must pass them too. */
  readonly constraints?: ReadonlyArray<Ruleset>
  /**
   * Told the step's own cost (USD, its subagents' not included) as soon as the model reports its usage, even when
   * the step then fails: the turn's budget counts it.
   */
  readonly onCost?: ((cost: number) => void) | undefined
}

/** How a step ended. */
export interface ProcessorOutput {
  readonly result: ProcessorResult
  /** The assistant message as stored at the end of the step (tokens, cost, finish, error). */
  readonly message: AssistantMessage
  /** Whether any tool call of the step completed (its effects are real even if the step then failed). */
  readonly toolsCompleted: boolean
}

/** What the step's tool calls came to, folded from their outcomes. */
interface CallsOutcome {
  readonly blocked: boolean
  readonly doom: DoomLoopDetected | undefined
  readonly snapshot: string | undefined
  readonly children: ChildUsage
}

/** A step of the processor, as it streams (see `StepState`). */
type ProcessorStep = StepState<ProcessorInput>

/** The calls' outcomes folded into one: the first stopped loop, any block, the step's snapshot, summed usage. */
const foldOutcomes = (outcomes: ReadonlyArray<ToolOutcome>): CallsOutcome => {
  let children: ChildUsage = { tokens: emptyTokens(), cost: 0 }
  for (const outcome of outcomes)
    children = {
      tokens: addTokens(children.tokens, outcome.children.tokens),
      cost: children.cost + outcome.children.cost
    }
  return {
    blocked: outcomes.some((outcome) => outcome.blocked),
    doom: outcomes.find((outcome) => outcome.doom !== undefined)?.doom,
    snapshot: outcomes.find((outcome) => outcome.snapshot !== undefined)?.snapshot,
    children
  }
}

/** The assistant message at the end of the step: its usage, its subagents' usage, and how it ended. */
const endedMessage = (
  state: ProcessorStep,
  calls: CallsOutcome,
  cost: number | undefined,
  aborted: boolean,
  end: number
): AssistantMessage => {
  const { assistant } = state.input
  let message: AssistantMessage = { ...assistant }
  if (state.finish && cost !== undefined)
    message = {
      ...message,
      tokens: addTokens(message.tokens, state.finish.tokens),
      cost: message.cost + cost,
      finish: state.finish.reason
    }
  if (aborted) message = { ...message, error: { name: "Aborted", message: "The turn was aborted." } }
  // Subagents' tokens and cost roll up into the message whose tool calls ran them.
  if (calls.children.cost > 0 || calls.children.tokens.input + calls.children.tokens.output > 0)
    message = {
      ...message,
      tokens: addTokens(message.tokens, calls.children.tokens),
      cost: message.cost + calls.children.cost
    }
  return { ...message, time: { ...message.time, completed: end } }
}

/** What the outer loop does next, from how the step ended. */
const nextAction = (
  state: ProcessorStep,
  toolParts: ReadonlyArray<ToolPart>,
  aborted: boolean,
  blocked: boolean
): ProcessorResult =>
  aborted || blocked
    ? "stop"
    : state.finish && isOverflow(state.finish.tokens, state.input.model) && toolParts.length > 0
      ? "compact"
      : toolParts.length > 0
        ? "continue"
        : "stop"

/** Waits for every call to end and folds its outcome in: its last part becomes the step's. */
const awaitCalls = Effect.fnUntraced(function* (state: ProcessorStep) {
  const outcomes: Array<ToolOutcome> = []
  for (const fiber of state.running) {
    const exit = yield* Fiber.await(fiber)
    if (Exit.isFailure(exit)) continue
    outcomes.push(exit.value)
    state.parts.set(exit.value.part.id, exit.value.part)
  }
  return foldOutcomes(outcomes)
})

/** Settles what the stream left open: unfinished calls fail as aborted, open text and reasoning end. */
const settle = Effect.fnUntraced(function* (state: ProcessorStep, end: number) {
  for (const part of [...state.parts.values()]) {
    if (part.type === "tool" && (part.state.status === "pending" || part.state.status === "running")) {
      const start = part.state.status === "running" ? part.state.time.start : end
      yield* save(state, {
        ...part,
        state: { status: "error", input: part.state.input, error: "aborted", time: { start, end } }
      })
    } else if ((part.type === "text" || part.type === "reasoning") && part.time && part.time.end === undefined) {
      yield* save(state, { ...part, time: { start: part.time.start, end } })
    }
  }
})

/** A step's `patch` part: the files its tools changed and their line counts (`id` given when taken earlier). */
const savePatch = (state: ProcessorStep, patch: SnapshotPatch, id = ascendingId("part")) =>
  save(state, {
    id,
    ...state.ids,
    type: "patch",
    hash: patch.hash,
    files: [...patch.files],
    ...(patch.lines ? { summary: stepSummary(patch.lines) } : {})
  })

/**
 * The patch of a step that changed files, written as a `patch` part; returns the tree after the step
 * (step-finish's `snapshot`): the one the patch was measured to, or tracked again when the service did not say.
 */
const recordPatch = Effect.fnUntraced(function* (state: ProcessorStep, before: string | undefined) {
  if (before === undefined) return undefined
  const { snapshots } = state.services
  const patch = yield* snapshots
    .patch(before)
    .pipe(Effect.catch((error) => Effect.logWarning("snapshot patch failed", error).pipe(Effect.as(undefined))))
  if (!patch) return undefined
  if (patch.files.length === 0) return before
  yield* savePatch(state, patch)
  // Nothing ran between the patch and here: its tree is the work tree after the step, without another snapshot.
  if (patch.after !== undefined) return patch.after
  return yield* snapshots.track.pipe(
    Effect.catch((error) => Effect.logWarning("snapshot after the step failed", error).pipe(Effect.as(undefined)))
  )
})

/**
 * The step-finish part and `step.finished`, when the model said how the step ended; returns the step's cost and the
 * part (to add the tree after the step once a patch recorded later has it).
 */
const recordFinish = Effect.fnUntraced(function* (state: ProcessorStep, after: string | undefined) {
  const { finish } = state
  if (!finish) return { cost: undefined, part: undefined }
  const cost = stepCost(finish.tokens, state.input.model)
  const part: StepFinishPart = {
    id: ascendingId("part"),
    ...state.ids,
    type: "step-finish",
    reason: finish.reason,
    ...(after !== undefined ? { snapshot: after } : {}),
    tokens: finish.tokens,
    cost
  }
  yield* save(state, part)
  yield* state.services.bus.publish({
    type: "step.finished",
    ...state.ids,
    step: state.input.step,
    reason: finish.reason,
    tokens: finish.tokens,
    cost
  })
  return { cost, part }
})

/**
 * A step's patch recorded off the step's path, while the next request is out: the tree after the step first (then
 * `recorded` is done: the next step's tools may change files), then, once the previous step's patch (`previous`, when
 * it was recorded this way too) is stored, the files and lines between the two trees as its `patch` part (id taken
 * before the step-finish's), the step-finish again with that tree. Both go to disk with the store's batch, as the
 * rest of a step the loop goes on from does (`flushDelay` after its first put, or with the next call that changes
 * files, which is written at once): a flush here was a write transaction in every edit step's gap. Never interrupted
 * (it is joined by whatever needs it); a failure is logged, as an inline patch's is.
 */
const recordPatchLater = (
  state: ProcessorStep,
  before: string,
  id: string,
  finished: StepFinishPart | undefined,
  later: { readonly endedAt: number; readonly start: StartGate; readonly recorded: Deferred.Deferred<void> },
  previous: Fiber.Fiber<void> | undefined
): Effect.Effect<void> =>
  Effect.gen(function* () {
    const { snapshots } = state.services
    const { endedAt, start, recorded } = later
    yield* start.opened
    const after = yield* (snapshots.trackEnded ? snapshots.trackEnded(endedAt) : snapshots.track).pipe(
      Effect.catch((error) => Effect.logWarning("snapshot after the step failed", error).pipe(Effect.as(undefined))),
      Effect.ensuring(Deferred.succeed(recorded, undefined))
    )
    // Patches are stored in their steps' order (each waits for the one before: a chain, joined by its last link).
    if (previous) yield* Fiber.await(previous)
    if (after === undefined) return
    const patch = yield* snapshots.patch(before, after)
    if (patch.files.length > 0) yield* savePatch(state, patch, id)
    if (finished) yield* save(state, { ...finished, snapshot: after })
  }).pipe(
    Effect.catch((error) => Effect.logWarning("recording the step's patch failed", error)),
    Effect.uninterruptible
  )

/**
 * When the tree after a step is taken (`recordPatchLater`): once the next request has been written out
 * (`afterNextRequestSent`), so that reading and writing the changed files happens while the model thinks rather than
 * between the step and its request; at once when something needs the tree (`open`: the next step's first mutating
 * call, the turn's end); at the latest {@link START_AFTER_MS} after the step (a model reached without HTTP). The
 * step's end time is taken before, so a later start records the same tree.
 */
interface StartGate {
  readonly opened: Effect.Effect<void>
  readonly open: () => void
}

/** See {@link StartGate}. */
const START_AFTER_MS = 20

const startGate = (): StartGate => {
  const opened = Deferred.makeUnsafe<void>()
  let timer: ReturnType<typeof setTimeout> | undefined
  const open = afterNextRequestSent(() => {
    clearTimeout(timer)
    Deferred.doneUnsafe(opened, Exit.void)
  })
  timer = setTimeout(open, START_AFTER_MS)
  timer.unref?.()
  return { opened: Deferred.await(opened), open }
}

/** The Processor's shape. */
export interface ProcessorService {
  readonly process: (
    input: ProcessorInput
  ) => Effect.Effect<ProcessorOutput, ProviderError | DoomLoopDetected | StoreError>
  /**
   * Waits until the session's last step is wholly recorded. A step whose tools may have changed files and after which
   * the loop goes on records the tree after it, then its patch, while the next request is out (see `process`): the
   * next step's first mutating call waits for that tree; the patches are stored in their steps' order, each after the
   * one before (a step recorded inline waits for them all); a turn waits for them before it ends.
   */
  readonly settled: (sessionID: string) => Effect.Effect<void>
}

/**
 * Consumes one streamed step: turns every stream event into parts (text, reasoning, tool calls, step start/finish
 * with tokens and cost, patches), each written and announced through the `SessionWriter`, and hands every call to
 * the `ToolRunner`, folding in the outcomes it returns. On abort or a stream that ends early, tools not completed
 * become `error: "aborted"`. A failed stream fails with its `ProviderError` after the step's parts are settled and
 * stored; a stopped doom loop fails with `DoomLoopDetected`.
 */
export class Processor extends Context.Service<Processor, ProcessorService>()("@lathe/core/Processor") {
  /** The real processor. */
  static readonly layer = Layer.effect(
    Processor,
    Effect.suspend(() => makeProcessor)
  )
}

/** The real processor over the services bound here, once (`processor-stream.ts` records the stream's events). */
const makeProcessor = Effect.gen(function* () {
  const services = {
    writer: yield* SessionWriter,
    bus: yield* Bus,
    plugins: yield* Plugins,
    snapshots: yield* Snapshot,
    runner: yield* ToolRunner
  }
  // Patches being recorded off their step's path, by session: outlive the step (the layer's scope), never interrupted.
  const scope = yield* Effect.scope
  const pending = new Map<
    string,
    { readonly fiber: Fiber.Fiber<void>; readonly recorded: Deferred.Deferred<void>; readonly start: StartGate }
  >()
  const settled = (sessionID: string): Effect.Effect<void> =>
    Effect.suspend(() => {
      const patch = pending.get(sessionID)
      if (!patch) return Effect.void
      patch.start.open()
      return Effect.andThen(
        Fiber.await(patch.fiber),
        Effect.sync(() => {
          if (pending.get(sessionID) === patch) pending.delete(sessionID)
        })
      )
    })
  // What the next step's first mutating call waits for: the tree after the previous step, not its line counts.
  const treeRecorded = (sessionID: string): Effect.Effect<void> =>
    Effect.suspend(() => {
      const patch = pending.get(sessionID)
      if (!patch) return Effect.void
      patch.start.open()
      return Deferred.await(patch.recorded)
    })

  const process = Effect.fn("Processor.process")(function* (input: ProcessorInput) {
    const ids = { sessionID: input.assistant.sessionID, messageID: input.assistant.id }
    const stepStart: StepStartPart = { id: ascendingId("part"), ...ids, type: "step-start" }
    const state: ProcessorStep = {
      services,
      input,
      ids,
      stepStart,
      tools: yield* services.runner.step(input, stepStart, treeRecorded(ids.sessionID)),
      parts: new Map(),
      texts: new Map(),
      reasonings: new Map(),
      calls: new Map(),
      running: [],
      handed: new Set(),
      finish: undefined,
      failure: undefined
    }
    const streamed = yield* input.stream.pipe(
      Stream.runForEach((event) => handleEvent(state, event)),
      Effect.catchTag("ProviderError", (error) =>
        Effect.sync(() => {
          state.failure ??= error
        })
      ),
      Effect.exit
    )
    // Tool calls the model finished run to their end (or abort); nothing is left running after the step.
    const calls = yield* awaitCalls(state)
    // The step's end on this machine's clock, as file times are (see `Snapshot.trackEnded`).
    const endedAt = Date.now()
    const aborted = input.abort.aborted
    const end = yield* Clock.currentTimeMillis
    yield* settle(state, end)

    // Calls Lathe ran itself; a provider-executed call's result is already in the step, so it needs no next step.
    const toolParts = [...state.parts.values()].filter(
      (part): part is ToolPart =>
        part.type === "tool" && !(part.state.status === "completed" && part.state.metadata.providerExecuted === true)
    )
    const toolsCompleted = toolParts.some((part) => part.state.status === "completed")
    const result = nextAction(state, toolParts, aborted, calls.blocked)
    const failed = streamed._tag === "Failure" || calls.doom !== undefined || (state.failure !== undefined && !aborted)
    // When the loop goes on, the patch (four git calls) is recorded while the next request is out, not before it.
    const later = result === "continue" && !failed ? calls.snapshot : undefined
    const patchID = later === undefined ? undefined : ascendingId("part")
    // A step recorded here, inline, stores its patch after the previous step's. One recorded later waits for it there
    // (in `recordPatchLater`): a model that answers before the previous step's lines are counted does not wait.
    if (later === undefined) yield* settled(ids.sessionID)
    const after = later === undefined ? yield* recordPatch(state, calls.snapshot) : undefined
    const { cost, part: finished } = yield* recordFinish(state, after)
    const message = endedMessage(state, calls, cost, aborted, end)
    yield* services.writer.putMessage(message)
    // A step the loop goes on from goes to disk with the store's batch (`flushDelay` after its first put, while the next
    // request is out): the next request's history reads the unwritten rows from memory. A last step is written now.
    if (result !== "continue" || failed) yield* services.writer.flush
    if (later !== undefined && patchID !== undefined) {
      const recorded = yield* Deferred.make<void>()
      const start = startGate()
      const previous = pending.get(ids.sessionID)?.fiber
      const fiber = yield* Effect.forkIn(
        recordPatchLater(state, later, patchID, finished, { endedAt, start, recorded }, previous),
        scope,
        { startImmediately: true }
      )
      pending.set(ids.sessionID, { fiber, recorded, start })
    }

    if (streamed._tag === "Failure") return yield* Effect.failCause(streamed.cause)
    if (calls.doom) return yield* calls.doom
    if (state.failure && !aborted) return yield* state.failure
    return { result, message, toolsCompleted }
  })

  return Processor.of({ process, settled })
})
