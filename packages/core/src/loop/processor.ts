import { Clock, Context, Effect, Exit, Fiber, Layer, Stream } from "effect"
import type { ModelInfo } from "../catalog/model-info.js"
import { Bus } from "../contracts/bus.js"
import type { Ruleset } from "../contracts/permission-next.js"
import { Snapshot } from "../contracts/snapshot.js"
import type { AgentInfo } from "../plugin-host/agent.js"
import { Plugins } from "../plugin-host/plugins.js"
import type { AnyTool } from "../plugin-host/tool.js"
import type { LLMEvent } from "../provider/llm.js"
import { ProviderError } from "../provider/provider-error.js"
import { addTokens, isOverflow, stepCost, tokensFromUsage } from "../provider/usage.js"
import { ascendingId } from "../schema/id.js"
import type { AssistantMessage } from "../schema/message.js"
import {
  emptyTokens,
  type Part,
  type ReasoningPart,
  type StepStartPart,
  type TextPart,
  type ToolPart
} from "../schema/part.js"
import type { StoreError } from "../store/session-store.js"
import { SessionWriter } from "../store/session-writer.js"
import type { DoomLoopDetected, DoomLoopGuard } from "./doom-loop.js"
import { type ChildUsage, MAX_TOOL_INPUT_BYTES, type ToolOutcome, ToolRunner, type ToolStep } from "./tool-runner.js"

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
   * The rules (nested `AGENTS.md`) that files a call touched bring in, not yet given to the session (see
   * `SystemPrompt.nested`); added after the call as a synthetic text part of the step's message.
   */
  readonly rulesFor?: (files: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<string>>
}

/** How a step ended. */
export interface ProcessorOutput {
  readonly result: ProcessorResult
  /** The assistant message as stored at the end of the step (tokens, cost, finish, error). */
  readonly message: AssistantMessage
  /** Whether any tool call of the step completed (its effects are real even if the step then failed). */
  readonly toolsCompleted: boolean
}

/** What the model's `finish-step` said: why it stopped and what the step used. */
interface StepFinish {
  readonly reason: string
  readonly tokens: ReturnType<typeof tokensFromUsage>
}

/**
 * One step as it streams: its parts by id (the last written state of each), the stream ids of open text and
 * reasoning, the call ids of tool calls, and the calls running. Owned by one `process` call.
 */
interface StepState {
  readonly input: ProcessorInput
  readonly ids: { readonly sessionID: string; readonly messageID: string }
  readonly stepStart: StepStartPart
  readonly tools: ToolStep
  readonly parts: Map<string, Part>
  readonly texts: Map<string, string>
  readonly reasonings: Map<string, string>
  readonly calls: Map<string, string>
  readonly running: Array<Fiber.Fiber<ToolOutcome>>
  /** The calls handed to the ToolRunner: it writes their parts, so a `tool-error` of the ai SDK leaves them alone. */
  readonly handed: Set<string>
  finish: StepFinish | undefined
  failure: ProviderError | undefined
}

/** What the step's tool calls came to, folded from their outcomes. */
interface CallsOutcome {
  readonly blocked: boolean
  readonly doom: DoomLoopDetected | undefined
  readonly snapshot: string | undefined
  readonly children: ChildUsage
}

/** The input a refused oversized call is stored with (and replayed as): what it was, never its content. */
const oversizedInput = (bytes: number): Record<string, unknown> => ({
  omitted: `input of ${bytes} bytes, over the ${MAX_TOOL_INPUT_BYTES}-byte cap for one call; not kept`
})

const describe = (error: unknown): string =>
  error instanceof Error ? error.message : typeof error === "string" ? error : JSON.stringify(error)

/** An in-band `error` event as a typed failure (the LLM layer normally converts these itself). */
const inBandError = (input: ProcessorInput, error: unknown): ProviderError =>
  error instanceof ProviderError
    ? error
    : new ProviderError({
        providerID: input.model.providerID,
        modelID: input.model.modelID,
        reason: { _tag: "ServerError", status: 500 },
        message: `${input.model.providerID}/${input.model.modelID} reported an error mid-stream: ${describe(error)}`
      })

const get = <P extends Part>(state: StepState, id: string | undefined) =>
  id === undefined ? undefined : (state.parts.get(id) as P | undefined)

/** A new pending tool part for a call. */
const pendingPart = (state: StepState, callID: string, tool: string): ToolPart => ({
  id: ascendingId("part"),
  ...state.ids,
  type: "tool",
  callID,
  tool,
  state: { status: "pending", input: {}, raw: "" }
})

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
  state: StepState,
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
  state: StepState,
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

