import type { LanguageModelV4, SharedV4ProviderOptions } from "@ai-sdk/provider"
import {
  type CallWarning,
  type JSONSchema7,
  jsonSchema,
  type LanguageModelStreamPart,
  type ModelMessage,
  Output,
  experimental_streamLanguageModelCall as streamLanguageModelCall,
  type TextStreamPart,
  type ToolSet,
  tool
} from "ai"
import { Channel, Clock, Context, Effect, Layer, Option, Stream } from "effect"
import { catalogCandidates, catalogOptions, ModelCatalog } from "../catalog/model-catalog.js"
import type { ModelInfo } from "../catalog/model-info.js"
import { Config, type ConfigShape } from "../config/config.js"
import { secretValues } from "../config/secret-values.js"
import type { CacheStrategy, NativeTool, ProviderDescriptor } from "../provider/descriptor.js"
import { type ProviderFamily, reasoningOptions } from "../provider/reasoning.js"
import { descriptorOf } from "../provider/registry.js"
import { type ConfiguredProvider, keyFromOf } from "./configured.js"
import { liftToolImages } from "./model-messages.js"
import {
  ignoredUntrusted,
  type ProviderEnv,
  type ProviderTable,
  providerTable,
  resolveModel
} from "./model-resolution.js"
import { fitOutputCap } from "./output-cap.js"
import { markCache } from "./prompt-cache.js"
import {
  type ModelNotFound,
  type ProviderError,
  type ProviderNotConfigured,
  StreamCutError,
  toProviderError
} from "./provider-error.js"

export { type ProviderEnv, providerSetupHelp } from "./model-resolution.js"

/** One event of a model step: exactly ai 7's `fullStream` part union (see STACK.md §5 for the fields). */
export type LLMEvent = TextStreamPart<ToolSet>

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
  /**
   * The most output tokens the call may write, thinking included: a cost budget's allowance (`budgetedCall`). Sent as
   * the request's output limit in place of `maxOutputTokens`, a thinking budget fitted inside it (`fitOutputCap`).
   */
  readonly outputCap?: number
  /** Provider-specific options, after the `chat.params` hook. */
  readonly providerOptions?: Readonly<Record<string, Readonly<Record<string, unknown>>>>
  readonly headers?: Readonly<Record<string, string>>
  readonly abort: AbortSignal
  /**
   * The JSON Schema the turn's final answer must follow (`--output-schema`): sent as the provider's native structured
   * output where it has one that works alongside tools (`StreamOptions.structuredOutput`); elsewhere the system
   * prompt asks for it, and the loop validates the answer either way.
   */
  readonly answerSchema?: JSONSchema7
  /**
   * The step may use the model provider's own web search (the `websearch` permission allows it outright: the provider
   * runs each search without asking). Where the provider has one (`StreamOptions.nativeSearch`) it is offered as the
   * tool `web_search`, in place of a `websearch` tool of Lathe's; elsewhere this changes nothing.
   */
  readonly nativeSearch?: boolean
}

/**
 * The model boundary. `resolve` turns a `provider/model` reference into limits and prices; `stream` performs
 * exactly one step (one model call; tools are offered but never executed here, the loop runs them).
 *
 * Stream contract: once started, the stream never throws or dies. Every failure ends it with a `ProviderError`
 * in the error channel whose `reason` is classified (see `toProviderError`): an `error` part the provider sends
 * in-band is turned into that failure (so `error` events never reach the consumer), a stream that ends without
 * its `finish` part or whose socket is reset is `StreamCut`, and an aborted `request.abort` is `Aborted`. A
 * successful stream always ends with a `finish` event. The provider SDK never retries (one call, no retry wrapper):
 * retrying is the loop's job, through `Retry`. Interrupting the stream aborts the HTTP request.
 */
export class LLM extends Context.Service<
  LLM,
  {
    /** Resolves `provider/model` (default: the configured model) to its limits and prices. */
    readonly resolve: (model?: string) => Effect.Effect<ModelInfo, ModelNotFound | ProviderNotConfigured>
    /** Streams one model step. */
    readonly stream: (request: LLMRequest) => Stream.Stream<LLMEvent, ProviderError>
  }
