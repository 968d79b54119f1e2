import type { JSONSchema7, ModelMessage, TextStreamPart, ToolSet } from "ai"
import { Context, type Effect, Schema, type Stream } from "effect"

/** One event of a model step: exactly ai 7's `fullStream` part union (see STACK.md §5 for the fields). */
export type LLMEvent = TextStreamPart<ToolSet>

/** What Lathe knows about a model: limits, prices and capabilities. */
export interface ModelInfo {
  readonly providerID: string
  readonly modelID: string
  readonly name: string
  readonly limit: {
    /** Context window in tokens. */
    readonly context: number
    /** Most output tokens per step. */
    readonly output: number
  }
  /** USD per million tokens. */
  readonly cost: {
    readonly input: number
    readonly output: number
    readonly cacheRead: number
    readonly cacheWrite: number
  }
  readonly capabilities: {
    readonly reasoning: boolean
    readonly toolCall: boolean
    readonly temperature: boolean
  }
}

/** A tool as the model sees it: a name, a description and a JSON schema. Execution stays with the loop. */
export interface ToolSpec {
  readonly description: string
  readonly inputSchema: JSONSchema7
}

/** One model call. */
export interface LLMRequest {
  readonly sessionID: string
  readonly model: ModelInfo
  readonly system: ReadonlyArray<string>
  readonly messages: ReadonlyArray<ModelMessage>
  readonly tools: Readonly<Record<string, ToolSpec>>
  readonly temperature?: number
  readonly topP?: number
  readonly maxOutputTokens?: number
  /** Provider-specific options, after the `chat.params` hook. */
  readonly providerOptions?: Readonly<Record<string, Readonly<Record<string, unknown>>>>
  readonly headers?: Readonly<Record<string, string>>
  readonly abort: AbortSignal
}

/** Why a provider call failed; the tag decides whether Retry tries again. */
export const ProviderErrorReason = Schema.Union([
  Schema.TaggedStruct("RateLimited", {
    /** The server's own wait hint, from `retry-after-ms` / `retry-after`. */
    retryAfterMs: Schema.optionalKey(Schema.Number)
  }),
  Schema.TaggedStruct("Overloaded", { retryAfterMs: Schema.optionalKey(Schema.Number) }),
  Schema.TaggedStruct("ServerError", { status: Schema.Number }),
  Schema.TaggedStruct("StreamCut", {}),
  Schema.TaggedStruct("ContextOverflow", {}),
  Schema.TaggedStruct("Auth", {}),
  Schema.TaggedStruct("InvalidRequest", { status: Schema.optionalKey(Schema.Number) }),
  Schema.TaggedStruct("Aborted", {})
])
export type ProviderErrorReason = typeof ProviderErrorReason.Type

/** One error for every provider failure, with a tagged reason so nothing string-matches messages. */
export class ProviderError extends Schema.TaggedError<ProviderError>()("ProviderError", {
  providerID: Schema.String,
  modelID: Schema.String,
  reason: ProviderErrorReason,
  message: Schema.String
}) {}

/** No provider is configured at all; the message lists the three ways to set one up. */
export class ProviderNotConfigured extends Schema.TaggedError<ProviderNotConfigured>()("ProviderNotConfigured", {
  message: Schema.String
}) {}

/** A model reference that names an unknown provider or is malformed. */
export class ModelNotFound extends Schema.TaggedError<ModelNotFound>()("ModelNotFound", {
  model: Schema.String,
  message: Schema.String
}) {}

/**
 * The model boundary. `stream` performs one step. Contract: once the returned stream has started it never
 * throws or dies: provider failures end it with a `ProviderError` in the error channel (or an `error`
 * event for failures the provider reports in-band), and an aborted request ends it with reason `Aborted`.
 */
export class LLM extends Context.Service<
  LLM,
  {
    /** Resolves `provider/model` (default: the configured model) to its limits and prices. */
    readonly resolve: (model?: string) => Effect.Effect<ModelInfo, ModelNotFound | ProviderNotConfigured>
    /** Streams one model step. */
    readonly stream: (request: LLMRequest) => Stream.Stream<LLMEvent, ProviderError>
  }
>()("@lathe/core/LLM") {}
