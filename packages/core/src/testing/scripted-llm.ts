import type {
  LanguageModelV4CallOptions,
  LanguageModelV4FinishReason,
  LanguageModelV4StreamPart
} from "@ai-sdk/provider"
import { MockLanguageModelV4 } from "ai/test"
import { Context, Effect, Layer, Stream } from "effect"
import type { ModelInfo } from "../catalog/model-info.js"
import { LLM, type LLMEvent, type LLMRequest, streamWithModel } from "../llm/llm.js"
import { ProviderError } from "../llm/provider-error.js"

/** A model step's chunks; nested arrays (what the `chunks` builders return) are flattened. */
export type ScriptedChunks = ReadonlyArray<LanguageModelV4StreamPart | ReadonlyArray<LanguageModelV4StreamPart>>

/** One model call of a script: its chunks, or a function of the request that returns them. */
export type ScriptedStep = ScriptedChunks | ((request: LLMRequest) => ScriptedChunks)

/** `ModelInfo` fields to change from the scripted defaults. */
export interface ScriptedModelOptions {
  readonly providerID?: string
  readonly modelID?: string
  readonly name?: string
  readonly limit?: Partial<ModelInfo["limit"]>
  readonly cost?: Partial<ModelInfo["cost"]>
  readonly capabilities?: Partial<ModelInfo["capabilities"]>
}

/** How `ScriptedLLM.layer` behaves beyond its steps. */
export interface ScriptedOptions {
  /** What `resolve` returns (a requested `provider/model` replaces the ids). */
  readonly model?: ScriptedModelOptions
  /** Real-time delay between chunks, for abort tests; default 0 (no delay). */
  readonly chunkDelayMs?: number
}

/** Defaults: 200k context, 32k output, Sonnet-like prices, every capability on. */
export const scriptedModelInfo = (options: ScriptedModelOptions = {}): ModelInfo => ({
  providerID: options.providerID ?? "scripted",
  modelID: options.modelID ?? "model",
  name: options.name ?? "Scripted model",
  limit: { context: 200_000, output: 32_000, ...options.limit },
  cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75, ...options.cost },
  capabilities: { reasoning: true, toolCall: true, temperature: true, image: true, ...options.capabilities }
})

let sequence = 0
const nextId = (prefix: string) => `${prefix}_${++sequence}`

/** Token counts for `chunks.finish`: totals as a provider reports them (cache and reasoning are subsets). */
export interface ScriptedUsage {
  /** All input tokens, cache reads and writes included. */
  readonly input: number
  /** All output tokens, reasoning included. */
  readonly output: number
  readonly reasoning?: number
  readonly cacheRead?: number
  readonly cacheWrite?: number
}

/** Builders for short scripts: `[chunks.text("hi"), chunks.finish({ input: 10, output: 2 })]`. */
export const chunks = {
  /** A text block: start, one delta, end. */
  text: (text: string, id = nextId("txt")): Array<LanguageModelV4StreamPart> => [
    { type: "text-start", id },
    { type: "text-delta", id, delta: text },
    { type: "text-end", id }
  ],
  /** A reasoning block: start, one delta, end. */
  reasoning: (text: string, id = nextId("rsn")): Array<LanguageModelV4StreamPart> => [
    { type: "reasoning-start", id },
    { type: "reasoning-delta", id, delta: text },
    { type: "reasoning-end", id }
  ],
  /** A tool call with its input stream; `input` is JSON-encoded unless it is a string (sent as is, valid or not). */
  toolCall: (id: string, name: string, input: unknown): Array<LanguageModelV4StreamPart> => {
    const json = typeof input === "string" ? input : JSON.stringify(input)
    return [
      { type: "tool-input-start", id, toolName: name },
      { type: "tool-input-delta", id, delta: json },
      { type: "tool-input-end", id },
      { type: "tool-call", toolCallId: id, toolName: name, input: json }
    ]
  },
  /** The step's end; `reason` defaults to `"stop"` (use `"tool-calls"` after tool calls). A step without it is a cut stream. */
  finish: (
    usage: ScriptedUsage,
    reason: LanguageModelV4FinishReason["unified"] = "stop"
  ): Array<LanguageModelV4StreamPart> => {
    const cacheRead = usage.cacheRead ?? 0
    const cacheWrite = usage.cacheWrite ?? 0
    const reasoning = usage.reasoning ?? 0
    return [
      {
        type: "finish",
        finishReason: { unified: reason, raw: reason },
        usage: {
          inputTokens: { total: usage.input, noCache: usage.input - cacheRead - cacheWrite, cacheRead, cacheWrite },
          outputTokens: { total: usage.output, text: usage.output - reasoning, reasoning }
        }
      }
    ]
  },
  /** An in-band provider error (ends the step with a classified `ProviderError`). */
  error: (error: unknown): Array<LanguageModelV4StreamPart> => [{ type: "error", error }]
}