>()("@lathe/core/LLM") {
  /**
   * Providers from `Config`, plus every provider type whose key variable is set in `env` or whose key `lathe auth
   * login` stored, plus keyless local servers a model reference names (see `configuredProviders`); SDKs load on
   * first use.
   */
  static readonly layerWith = (env: ProviderEnv): Layer.Layer<LLM, never, Config> =>
    Layer.effect(
      LLM,
      Effect.gen(function* () {
        const config = yield* Config
        const providers = providerTable(config.info, env)
        const secrets = credentialsOf(config, providers, env)
        // The provided ModelCatalog (the CLI's refreshes itself), else a read-only one on this config and env.
        const catalog = Option.getOrElse(yield* Effect.serviceOption(ModelCatalog), () =>
          ModelCatalog.make({ ...catalogOptions(config.info, env), refresh: false })
        )
        const models = new Map<string, Promise<LanguageModelV4>>()
        const load = (provider: ConfiguredProvider, modelID: string) => {
          const key = `${provider.id}/${modelID}`
          let model = models.get(key)
          if (model === undefined) {
            model = provider.descriptor.load(provider.settings, modelID)
            models.set(key, model)
            model.catch(() => models.delete(key))
          }
          return model
        }
        // Start loading the default model's SDK on the next turn of the event loop, so it overlaps start-up's
        // waits (git, files) instead of delaying the first request.
        const preferred = config.info.model
        const slash = preferred?.indexOf("/") ?? -1
        const preferredProvider = preferred && slash > 0 ? providers.find(preferred.slice(0, slash)) : undefined
        if (preferred && preferredProvider)
          setImmediate(() => void load(preferredProvider, preferred.slice(slash + 1)).catch(() => undefined))
        const resolve = Effect.fn("LLM.resolve")(function* (model?: string) {
          const resolved: Effect.Effect<ModelInfo, ModelNotFound | ProviderNotConfigured> = resolveModel(
            config.info,
            providers,
            catalog,
            model
          )
          return yield* Effect.mapError(
            resolved,
            (error) => ignoredUntrusted(config, model ?? config.info.model) ?? error
          )
        })
        const stream = (request: LLMRequest): Stream.Stream<LLMEvent, ProviderError> => {
          const { providerID, modelID } = request.model
          const provider = providers.find(providerID)
          if (provider === undefined)
            return Stream.fail(
              toProviderError(new Error(`no provider "${providerID}" is configured`), providerID, modelID, { secrets })
            )
          const keyFrom = keyFromOf(provider, config.apiKeyFiles, env)
          const options = {
            ...streamOptionsOf(provider, modelID),
            ...(keyFrom ? { keyFrom } : {}),
            ...(config.info.websearch?.native === false ? { nativeSearch: undefined } : {}),
            secrets
          }
          return Stream.unwrap(
            Effect.map(
              Effect.tryPromise({
                try: () => load(provider, modelID),
                catch: (error) => toProviderError(error, providerID, modelID, options)
              }),
              (model) => streamWithModel(model, request, options)
            )
          ).pipe(Stream.ensuring(catalog.afterRequest())) // the catalogue refreshes after a request, never before
        }
        return LLM.of({ resolve, stream })
      })
    )

  /** `layerWith(process.env)`. */
  static readonly layer: Layer.Layer<LLM, never, Config> = LLM.layerWith(process.env)
}

/** What `streamWithModel` may know about the provider, for error messages. */
export interface StreamOptions {
  /** How a person fixes a rejected key. */
  readonly keyHint?: string
  /** Which key was sent, in words (see `ClassifyOptions.keyFrom`). */
  readonly keyFrom?: string
  /** The provider's endpoint, for connection failures. */
  readonly url?: string
  /**
   * Whether tool results may carry images (Anthropic, OpenAI; default true). When false (OpenAI-compatible
   * servers), images move to a user message after the results (`liftToolImages`).
   */
  readonly imagesInToolResults?: boolean
  /**
   * How the provider takes prompt caching (its descriptor's `cache` for the model): breakpoints marked on the prompt
   * (Anthropic-family models) or a per-session key (OpenAI). None without it.
   */
  readonly cache?: CacheStrategy | undefined
  /** How the provider asks a model to reason (its descriptor's `reasoning`), for the model's reasoning setting. */
  readonly reasoning?: ProviderDescriptor["reasoning"]
  /** What to check when the endpoint cannot be reached (the descriptor's `hints.connect`). */
  readonly connectHint?: string
  /**
   * Whether the provider takes a JSON Schema for the answer alongside tools (OpenAI's Responses `text.format`,
   * Anthropic's output format, else its JSON-tool fallback): `LLMRequest.answerSchema` is then sent natively.
   */
  readonly structuredOutput?: boolean
  /** The provider's own web search for this model (its descriptor's `nativeSearch`), sent when a step may search. */
  readonly nativeSearch?: NativeTool | undefined
  /** The model ids the provider is known to serve, for "did you mean" when it says the model does not exist. */
  readonly models?: () => Iterable<string>
  /** The credentials to mask in error messages (see `ClassifyOptions.secrets`), read only when a step fails. */
  readonly secrets?: () => ReadonlyArray<string>
  /**
   * The provider type whose caching and reasoning options apply, when `cache` and `reasoning` are not given.
   * @deprecated Pass `cache` and `reasoning` from the provider's descriptor.
   */
  readonly family?: ProviderFamily
}

