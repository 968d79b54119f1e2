import { Context, type Effect, Schema, type Stream } from "effect"
import type { AgentInfo } from "./agent.js"
import type { LLMEvent, ModelInfo, ProviderError } from "./llm.js"
import type { AssistantMessage } from "./message.js"
import type { AnyTool } from "./tool.js"

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
}

/** The same tool with the same input was called too often in a row, and the person said stop. */
export class DoomLoopDetected extends Schema.TaggedError<DoomLoopDetected>()("DoomLoopDetected", {
  tool: Schema.String,
  count: Schema.Number,
  message: Schema.String
}) {}

/**
 * Consumes one streamed step: turns every stream event into parts (text, reasoning, tool calls with their
 * state machine and timings, step start/finish with tokens and cost, patches), runs the tools, publishes
 * every change on the Bus, and guards against doom loops. On abort or a stream that ends early, tools not
 * completed become `error: "aborted"`.
 */
export class Processor extends Context.Service<
  Processor,
  {
    readonly process: (input: ProcessorInput) => Effect.Effect<ProcessorResult, ProviderError | DoomLoopDetected>
  }
>()("@lathe/core/Processor") {}