const toReadable = (parts: ReadonlyArray<LanguageModelV4StreamPart>, delayMs: number) =>
  new ReadableStream<LanguageModelV4StreamPart>({
    async start(controller) {
      for (const part of parts) {
        if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs))
        controller.enqueue(part)
      }
      controller.close()
    }
  })

/** What a test reads back from a scripted model. */
export interface ScriptedLLMShape {
  /** Every `LLM.stream` request so far, in order (including one that found the script exhausted). */
  readonly requests: Effect.Effect<ReadonlyArray<LLMRequest>>
  /** What the ai SDK passed to the model per call (prompt, tools, settings), in order. */
  readonly calls: Effect.Effect<ReadonlyArray<LanguageModelV4CallOptions>>
  /** Steps not played yet. */
  readonly remaining: Effect.Effect<number>
}

/** The recorder of `ScriptedLLM.layer`: read the requests the loop made. */
export class ScriptedLLM extends Context.Service<ScriptedLLM, ScriptedLLMShape>()("@lathe/core/ScriptedLLM") {
  /**
   * An `LLM` that plays `steps`, one per model call, through the same `streamText` path as the real layer
   * (`MockLanguageModelV4` from `ai/test`), plus this recorder. A call past the end of the script fails with a
   * non-retryable `ProviderError` saying so. The recording lives with the returned layer value: build a fresh
   * one per test.
   */
  static readonly layer = (
    steps: ReadonlyArray<ScriptedStep>,
    options: ScriptedOptions = {}
  ): Layer.Layer<LLM | ScriptedLLM> => {
    const requests: Array<LLMRequest> = []
    const models: Array<MockLanguageModelV4> = []
    const info = scriptedModelInfo(options.model)
    const resolve = Effect.fn("LLM.resolve")((model?: string) => {
      const slash = model?.indexOf("/") ?? -1
      if (model === undefined || slash <= 0) return Effect.succeed(info)
      return Effect.succeed({ ...info, providerID: model.slice(0, slash), modelID: model.slice(slash + 1) })
    })
    const stream = (request: LLMRequest): Stream.Stream<LLMEvent, ProviderError> =>
      Stream.suspend(() => {
        const index = requests.length
        requests.push(request)
        const step = steps[index]
        if (step === undefined)
          return Stream.fail(
            new ProviderError({
              providerID: request.model.providerID,
              modelID: request.model.modelID,
              reason: { _tag: "InvalidRequest" },
              message: `The scripted model has no step for call ${index + 1}: the script has ${steps.length}.`
            })
          )
        const parts = (typeof step === "function" ? step(request) : step).flat()
        const model = new MockLanguageModelV4({
          provider: request.model.providerID,
          modelId: request.model.modelID,
          doStream: async () => ({ stream: toReadable(parts, options.chunkDelayMs ?? 0) })
        })
        models.push(model)
        return streamWithModel(model, request)
      })
    return Layer.mergeAll(
      Layer.succeed(LLM, LLM.of({ resolve, stream })),
      Layer.succeed(
        ScriptedLLM,
        ScriptedLLM.of({
          requests: Effect.sync(() => [...requests]),
          calls: Effect.sync(() => models.flatMap((m) => m.doStreamCalls)),
          remaining: Effect.sync(() => Math.max(0, steps.length - requests.length))
        })
      )
    )
  }
}