/**
 * Every credential a provider error could echo, gathered once on first call: `secretValues` of the config and `env`,
 * and each provider's key and header values as its SDK gets them (a key `lathe auth login` stored among them).
 */
const credentialsOf = (
  config: ConfigShape,
  providers: ProviderTable,
  env: ProviderEnv
): (() => ReadonlyArray<string>) => {
  let found: ReadonlyArray<string> | undefined
  return () => {
    found ??= [
      ...secretValues(config, env),
      ...providers
        .used()
        .flatMap((provider) => [
          provider.settings.apiKey ?? "",
          ...Object.values(provider.settings.headers ?? {}).flatMap((value) => [
            value,
            value.trim().split(/\s+/).pop() ?? ""
          ])
        ])
    ].filter((value) => value !== "")
    return found
  }
}

/** What `streamWithModel` knows about `provider`, from its descriptor, for a step of `modelID`. */
const streamOptionsOf = (provider: ConfiguredProvider, modelID: string): StreamOptions => {
  const { descriptor } = provider
  const connectHint = descriptor.hints?.connect
  return {
    keyHint: provider.keyHint,
    url: provider.settings.baseURL ?? "",
    imagesInToolResults: descriptor.imagesInToolResults,
    cache: descriptor.cache?.(modelID),
    reasoning: descriptor.reasoning,
    nativeSearch: descriptor.nativeSearch?.(modelID),
    // Azure's Responses model is OpenAI's (the same `text.format`); its older Chat Completions deployments are not.
    structuredOutput:
      descriptor.type === "openai" ||
      descriptor.type === "anthropic" ||
      (descriptor.type === "azure" && provider.settings.options.useDeploymentBasedUrls !== true),
    // An OpenAI-compatible server's hint says what "is the server running and the base URL right?" already does.
    ...(connectHint && descriptor.type !== "openai-compatible" ? { connectHint } : {}),
    models: () => [...Object.keys(provider.models), ...catalogCandidates(provider.id, descriptor.type)]
  }
}

const toolSets = new WeakMap<LLMRequest["tools"], ToolSet>()

/** The ai SDK tool set of `tools`, built once per `tools` object (the loop passes one object for a whole turn). */
const toolSet = (tools: LLMRequest["tools"]): ToolSet => {
  const cached = toolSets.get(tools)
  if (cached) return cached
  const set: ToolSet = Object.fromEntries(
    Object.entries(tools).map(([name, spec]) => [
      name,
      tool({ description: spec.description, inputSchema: jsonSchema(spec.inputSchema) })
    ])
  )
  toolSets.set(tools, set)
  return set
}

/**
 * The name the provider's own web search has in a request, and so in its calls' tool parts: Anthropic's own name for
 * it, so the calls it replays from history map back to its server tool (a Lathe `websearch` call stays a client call).
 */
export const NATIVE_SEARCH_TOOL = "web_search"

/**
 * The tools of a step: Lathe's, and the provider's own web search ({@link NATIVE_SEARCH_TOOL}) in place of Lathe's
 * `websearch` when the step may search and the provider has one (first, so a prompt-cache mark stays on the last of
 * Lathe's tools).
 */
const stepTools = (request: LLMRequest, options: StreamOptions): ToolSet | undefined => {
  const hasTools = Object.keys(request.tools).length > 0
  const native = request.nativeSearch === true ? options.nativeSearch : undefined
  if (native === undefined) return hasTools ? toolSet(request.tools) : undefined
  const { websearch: _replaced, ...rest } = hasTools ? toolSet(request.tools) : {}
  // The SDK's provider-tool shape as plain data: the provider package builds the request from `id` and `args`.
  const search = { type: "provider", isProviderExecuted: true, id: native.id, args: { ...native.args } } as const
  return { [NATIVE_SEARCH_TOOL]: search as unknown as ToolSet[string], ...rest }
}

