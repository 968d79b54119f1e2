import { Clock, Context, Effect, Fiber, Layer, Schema, Semaphore, Stream } from "effect"
import { Config } from "../config/config.js"
import { Paths } from "../config/paths.js"
import { Bus } from "../contracts/bus.js"
import type { Ruleset } from "../contracts/permission-next.js"
import { PermissionNext } from "../contracts/permission-next.js"
import { Snapshot } from "../contracts/snapshot.js"
import type { AgentInfo } from "../plugin-host/agent.js"
import { Plugins } from "../plugin-host/plugins.js"
import type { AnyTool } from "../plugin-host/tool.js"
import { truncationDir } from "../plugin-host/truncate.js"
import { type LLMEvent, type ModelInfo, ProviderError } from "../provider/llm.js"
import { addTokens, isOverflow, stepCost, tokensFromUsage } from "../provider/usage.js"
import { toolEventType } from "../schema/events.js"
import { ascendingId } from "../schema/id.js"
import type { AssistantMessage } from "../schema/message.js"
import { emptyTokens, type Part, type ReasoningPart, type TextPart, type ToolPart } from "../schema/part.js"
import { SessionStore, type StoreError } from "../store/session-store.js"
import type { DoomLoopGuard } from "./doom-loop.js"
import { runToolCall, type ToolRunState } from "./processor-tools.js"
import { Question } from "./question.js"
import { Subagents } from "./subagents.js"

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

/**
 * The same tool with the same input was called `threshold` times or more in a row, and going on was not allowed (the
 * person said stop, or no one could be asked). `message` is the whole report for the person (see `doomLoopReport`).
 */
export class DoomLoopDetected extends Schema.TaggedError<DoomLoopDetected>()("DoomLoopDetected", {
  tool: Schema.String,
  count: Schema.Number,
  /** The doom-loop threshold in force (config `doom_loop.threshold`). */
  threshold: Schema.Number,
  /** The repeated calls, oldest first: tool and canonical JSON input. */
  calls: Schema.Array(Schema.Struct({ tool: Schema.String, input: Schema.String })),
  /** What the person can do next. */
  suggestion: Schema.String,
  message: Schema.String
}) {}

/**
 * Consumes one streamed step: turns every stream event into parts (text, reasoning, tool calls with their
 * state machine and timings, step start/finish with tokens and cost, patches), runs the tools, publishes
 * every change on the Bus, and guards against doom loops. On abort or a stream that ends early, tools not
 * completed become `error: "aborted"`. A failed stream fails with its `ProviderError` after the step's parts are
 * settled and stored.
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
      const services = {
        bus: yield* Bus,
        store: yield* SessionStore,
        permission: yield* PermissionNext,
        snapshot: yield* Snapshot,
        plugins: yield* Plugins,
        paths: yield* Paths,
        config: yield* Config,
        question: yield* Question,
        subagents: yield* Subagents
      }
      return Processor.of({ process: (input) => processStep(services, input) })
    })
  )
}

/** The services a step uses, bound once when the layer is built. */
export interface ProcessorServices {
  readonly bus: Bus["Service"]
  readonly store: SessionStore["Service"]
  readonly permission: PermissionNext["Service"]
  readonly snapshot: Snapshot["Service"]
  readonly plugins: Plugins["Service"]
  readonly paths: Paths["Service"]
  readonly config: Config["Service"]
  readonly question: Question["Service"]
  readonly subagents: Subagents["Service"]
}

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