/**
 * Consumes one streamed step: turns every stream event into parts (text, reasoning, tool calls, step start/finish
 * with tokens and cost, patches), each written and announced through the `SessionWriter`, and hands every call to
 * the `ToolRunner`, folding in the outcomes it returns. On abort or a stream that ends early, tools not completed
 * become `error: "aborted"`. A failed stream fails with its `ProviderError` after the step's parts are settled and
 * stored; a stopped doom loop fails with `DoomLoopDetected`.
 */
export class Processor extends Context.Service<
  Processor,
  {
    readonly process: (
      input: ProcessorInput
    ) => Effect.Effect<ProcessorOutput, ProviderError | DoomLoopDetected | StoreError>
  }
>()("@lathe/core/Processor") {
  /** The real processor. */
  static readonly layer = Layer.effect(
    Processor,
    Effect.gen(function* () {
      const writer = yield* SessionWriter
      const bus = yield* Bus
      const plugins = yield* Plugins
      const snapshots = yield* Snapshot
      const runner = yield* ToolRunner
      const now = Clock.currentTimeMillis

      /** Keeps a part as the step's latest, then writes and announces it (`durable`, `toolEvent`: see `putPart`). */
      const save = (state: StepState, part: Part, durable = false, toolEvent = true) =>
        Effect.suspend(() => {
          state.parts.set(part.id, part)
          return writer.putPart(part, { durable, toolEvent })
        })

      /** A new, empty text or reasoning part for a stream id, remembered as that stream's open part. */
      const openPart = Effect.fnUntraced(function* <P extends TextPart | ReasoningPart>(
        state: StepState,
        open: Map<string, string>,
        streamID: string,
        type: P["type"],
        extra: Partial<P> = {}
      ) {
        const part = { id: ascendingId("part"), ...state.ids, type, text: "", time: { start: yield* now }, ...extra }
        open.set(streamID, part.id)
        return part as P
      })

      /** The open part of a stream id; opened (and written) here when the stream skipped its start event. */
      const openedPart = Effect.fnUntraced(function* <P extends TextPart | ReasoningPart>(
        state: StepState,
        open: Map<string, string>,
        streamID: string,
        type: P["type"]
      ) {
        const existing = get<P>(state, open.get(streamID))
        if (existing) return existing
        const part = yield* openPart<P>(state, open, streamID, type)
        yield* save(state, part)
        return part
      })

      const onText = Effect.fnUntraced(function* (
        state: StepState,
        event: Extract<LLMEvent, { type: "text-start" | "text-delta" | "text-end" }>
      ) {
        if (event.type === "text-start")
          return yield* save(state, yield* openPart(state, state.texts, event.id, "text"))
        if (event.type === "text-delta") {
          const part = yield* openedPart<TextPart>(state, state.texts, event.id, "text")
          if (event.text.length === 0) return
          const next: TextPart = { ...part, text: part.text + event.text }
          state.parts.set(next.id, next)
          return yield* writer.delta(next, event.text)
        }
        const part = get<TextPart>(state, state.texts.get(event.id))
        if (!part) return
        state.texts.delete(event.id)
        const output = yield* plugins.trigger("text.complete", { ...state.ids, partID: part.id }, { text: part.text })
        return yield* save(state, {
          ...part,
          text: output.text,
          time: { start: part.time?.start ?? 0, end: yield* now }
        })
      })

      const onReasoning = Effect.fnUntraced(function* (
        state: StepState,
        event: Extract<LLMEvent, { type: "reasoning-start" | "reasoning-delta" | "reasoning-end" }>
      ) {
        const metadata = event.providerMetadata
        if (event.type === "reasoning-start") {
          const extra = metadata ? { metadata } : {}
          return yield* save(
            state,
            yield* openPart<ReasoningPart>(state, state.reasonings, event.id, "reasoning", extra)
          )
        }
        if (event.type === "reasoning-delta") {
          const part = yield* openedPart<ReasoningPart>(state, state.reasonings, event.id, "reasoning")
          const next: ReasoningPart = {
            ...part,
            text: part.text + event.text,
            ...(metadata ? { metadata: { ...part.metadata, ...metadata } } : {})
          }
          state.parts.set(next.id, next)
          return yield* writer.delta(next, event.text)
        }
        const part = get<ReasoningPart>(state, state.reasonings.get(event.id))
        if (!part) return
        state.reasonings.delete(event.id)
        return yield* save(state, {
          ...part,
          ...(metadata ? { metadata: { ...part.metadata, ...metadata } } : {}),
          time: { start: part.time.start, end: yield* now }
        })
      })

      /** A complete call: stored as pending with its input, then run by the ToolRunner on a fiber of its own. */
      const onToolCall = Effect.fnUntraced(function* (
        state: StepState,
        event: Extract<LLMEvent, { type: "tool-call" }>
      ) {
        const streamed = get<ToolPart>(state, state.calls.get(event.toolCallId))
        // `tool.pending` goes out once per call: at `tool-input-start` when the input streamed, else here.
        const part = streamed ?? pendingPart(state, event.toolCallId, event.toolName)
        state.calls.set(event.toolCallId, part.id)
        const given = (typeof event.input === "object" && event.input !== null ? event.input : {}) as Record<
          string,
          unknown
        >
        // An input the provider could not parse arrives as its raw text: that counts too.
        const json = typeof event.input === "string" ? event.input : JSON.stringify(given)
        // Bytes of UTF-8 are at most three per UTF-16 unit: the exact count is needed only near the cap.
        const bytes = json.length * 3 <= MAX_TOOL_INPUT_BYTES ? json.length : Buffer.byteLength(json)
        const oversized = bytes > MAX_TOOL_INPUT_BYTES
        const args = oversized ? oversizedInput(bytes) : given
        const raw = oversized || typeof event.input === "string" ? JSON.stringify(args) : json
        const pending: ToolPart = { ...part, state: { status: "pending", input: args, raw } }
        // A tool the provider runs itself (e.g. its web search): it is running now; its result arrives in the stream.
        if (event.providerExecuted === true)
          return yield* save(state, {
            ...pending,
            state: { status: "running", input: args, time: { start: yield* now } }
          })
        // What the call must carry back on the next request (Gemini 3's thought signature), kept on the part.
        const called: ToolPart = event.providerMetadata
          ? { ...pending, providerMetadata: event.providerMetadata }
          : pending
        yield* save(state, called, false, streamed === undefined)
        const count = state.input.guard.record(event.toolName, args)
        const fiber = yield* runner
          .run(state.tools, {
            part: called,
            args,
            invalid: event.invalid === true ? describe(event.error) : undefined,
            ...(oversized ? { oversized: bytes } : {}),
            doomCount: state.input.guard.triggers(count) ? count : 0
          })
          .pipe(Effect.forkChild({ startImmediately: true }))
        state.running.push(fiber)
        state.handed.add(event.toolCallId)
      })

      /** The result of a call the provider ran itself (Lathe's own tools have no `execute` on the ai side). */
      const onProviderResult = Effect.fnUntraced(function* (
        state: StepState,
        event: Extract<LLMEvent, { type: "tool-result" | "tool-error" }>
      ) {
        if (state.handed.has(event.toolCallId)) return
        const part = get<ToolPart>(state, state.calls.get(event.toolCallId))
        if (!part || part.state.status === "completed" || part.state.status === "error") return
        const time = { start: part.state.status === "running" ? part.state.time.start : yield* now, end: yield* now }
        const input = part.state.input
        return yield* save(state, {
          ...part,
          state:
            event.type === "tool-result"
              ? {
                  status: "completed",
                  input,
                  output: typeof event.output === "string" ? event.output : JSON.stringify(event.output),
                  title: part.tool,
                  metadata: { providerExecuted: true },
                  time
                }
              : { status: "error", input, error: describe(event.error), time }
        })
      })

      const handle = (state: StepState, event: LLMEvent): Effect.Effect<void, StoreError> => {
        switch (event.type) {
          case "start-step":
            return Effect.andThen(
              save(state, state.stepStart),
              bus.publish({ type: "step.started", ...state.ids, step: state.input.step })
            )
          case "text-delta": {
            // The hot path: a delta of an open part is one write and one publish, no generator.
            const part = get<TextPart>(state, state.texts.get(event.id))
            if (part === undefined) return onText(state, event)
            if (event.text.length === 0) return Effect.void
            const next: TextPart = { ...part, text: part.text + event.text }
            state.parts.set(next.id, next)
            return writer.delta(next, event.text)
          }
          case "text-start":
          case "text-end":
            return onText(state, event)
          case "reasoning-delta": {
            const part = get<ReasoningPart>(state, state.reasonings.get(event.id))
            if (part === undefined || event.providerMetadata) return onReasoning(state, event)
            const next: ReasoningPart = { ...part, text: part.text + event.text }
            state.parts.set(next.id, next)
            return writer.delta(next, event.text)
          }
          case "reasoning-start":
          case "reasoning-end":
            return onReasoning(state, event)
          case "tool-input-start":
            return Effect.suspend(() => {
              if (state.calls.has(event.id)) return Effect.void
              const part = pendingPart(state, event.id, event.toolName)
              state.calls.set(event.id, part.id)
              return save(state, part)
            })
          case "tool-input-delta":
            return Effect.sync(() => {
              const part = get<ToolPart>(state, state.calls.get(event.id))
              if (part?.state.status !== "pending") return
              // Input deltas stay in memory (the bus sees the whole part when the call is complete), up to the cap.
              if (part.state.raw.length > MAX_TOOL_INPUT_BYTES) return
              state.parts.set(part.id, { ...part, state: { ...part.state, raw: part.state.raw + event.delta } })
            })
          case "tool-call":
            return onToolCall(state, event)
          case "tool-result":
          case "tool-error":
            return onProviderResult(state, event)
          case "finish-step":
            return Effect.sync(() => {
              state.finish = { reason: event.finishReason, tokens: tokensFromUsage(event.usage) }
            })
          case "file":
            return save(state, {
              id: ascendingId("part"),
              ...state.ids,
              type: "file",
              mime: event.file.mediaType,
              url: `data:${event.file.mediaType};base64,${event.file.base64}`
            })
          case "error":
            return Effect.sync(() => {
              state.failure ??= inBandError(state.input, event.error)
            })
          default:
            // tool-input-end, start, finish, abort, source, raw, ping, custom, approvals, steering: nothing to record.
            return Effect.void
        }
      }

      /** Waits for every call to end and folds its outcome in: its last part becomes the step's. */
      const awaitCalls = Effect.fnUntraced(function* (state: StepState) {
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
      const settle = Effect.fnUntraced(function* (state: StepState, end: number) {
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

      /**
       * The patch of a step that changed files, written as a `patch` part; returns the tree after the step
       * (step-finish's `snapshot`), tracked again only when the step changed files.
       */
      const recordPatch = Effect.fnUntraced(function* (state: StepState, before: string | undefined) {
        if (before === undefined) return undefined
        const patch = yield* snapshots
          .patch(before)
          .pipe(Effect.catch((error) => Effect.logWarning("snapshot patch failed", error).pipe(Effect.as(undefined))))
        if (!patch) return undefined
        if (patch.files.length === 0) return before
        yield* save(state, {
          id: ascendingId("part"),
          ...state.ids,
          type: "patch",
          hash: patch.hash,
          files: [...patch.files]
        })
        return yield* snapshots.track.pipe(
          Effect.catch((error) => Effect.logWarning("snapshot after the step failed", error).pipe(Effect.as(undefined)))
        )
      })

      /** The step-finish part and `step.finished`, when the model said how the step ended; returns the step's cost. */
      const recordFinish = Effect.fnUntraced(function* (state: StepState, after: string | undefined) {
        const { finish } = state
        if (!finish) return undefined
        const cost = stepCost(finish.tokens, state.input.model)
        yield* save(state, {
          id: ascendingId("part"),
          ...state.ids,
          type: "step-finish",
          reason: finish.reason,
          ...(after !== undefined ? { snapshot: after } : {}),
          tokens: finish.tokens,
          cost
        })
        yield* bus.publish({
          type: "step.finished",
          ...state.ids,
          step: state.input.step,
          reason: finish.reason,
          tokens: finish.tokens,
          cost
        })
        return cost
      })

      const process = Effect.fn("Processor.process")(function* (input: ProcessorInput) {
        const ids = { sessionID: input.assistant.sessionID, messageID: input.assistant.id }
        const stepStart: StepStartPart = { id: ascendingId("part"), ...ids, type: "step-start" }
        const state: StepState = {
          input,
          ids,
          stepStart,
          tools: yield* runner.step(input, stepStart),
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
          Stream.runForEach((event) => handle(state, event)),
          Effect.catchTag("ProviderError", (error) =>
            Effect.sync(() => {
              state.failure ??= error
            })
          ),
          Effect.exit
        )
        // Tool calls the model finished run to their end (or abort); nothing is left running after the step.
        const calls = yield* awaitCalls(state)
        const aborted = input.abort.aborted
        const end = yield* now
        yield* settle(state, end)
        const after = yield* recordPatch(state, calls.snapshot)
        const cost = yield* recordFinish(state, after)
        const message = endedMessage(state, calls, cost, aborted, end)
        yield* writer.putMessage(message)
        yield* writer.flush

        // Calls Lathe ran itself; a provider-executed call's result is already in the step, so it needs no next step.
        const toolParts = [...state.parts.values()].filter(
          (part): part is ToolPart =>
            part.type === "tool" &&
            !(part.state.status === "completed" && part.state.metadata.providerExecuted === true)
        )
        const toolsCompleted = toolParts.some((part) => part.state.status === "completed")
        if (streamed._tag === "Failure") return yield* Effect.failCause(streamed.cause)
        if (calls.doom) return yield* calls.doom
        if (state.failure && !aborted) return yield* state.failure
        return { result: nextAction(state, toolParts, aborted, calls.blocked), message, toolsCompleted }
      })

      return Processor.of({ process })
    })
  )
}