/**
 * One step of `request` on an ai SDK model, under the `LLM.stream` contract. Shared by `LLM.layer` and the
 * scripted test layer, so tests exercise the same path as production.
 *
 * The step is one `streamLanguageModelCall` (the single model call `streamText` makes for each of its steps: the
 * same prompt standardisation, tool-call parsing and error normalisation), without `streamText`'s multi-step
 * machinery, whose stream stages and bookkeeping cost about a millisecond per step. Its events are presented as
 * `streamText`'s `fullStream` of one step: `start`, `start-step` before the first part, the parts as they come,
 * then `finish-step` and `finish` once the model's stream has ended with its finish chunk.
 */
export const streamWithModel = (
  model: LanguageModelV4,
  request: LLMRequest,
  options: StreamOptions = {}
): Stream.Stream<LLMEvent, ProviderError> =>
  Stream.unwrap(
    Effect.gen(function* () {
      const clock = yield* Clock.Clock
      const { providerID, modelID } = request.model
      const classify = (error: unknown) =>
        toProviderError(error, providerID, modelID, {
          ...options,
          now: clock.currentTimeMillisUnsafe(),
          aborted: request.abort.aborted
        })
      if (request.abort.aborted) return Stream.fail(classify(new Error("aborted before the request was sent")))
      const internal = new AbortController()
      const abortSignal = AbortSignal.any([request.abort, internal.signal])
      const prompt = {
        instructions: request.system.map((content) => ({ role: "system" as const, content })),
        messages: options.imagesInToolResults === false ? liftToolImages(request.messages) : [...request.messages],
        tools: stepTools(request, options)
      }
      const cache = cacheOf(options)
      const { instructions, messages, tools } = cache?.kind === "breakpoints" ? markCache(prompt, cache.mark) : prompt
      const capped =
        request.outputCap === undefined ? undefined : fitOutputCap(request.outputCap, requestOptions(request, options))
      const providerOptions = capped ? capped.providerOptions : requestOptions(request, options)
      const maxOutputTokens = capped ? capped.maxOutputTokens : request.maxOutputTokens
      const call = streamLanguageModelCall({
        model,
        instructions: [...instructions],
        messages: [...messages],
        allowSystemInMessages: true,
        ...(tools ? { tools } : {}),
        abortSignal,
        ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
        ...(request.topP === undefined ? {} : { topP: request.topP }),
        ...(maxOutputTokens === undefined ? {} : { maxOutputTokens }),
        ...(providerOptions === undefined ? {} : { providerOptions }),
        ...(request.headers === undefined ? {} : { headers: { ...request.headers } }),
        // The answer's shape, natively (the loop still validates what comes back).
        ...(request.answerSchema !== undefined && options.structuredOutput === true
          ? { output: Output.object({ schema: jsonSchema(request.answerSchema) }) }
          : {})
      })
      // Failures surface through the generator below; this keeps an early one from being an unhandled rejection.
      call.catch(() => undefined)
      // A stream read to its end has nothing left to stop: aborting it anyway cost every step a DOMException (its stack
      // captured) and the abort listeners' work. Stopped early (interrupt, failure, a consumer that left), it aborts.
      let complete = false
      // The events come in batches: each holds what the model's stream gives within one turn of the event loop, so a
      // step's events cost the loop a few waits, not one each (a read step had eleven). A batch waits for its first
      // event only: a read still pending when the turn ends (the network's next bytes) starts the next batch.
      async function* events(): AsyncGenerator<NonEmptyArray<LLMEvent>> {
        const { stream, request: sent, response } = await call
        // A model whose stream ignores the signal still stops at once: aborting cancels our read of it.
        const reader = stream.getReader()
        const stop = () => void reader.cancel().catch(() => undefined)
        abortSignal.addEventListener("abort", stop, { once: true })
        let batch: NonEmptyArray<LLMEvent> | undefined = [{ type: "start" }]
        const add = (event: LLMEvent) => {
          if (batch === undefined) batch = [event]
          else batch.push(event)
        }
        /** The batch made so far, delivered (nothing when it is empty). */
        function* deliver() {
          const ready = batch
          batch = undefined
          if (ready !== undefined) yield ready
        }
        let warnings: Array<CallWarning> = []
        let meta: { id?: string | undefined; timestamp?: Date | undefined; modelId?: string | undefined } = {}
        let end: ModelCallEnd | undefined
        let started = false
        /** A read started while a batch was being made and not ready then: the next batch begins with it. */
        let pending: ReturnType<typeof reader.read> | undefined
        /** The end of the event loop's turn in which the batch being made got its first event. */
        let turn: Promise<typeof NOT_READY> | undefined
        try {
          for (;;) {
            const read = pending ?? reader.read()
            pending = undefined
            let next: Awaited<ReturnType<typeof reader.read>> | typeof NOT_READY
            if (batch !== undefined) turn ??= endOfTurn()
            try {
              next = turn === undefined ? await read : await Promise.race([read, turn])
            } catch (error) {
              // What came before a failure is delivered before it.
              yield* deliver()
              throw error
            }
            if (next === NOT_READY) {
              // Awaited by the next batch; marked handled for a consumer that leaves before then.
              pending = read
              read.catch(() => undefined)
              turn = undefined
              yield* deliver()
              continue
            }
            if (abortSignal.aborted) throw new StreamAborted()
            if (next.done) break
            const part = next.value
            if (part.type === "model-call-start") {
              warnings = part.warnings
              continue
            }
            if (!started) {
              started = true
              add({ type: "start-step", request: sent ?? {}, warnings })
            }
            if (part.type === "model-call-response-metadata") meta = { ...meta, ...part }
            else if (part.type === "model-call-end") end = part
            else if (part.type === "error") {
              yield* deliver()
              throw part.error
            } else add(part)
          }
        } finally {
          abortSignal.removeEventListener("abort", stop)
          stop()
        }
        if (end === undefined) {
          yield* deliver()
          throw new StreamCutError()
        }
        add({
          type: "finish-step",
          finishReason: end.finishReason,
          rawFinishReason: end.rawFinishReason,
          usage: end.usage,
          performance: { ...end.performance, stepTimeMs: end.performance.responseTimeMs, toolExecutionMs: {} },
          providerMetadata: end.providerMetadata,
          response: {
            id: meta.id ?? "",
            timestamp: meta.timestamp ?? new Date(clock.currentTimeMillisUnsafe()),
            modelId: meta.modelId ?? modelID,
            ...(response?.headers ? { headers: response.headers } : {})
          }
        })
        add({
          type: "finish",
          finishReason: end.finishReason,
          rawFinishReason: end.rawFinishReason,
          totalUsage: end.usage
        })
        yield* deliver()
        complete = true
      }
      return Stream.fromChannel(Channel.fromAsyncIterable(events(), classify)).pipe(
        Stream.ensuring(
          Effect.sync(() => {
            if (!complete) internal.abort()
          })
        )
      )
    })
  )