const processStep = Effect.fnUntraced(function* (services: ProcessorServices, input: ProcessorInput) {
  const { bus, store, plugins } = services
  const { assistant } = input
  const ids = { sessionID: assistant.sessionID, messageID: assistant.id }
  const parts = new Map<string, Part>()
  const texts = new Map<string, string>() // stream id → part id
  const reasonings = new Map<string, string>()
  const tools = new Map<string, string>() // call id → part id
  const fibers: Array<Fiber.Fiber<void>> = []
  let finish: { reason: string; tokens: ReturnType<typeof tokensFromUsage> } | undefined
  let failure: ProviderError | undefined

  /** Stores and announces a part; `durable` writes it out before announcing it (a mutating tool call's result). */
  const save = (part: Part, durable = false) =>
    Effect.gen(function* () {
      parts.set(part.id, part)
      yield* store.putPart(part)
      if (durable) yield* store.flush
      yield* bus.publish({ type: "part.updated", part })
      if (part.type === "tool") {
        yield* bus.publish({
          type: toolEventType(part.state.status),
          ...ids,
          partID: part.id,
          callID: part.callID,
          tool: part.tool,
          state: part.state
        })
      }
    })
  const get = <P extends Part>(id: string | undefined) =>
    id === undefined ? undefined : (parts.get(id) as P | undefined)

  const toolState: ToolRunState = {
    step: input.step,
    snapshot: undefined,
    blocked: false,
    doom: undefined,
    children: { tokens: emptyTokens(), cost: 0 },
    lock: yield* Semaphore.make(1),
    truncation: {
      dir: truncationDir(services.paths.data),
      ...(services.config.info.tool_output?.max_lines ? { maxLines: services.config.info.tool_output.max_lines } : {}),
      ...(services.config.info.tool_output?.max_bytes ? { maxBytes: services.config.info.tool_output.max_bytes } : {})
    }
  }
  const stepStart: Part = { id: ascendingId("part"), ...ids, type: "step-start" }
  const onSnapshot = (hash: string) => save({ ...stepStart, snapshot: hash })

  const now = Clock.currentTimeMillis

  const handle = (event: LLMEvent): Effect.Effect<void, StoreError> =>
    Effect.gen(function* () {
      switch (event.type) {
        case "start-step": {
          yield* save(stepStart)
          yield* bus.publish({ type: "step.started", ...ids, step: input.step })
          return
        }
        case "text-start": {
          const part: TextPart = {
            id: ascendingId("part"),
            ...ids,
            type: "text",
            text: "",
            time: { start: yield* now }
          }
          texts.set(event.id, part.id)
          return yield* save(part)
        }
        case "text-delta": {
          let part = get<TextPart>(texts.get(event.id))
          if (!part) {
            part = { id: ascendingId("part"), ...ids, type: "text", text: "", time: { start: yield* now } }
            texts.set(event.id, part.id)
            yield* save(part)
          }
          if (event.text.length === 0) return
          const next: TextPart = { ...part, text: part.text + event.text }
          parts.set(next.id, next)
          yield* store.putPart(next)
          yield* bus.publish({ type: "part.delta", ...ids, partID: next.id, field: "text", delta: event.text })
          return
        }
        case "text-end": {
          const part = get<TextPart>(texts.get(event.id))
          if (!part) return
          texts.delete(event.id)
          const output = yield* plugins.trigger("text.complete", { ...ids, partID: part.id }, { text: part.text })
          return yield* save({ ...part, text: output.text, time: { start: part.time?.start ?? 0, end: yield* now } })
        }
        case "reasoning-start": {
          const part: ReasoningPart = {
            id: ascendingId("part"),
            ...ids,
            type: "reasoning",
            text: "",
            time: { start: yield* now },
            ...(event.providerMetadata ? { metadata: event.providerMetadata } : {})
          }
          reasonings.set(event.id, part.id)
          return yield* save(part)
        }
        case "reasoning-delta": {
          let part = get<ReasoningPart>(reasonings.get(event.id))
          if (!part) {
            part = { id: ascendingId("part"), ...ids, type: "reasoning", text: "", time: { start: yield* now } }
            reasonings.set(event.id, part.id)
            yield* save(part)
          }
          const next: ReasoningPart = {
            ...part,
            text: part.text + event.text,
            ...(event.providerMetadata ? { metadata: { ...part.metadata, ...event.providerMetadata } } : {})
          }
          parts.set(next.id, next)
          yield* store.putPart(next)
          if (event.text.length > 0)
            yield* bus.publish({ type: "part.delta", ...ids, partID: next.id, field: "text", delta: event.text })
          return
        }
        case "reasoning-end": {
          const part = get<ReasoningPart>(reasonings.get(event.id))
          if (!part) return
          reasonings.delete(event.id)
          return yield* save({
            ...part,
            ...(event.providerMetadata ? { metadata: { ...part.metadata, ...event.providerMetadata } } : {}),
            time: { start: part.time.start, end: yield* now }
          })
        }
        case "tool-input-start": {
          if (tools.has(event.id)) return
          const part: ToolPart = {
            id: ascendingId("part"),
            ...ids,
            type: "tool",
            callID: event.id,
            tool: event.toolName,
            state: { status: "pending", input: {}, raw: "" }
          }
          tools.set(event.id, part.id)
          return yield* save(part)
        }
        case "tool-input-delta": {
          const part = get<ToolPart>(tools.get(event.id))
          if (part?.state.status !== "pending") return
          // Input deltas stay in memory (the bus sees the whole part when the call is complete).
          parts.set(part.id, { ...part, state: { ...part.state, raw: part.state.raw + event.delta } })
          return
        }
        case "tool-input-end":
          return
        case "tool-call": {
          let part = get<ToolPart>(tools.get(event.toolCallId))
          if (!part) {
            part = {
              id: ascendingId("part"),
              ...ids,
              type: "tool",
              callID: event.toolCallId,
              tool: event.toolName,
              state: { status: "pending", input: {}, raw: "" }
            }
            tools.set(event.toolCallId, part.id)
          }
          const args = (typeof event.input === "object" && event.input !== null ? event.input : {}) as Record<
            string,
            unknown
          >
          const pending: ToolPart = { ...part, state: { status: "pending", input: args, raw: JSON.stringify(args) } }
          // A tool the provider runs itself (e.g. its web search): it is running now; its result arrives in the stream.
          if (event.providerExecuted === true)
            return yield* save({ ...pending, state: { status: "running", input: args, time: { start: yield* now } } })
          // What the call must carry back on the next request (Gemini 3's thought signature), kept on the part.
          const called: ToolPart = event.providerMetadata
            ? { ...pending, providerMetadata: event.providerMetadata }
            : pending
          yield* save(called)
          const count = input.guard.record(event.toolName, args)
          const fiber = yield* runToolCall(services, input, toolState, {
            part: called,
            args,
            invalid: event.invalid === true ? describe(event.error) : undefined,
            doomCount: input.guard.triggers(count) ? count : 0,
            save,
            onSnapshot
          }).pipe(Effect.forkChild({ startImmediately: true }))
          fibers.push(fiber)
          return
        }
        case "tool-result":
        case "tool-error": {
          // Only provider-executed tools end here (Lathe's own tools have no `execute` on the ai side).
          const part = get<ToolPart>(tools.get(event.toolCallId))
          if (!part || part.state.status === "completed" || part.state.status === "error") return
          const time = { start: part.state.status === "running" ? part.state.time.start : yield* now, end: yield* now }
          const input = part.state.input
          return yield* save({
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
        }
        case "finish-step": {
          finish = { reason: event.finishReason, tokens: tokensFromUsage(event.usage) }
          return
        }
        case "file": {
          return yield* save({
            id: ascendingId("part"),
            ...ids,
            type: "file",
            mime: event.file.mediaType,
            url: `data:${event.file.mediaType};base64,${event.file.base64}`
          })
        }
        case "error": {
          failure ??= inBandError(input, event.error)
          return
        }
        default:
          // start, finish, abort, source, raw, ping, custom, approvals, steering: nothing to record.
          return
      }
    })

  const streamed = yield* input.stream.pipe(
    Stream.runForEach(handle),
    Effect.catchTag("ProviderError", (error) =>
      Effect.sync(() => {
        failure ??= error
      })
    ),
    Effect.exit
  )
  // Tool calls the model finished run to their end (or abort); nothing is left running after the step.
  for (const fiber of fibers) yield* Fiber.await(fiber)
  const aborted = input.abort.aborted

  // Settle what the stream left open: unfinished calls fail, open text and reasoning end.
  const end = yield* now
  for (const part of [...parts.values()]) {
    if (part.type === "tool" && (part.state.status === "pending" || part.state.status === "running")) {
      const start = part.state.status === "running" ? part.state.time.start : end
      yield* save({
        ...part,
        state: { status: "error", input: part.state.input, error: "aborted", time: { start, end } }
      })
    } else if ((part.type === "text" || part.type === "reasoning") && part.time && part.time.end === undefined) {
      yield* save({ ...part, time: { start: part.time.start, end } })
    }
  }

  let message: AssistantMessage = { ...assistant }
  // The tree after the step (step-finish's `snapshot`): tracked again only when the step changed files.
  let after = toolState.snapshot
  if (toolState.snapshot !== undefined) {
    const patch = yield* services.snapshot
      .patch(toolState.snapshot)
      .pipe(Effect.catch((error) => Effect.logWarning("snapshot patch failed", error).pipe(Effect.as(undefined))))
    if (patch && patch.files.length > 0) {
      yield* save({ id: ascendingId("part"), ...ids, type: "patch", hash: patch.hash, files: [...patch.files] })
      after = yield* services.snapshot.track.pipe(
        Effect.catch((error) => Effect.logWarning("snapshot after the step failed", error).pipe(Effect.as(undefined)))
      )
    } else if (!patch) after = undefined
  }
  if (finish) {
    const cost = stepCost(finish.tokens, input.model)
    yield* save({
      id: ascendingId("part"),
      ...ids,
      type: "step-finish",
      reason: finish.reason,
      ...(after !== undefined ? { snapshot: after } : {}),
      tokens: finish.tokens,
      cost
    })
    message = {
      ...message,
      tokens: addTokens(message.tokens, finish.tokens),
      cost: message.cost + cost,
      finish: finish.reason
    }
    yield* bus.publish({
      type: "step.finished",
      ...ids,
      step: input.step,
      reason: finish.reason,
      tokens: finish.tokens,
      cost
    })
  }
  if (aborted) message = { ...message, error: { name: "Aborted", message: "The turn was aborted." } }
  // Subagents' tokens and cost roll up into the message whose tool calls ran them.
  if (toolState.children.cost > 0 || toolState.children.tokens.input + toolState.children.tokens.output > 0)
    message = {
      ...message,
      tokens: addTokens(message.tokens, toolState.children.tokens),
      cost: message.cost + toolState.children.cost
    }
  message = { ...message, time: { ...message.time, completed: end } }
  yield* store.putMessage(message)
  yield* bus.publish({ type: "message.updated", message })
  yield* store.flush

  // Calls Lathe ran itself; a provider-executed call's result is already in the step, so it needs no next step.
  const toolParts = [...parts.values()].filter(
    (part): part is ToolPart =>
      part.type === "tool" && !(part.state.status === "completed" && part.state.metadata.providerExecuted === true)
  )
  const toolsCompleted = toolParts.some((part) => part.state.status === "completed")
  if (streamed._tag === "Failure") return yield* Effect.failCause(streamed.cause)
  if (toolState.doom) return yield* toolState.doom
  if (failure && !aborted) return yield* failure
  const result: ProcessorResult =
    aborted || toolState.blocked
      ? "stop"
      : finish && isOverflow(finish.tokens, input.model) && toolParts.length > 0
        ? "compact"
        : toolParts.length > 0
          ? "continue"
          : "stop"
  return { result, message, toolsCompleted }
})
