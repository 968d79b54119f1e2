import type { Part, ReasoningPart, StepStartPart, TextPart, ToolPart } from "@lathe/plugin/schema"
import { Clock, Effect, type Fiber } from "effect"
import type { ModelInfo } from "../catalog/model-info.js"
import type { Bus } from "../contracts/bus.js"
import type { Snapshot } from "../contracts/snapshot.js"
import type { LLMEvent } from "../llm/llm.js"
import { ProviderError } from "../llm/provider-error.js"
import { stepCost, tokensFromUsage } from "../llm/usage.js"
import type { Plugins } from "../plugin-host/plugins.js"
import { ascendingId } from "../schema/id.js"
import type { StoreError } from "../store/session-store.js"
import type { SessionWriter } from "../store/session-writer.js"
import type { DoomLoopGuard } from "./doom-loop.js"
import { MAX_TOOL_INPUT_BYTES, type ToolOutcome, type ToolRunner, type ToolStep } from "./tool-runner.js"

/** The services a step writes through, bound once by the Processor's layer. */
export interface ProcessorServices {
  readonly writer: SessionWriter["Service"]
  readonly bus: Bus["Service"]
  readonly plugins: Plugins["Service"]
  readonly snapshots: Snapshot["Service"]
  readonly runner: ToolRunner["Service"]
}

/** What of the step's input the stream's handlers read (the processor's input is one). */
export interface StreamInput {
  readonly model: ModelInfo
  /** The step's number within the turn, from 1. */
  readonly step: number
  /** The turn's doom-loop guard; it sees every call of the turn in order. */
  readonly guard: DoomLoopGuard
  /** Told the step's own cost (USD) when the model reports its usage (see `ProcessorInput.onCost`). */
  readonly onCost?: ((cost: number) => void) | undefined
}

/** What the model's `finish-step` said: why it stopped and what the step used. */
export interface StepFinish {
  readonly reason: string
  readonly tokens: ReturnType<typeof tokensFromUsage>
}

/**
 * One step as it streams: its parts by id (the last written state of each), the stream ids of open text and
 * reasoning, the call ids of tool calls, and the calls running. Owned by one `Processor.process` call.
 */
export interface StepState<I extends StreamInput = StreamInput> {
  readonly services: ProcessorServices
  readonly input: I
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

const now = Clock.currentTimeMillis

/** The input a refused oversized call is stored with (and replayed as): what it was, never its content. */
const oversizedInput = (bytes: number): Record<string, unknown> => ({
  omitted: `input of ${bytes} bytes, over the ${MAX_TOOL_INPUT_BYTES}-byte cap for one call; not kept`
})

const describe = (error: unknown): string =>
  error instanceof Error ? error.message : typeof error === "string" ? error : JSON.stringify(error)

/** An in-band `error` event as a typed failure (the LLM layer normally converts these itself). */
const inBandError = (input: StreamInput, error: unknown): ProviderError =>
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

/** Keeps a part as the step's latest, then writes and announces it (`durable`, `toolEvent`: see `putPart`). */
export const save = (state: StepState, part: Part, durable = false, toolEvent = true) =>
  Effect.suspend(() => {
    state.parts.set(part.id, part)
    return state.services.writer.putPart(part, { durable, toolEvent })
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
  const { writer, plugins } = state.services
  if (event.type === "text-start") return yield* save(state, yield* openPart(state, state.texts, event.id, "text"))
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
  // Models often end with blank lines or spaces: the stored (and shown) answer ends at its last visible character.
  const text = part.text.trimEnd()
  const output = yield* plugins.trigger("text.complete", { ...state.ids, partID: part.id }, { text })
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
    return yield* save(state, yield* openPart<ReasoningPart>(state, state.reasonings, event.id, "reasoning", extra))
  }
  if (event.type === "reasoning-delta") {
    const part = yield* openedPart<ReasoningPart>(state, state.reasonings, event.id, "reasoning")
    const next: ReasoningPart = {
      ...part,
      text: part.text + event.text,
      ...(metadata ? { metadata: { ...part.metadata, ...metadata } } : {})
    }
    state.parts.set(next.id, next)
    return yield* state.services.writer.delta(next, event.text)
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
const onToolCall = Effect.fnUntraced(function* (state: StepState, event: Extract<LLMEvent, { type: "tool-call" }>) {
  const streamed = get<ToolPart>(state, state.calls.get(event.toolCallId))
  // `tool.pending` goes out once per call: at `tool-input-start` when the input streamed, else here.
  const part = streamed ?? pendingPart(state, event.toolCallId, event.toolName)
  state.calls.set(event.toolCallId, part.id)
  const given = (typeof event.input === "object" && event.input !== null ? event.input : {}) as Record<string, unknown>
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
  const called: ToolPart = event.providerMetadata ? { ...pending, providerMetadata: event.providerMetadata } : pending
  yield* save(state, called, false, streamed === undefined)
  const count = state.input.guard.record(event.toolName, args)
  const fiber = yield* state.services.runner
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

/** One stream event recorded into the step: a part written, a delta sent, a call handed to the ToolRunner. */
export const handleEvent = (state: StepState, event: LLMEvent): Effect.Effect<void, StoreError> => {
  switch (event.type) {
    case "start-step":
      return Effect.andThen(
        save(state, state.stepStart),
        state.services.bus.publish({ type: "step.started", ...state.ids, step: state.input.step })
      )
    case "text-delta": {
      // The hot path: a delta of an open part is one write and one publish, no generator.
      const part = get<TextPart>(state, state.texts.get(event.id))
      if (part === undefined) return onText(state, event)
      if (event.text.length === 0) return Effect.void
      const next: TextPart = { ...part, text: part.text + event.text }
      state.parts.set(next.id, next)
      return state.services.writer.delta(next, event.text)
    }
    case "text-start":
    case "text-end":
      return onText(state, event)
    case "reasoning-delta": {
      const part = get<ReasoningPart>(state, state.reasonings.get(event.id))
      if (part === undefined || event.providerMetadata) return onReasoning(state, event)
      const next: ReasoningPart = { ...part, text: part.text + event.text }
      state.parts.set(next.id, next)
      return state.services.writer.delta(next, event.text)
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
        // Known now, before the step's subagents end: a turn's budget settles the call's hold at once.
        state.input.onCost?.(stepCost(state.finish.tokens, state.input.model))
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