/** The cache strategy of `options`: its own, else the one of its (deprecated) `family`'s descriptor. */
const cacheOf = (options: StreamOptions): CacheStrategy | undefined =>
  options.cache ?? (options.family === undefined ? undefined : descriptorOf(options.family)?.cache?.(""))

/**
 * The provider options of one request: what Lathe adds for the provider (a per-session prompt cache key when its
 * cache strategy is `session-key`, the model's reasoning setting as its descriptor maps it), then the request's own
 * (the `chat.params` hook's), which win key by key. `provider` is what `streamWithModel` got (or a provider type).
 */
export const requestOptions = (
  request: LLMRequest,
  provider: Pick<StreamOptions, "cache" | "reasoning" | "family"> | ProviderFamily | undefined
): SharedV4ProviderOptions | undefined => {
  const merged: Record<string, Record<string, unknown>> = {}
  const add = (options: Readonly<Record<string, Readonly<Record<string, unknown>>>>) => {
    for (const [name, values] of Object.entries(options)) merged[name] = { ...merged[name], ...values }
  }
  const options: StreamOptions = typeof provider === "string" ? { family: provider } : (provider ?? {})
  const cache = cacheOf(options)
  if (cache?.kind === "session-key") add(cache.options(request.sessionID))
  const reasoning = options.reasoning ?? (options.family ? descriptorOf(options.family)?.reasoning : undefined)
  if (reasoning !== undefined) add(reasoningOptions({ reasoning }, request.model, request.model.reasoning))
  if (request.providerOptions !== undefined) add(request.providerOptions)
  return Object.keys(merged).length > 0 ? (merged as SharedV4ProviderOptions) : undefined
}

/** An array with at least one element: a batch of events. */
type NonEmptyArray<A> = [A, ...Array<A>]

/** What {@link endOfTurn} gives: the read raced against it was not ready within the turn. */
const NOT_READY: unique symbol = Symbol("not ready")
/**
 * Settles once the event loop's current turn is over (its microtasks, the stream stages' work on bytes already
 * received): raced against a read, the read wins when the model's stream can answer it from what has arrived.
 */
const endOfTurn = (): Promise<typeof NOT_READY> => new Promise((resolve) => setImmediate(resolve, NOT_READY))

class StreamAborted extends Error {
  override readonly name = "AbortError"
}

/** The part that ends a model call: finish reason, usage and timings. */
type ModelCallEnd = Extract<LanguageModelStreamPart<ToolSet>, { readonly type: "model-call-end" }>
