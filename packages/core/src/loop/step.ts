import type { AgentInfo, AnyTool, Ruleset } from "@lathe/plugin"
import type { Part } from "@lathe/plugin/schema"
import { type AssistantMessage, type MessageWithParts, messageErrorFromFailure } from "@lathe/plugin/schema"
import { Clock, Context, Duration, Effect, Exit, Layer, Option } from "effect"
import type { ModelInfo } from "../catalog/model-info.js"
import { Bus } from "../contracts/bus.js"
import { LLM, type LLMRequest } from "../llm/llm.js"
import { toModelMessages } from "../llm/model-messages.js"
import { ProviderError } from "../llm/provider-error.js"
import { Plugins } from "../plugin-host/plugins.js"
import { startupMark } from "../process/startup-marks.js"
import { ascendingId } from "../schema/id.js"
import { SessionStore, type StoreError } from "../store/session-store.js"
import { SessionWriter } from "../store/session-writer.js"
import {
  BudgetExhausted,
  type BudgetLedger,
  budgetedCall,
  budgetMessageError,
  type CallMeter,
  exhaustedStep
} from "./budget.js"
import type { DoomLoopDetected, DoomLoopGuard } from "./doom-loop.js"
import { nativeSearchAllowed } from "./offered-tools.js"
import { Processor, type ProcessorOutput } from "./processor.js"
import { lastStepPrompt } from "./prompts.js"
import { isRetryable, Retry } from "./retry.js"
import { SystemPrompt } from "./system-prompt.js"

/** One step of a turn. */
export interface StepInput {
  readonly assistant: AssistantMessage
  readonly agent: AgentInfo
  readonly model: ModelInfo
  readonly tools: Readonly<Record<string, AnyTool>>
  readonly abort: AbortSignal
  readonly ruleset: Ruleset
  readonly step: number
  readonly guard: DoomLoopGuard
  /** The agent's last allowed step: no tools, and the model is told to wrap up. */
  readonly lastStep: boolean
  /** System messages to use instead of the agent's (the hidden agents). */
  readonly system?: ReadonlyArray<string>
  /** Rulesets of the sessions above (a subagent's parents). */
  readonly constraints?: ReadonlyArray<Ruleset>
  /** Narrows the stored history before it is converted (the summariser leaves out the turn in progress). */
  readonly history?: (messages: ReadonlyArray<MessageWithParts>) => ReadonlyArray<MessageWithParts>
  /** System text added after the agent's (the run's output schema). */
  readonly instructions?: ReadonlyArray<string>
  /** The JSON Schema of the turn's final answer, sent natively where the provider takes one (`LLMRequest`). */
  readonly answerSchema?: LLMRequest["answerSchema"]
  /**
   * The turn's cost budget (shared with its caller's turn for a subagent): each attempt holds its input estimate and
   * its output allowance before the request is sent (which goes out with that allowance as its output limit) and
   * settles its actual cost when its stream ends; a refused attempt ends the step with `BudgetExhausted`.
   */
  readonly budget?: BudgetLedger
}

/** Every way a step can fail (an abort is not a failure: the step stops with the aborted message). */
export type StepError = ProviderError | DoomLoopDetected | StoreError

/** Resolves when `signal` aborts (never, if it does not). */
const aborted = (signal: AbortSignal) =>
  Effect.callback<void>((resume) => {
    if (signal.aborted) return resume(Effect.void)
    const onAbort = () => resume(Effect.void)
    signal.addEventListener("abort", onAbort, { once: true })
    return Effect.sync(() => signal.removeEventListener("abort", onAbort))
  })

// The tools a turn offers are one object for the whole turn: their model-facing specs are built once for it (and
// `LLM` keys its own per-request conversion on the result). A new tool set (another turn, a server's tools that
// arrived since) is a new object, so nothing stale is reused.
const specsByTools = new WeakMap<Readonly<Record<string, AnyTool>>, LLMRequest["tools"]>()

/** The model-facing specs (description and JSON schema) of a tool set, built once per tool set object. */
export const toolSpecs = (tools: Readonly<Record<string, AnyTool>>): LLMRequest["tools"] => {
  const cached = specsByTools.get(tools)
  if (cached) return cached
  const specs: LLMRequest["tools"] = Object.fromEntries(
    Object.values(tools).map((tool) => [
      tool.id,
      { description: tool.description, inputSchema: tool.jsonSchema() as LLMRequest["tools"][string]["inputSchema"] }
    ])
  )
  specsByTools.set(tools, specs)
  return specs
}

/** A retryable error that ended a step once its retries ran out: the message says how many attempts were made. */
const gaveUp = (error: ProviderError, attempts: number): ProviderError =>
  new ProviderError({
    providerID: error.providerID,
    modelID: error.modelID,
    reason: error.reason,
    message: `${error.message} Gave up after ${attempts} attempts.`
  })

/** What `chat.params` may set, as the request carries it. */
interface ChatParams {
  readonly temperature?: number
  readonly topP?: number
  readonly maxOutputTokens?: number
  readonly options: Record<string, unknown>
  readonly headers: Record<string, string>
}

/** The model request of a step, from its parts: the plugins' `chat.params` decide the sampling and extras. */
const modelRequest = (
  input: StepInput,
  system: ReadonlyArray<string>,
  messages: LLMRequest["messages"],
  tools: LLMRequest["tools"],
  params: ChatParams
): LLMRequest => ({
  sessionID: input.assistant.sessionID,
  model: input.model,
  system: [...system],
  messages,
  tools,
  abort: input.abort,
  ...(params.temperature !== undefined ? { temperature: params.temperature } : {}),
  ...(params.topP !== undefined ? { topP: params.topP } : {}),
  ...(params.maxOutputTokens !== undefined ? { maxOutputTokens: params.maxOutputTokens } : {}),
  ...(Object.keys(params.options).length > 0 ? { providerOptions: { [input.model.providerID]: params.options } } : {}),
  ...(Object.keys(params.headers).length > 0 ? { headers: params.headers } : {}),
  ...(input.answerSchema !== undefined ? { answerSchema: input.answerSchema } : {}),
  ...(!input.lastStep && nativeSearchAllowed(input.agent, input.ruleset, input.constraints)
    ? { nativeSearch: true }
    : {})
})

/** The message of a step that ended because the turn was aborted, with `why`. */
const abortedMessage = (assistant: AssistantMessage, why: string, completed?: number): AssistantMessage => ({
  ...assistant,
  error: { name: "Aborted", message: why },
  ...(completed !== undefined ? { time: { ...assistant.time, completed } } : {})
})

/**
 * One step of a turn: stores its assistant message, builds the request (history through `messages.transform`, the
 * system prompt, the tools' specs, `chat.params`), lets the `Processor` consume the model's stream, and retries a
 * retryable failure as `Retry` says (a `retry` part and a `session.status` retry in between; what the failed attempt
 * left is removed, except completed tool calls). A failure that is not retried is recorded on the message and
 * announced as `session.error`.
 */
export class Step extends Context.Service<
  Step,
  {
    /** Runs one step to its end; an abort stops it with the aborted message, never as a failure. */
    readonly run: (input: StepInput) => Effect.Effect<ProcessorOutput, StepError>
  }
>()("@lathe/core/Step") {
  /** The real step over the bound model, processor, system prompt and retry policy. */
  static readonly layer = Layer.effect(
    Step,
    Effect.gen(function* () {
      const store = yield* SessionStore
      const writer = yield* SessionWriter
      const bus = yield* Bus
      const llm = yield* LLM
      const plugins = yield* Plugins
      const processor = yield* Processor
      const system = yield* SystemPrompt
      const retry = yield* Retry

      /** The request for one attempt, from the history as stored now. */
      const request = Effect.fnUntraced(function* (input: StepInput) {
        const { sessionID } = input.assistant
        const stepInput = {
          sessionID,
          agent: input.agent.name,
          model: { providerID: input.model.providerID, modelID: input.model.modelID }
        }
        startupMark("step request")
        const stored = yield* store.messages(sessionID)
        const history = input.history ? input.history(stored) : stored
        const transformed = yield* plugins.trigger("messages.transform", stepInput, { messages: [...history] })
        // Pure CPU work first: on the first step the system prompt waits for `git status`, which runs meanwhile (on
        // a large repository for tens of milliseconds), so the tools' JSON schemas and the messages cost nothing there.
        startupMark("step messages")
        const tools = toolSpecs(input.tools)
        const messages = toModelMessages(transformed.messages, { images: input.model.capabilities.image })
        startupMark("step tools")
        const systemMessages = input.system
          ? [...input.system]
          : [...(yield* system.build({ sessionID, agent: input.agent, model: input.model, ruleset: input.ruleset }))]
        startupMark("step system")
        if (input.instructions) systemMessages.push(...input.instructions)
        if (input.lastStep) systemMessages.push(lastStepPrompt)
        const params = yield* plugins.trigger(
          "chat.params",
          { ...stepInput, modelInfo: input.model },
          {
            ...(input.agent.temperature !== undefined ? { temperature: input.agent.temperature } : {}),
            ...(input.agent.topP !== undefined ? { topP: input.agent.topP } : {}),
            options: {},
            headers: {}
          }
        )
        return modelRequest(input, systemMessages, messages, tools, params)
      })

      /** One attempt: the model's stream through the processor. */
      const consume = (input: StepInput, llmRequest: LLMRequest, meter?: CallMeter) =>
        processor.process({
          assistant: input.assistant,
          agent: input.agent,
          model: input.model,
          tools: input.tools,
          // Under a budget the call's hold is settled as soon as its stream ends, not after the tools (subagents) it
          // called: they, and calls running beside them, can use what it did not spend.
          stream: meter ? meter.watch(llm.stream(llmRequest)) : llm.stream(llmRequest),
          abort: input.abort,
          ruleset: input.ruleset,
          step: input.step,
          guard: input.guard,
          ...(input.constraints ? { constraints: input.constraints } : {})
        })

      /** Removes what a failed attempt left, except completed tool calls (their effects are real). */
      const discardAttempt = Effect.fnUntraced(function* (message: AssistantMessage) {
        const stored = yield* store.getMessage(message.sessionID, message.id).pipe(Effect.option)
        if (Option.isNone(stored)) return
        for (const part of stored.value.parts) {
          if (part.type === "retry" || (part.type === "tool" && part.state.status === "completed")) continue
          yield* writer.removePart(part.sessionID, part.messageID, part.id)
        }
      })

      /** Records `error` on the step's message, announces it, and fails with it. */
      const fail = Effect.fnUntraced(function* (message: AssistantMessage, error: ProviderError | DoomLoopDetected) {
        const stored = yield* store.getMessage(message.sessionID, message.id).pipe(Effect.option)
        const info = Option.isSome(stored) && stored.value.info.role === "assistant" ? stored.value.info : message
        const failed: AssistantMessage = {
          ...info,
          error: messageErrorFromFailure(error),
          time: { ...info.time, completed: yield* Clock.currentTimeMillis }
        }
        yield* writer.putMessage(failed)
        yield* bus.publish({
          type: "session.error",
          sessionID: message.sessionID,
          error: messageErrorFromFailure(error)
        })
        return yield* Effect.fail(error)
      })

      /** Stops the step as aborted: the message records why, and the turn ends without a failure. */
      const stopAborted = Effect.fnUntraced(function* (message: AssistantMessage) {
        yield* writer.putMessage(message)
        return { result: "stop", message, toolsCompleted: false } satisfies ProcessorOutput
      })

      /**
       * Waits out the retry delay after failed attempt number `attempt`, with a `retry` part and the retry status;
       * true when the turn was aborted meanwhile.
       */
      const waitToRetry = Effect.fnUntraced(function* (
        input: StepInput,
        error: ProviderError,
        attempt: number,
        delay: Duration.Duration
      ) {
        const { sessionID } = input.assistant
        yield* discardAttempt(input.assistant)
        const now = yield* Clock.currentTimeMillis
        const retryPart: Part = {
          id: ascendingId("part"),
          sessionID,
          messageID: input.assistant.id,
          type: "retry",
          attempt,
          message: error.message,
          time: { created: now }
        }
        yield* writer.putPart(retryPart)
        const next = now + Duration.toMillis(delay)
        yield* bus.publish({
          type: "session.status",
          sessionID,
          status: { type: "retry", attempt: attempt + 1, message: error.message, next }
        })
        yield* Effect.raceFirst(Effect.sleep(delay), aborted(input.abort))
        yield* bus.publish({ type: "session.status", sessionID, status: { type: "busy" } })
        return input.abort.aborted
      })

      /** Ends the step before its request is sent: the budget cannot cover it (recorded, announced, not a failure). */
      const stopExhausted = Effect.fnUntraced(function* (message: AssistantMessage, error: BudgetExhausted) {
        const ended = exhaustedStep(message, error, yield* Clock.currentTimeMillis)
        yield* writer.putMessage(ended)
        yield* bus.publish({ type: "session.error", sessionID: message.sessionID, error: budgetMessageError(error) })
        return { result: "stop", message: ended, toolsCompleted: false } satisfies ProcessorOutput
      })

      /**
       * One attempt under the turn's budget (see `budgetedCall`): refused, it is not sent and its `BudgetExhausted` is
       * what the step stops with; sent, its output is limited to what the budget holds for it.
       */
      const attemptWithin = (input: StepInput, llmRequest: LLMRequest) =>
        input.budget === undefined
          ? consume(input, llmRequest)
          : budgetedCall(input.budget, llmRequest, (capped, meter) => consume(input, capped, meter))

      const run = Effect.fn("Step.run")(function* (input: StepInput) {
        yield* writer.putMessage(input.assistant)
        for (let attempt = 1; ; attempt++) {
          const exit = yield* Effect.exit(attemptWithin(input, yield* request(input)))
          if (Exit.isSuccess(exit))
            return exit.value instanceof BudgetExhausted
              ? yield* stopExhausted(input.assistant, exit.value)
              : exit.value
          const reason = exit.cause.reasons.find((r) => r._tag === "Fail")
          if (reason?._tag !== "Fail") return yield* Effect.failCause(exit.cause)
          const error = reason.error
          if (error._tag === "StoreError") return yield* Effect.fail(error)
          if (error._tag === "DoomLoopDetected") return yield* fail(input.assistant, error)
          if (input.abort.aborted) return yield* stopAborted(abortedMessage(input.assistant, "The turn was aborted."))
          const delay = yield* retry.delay(error, attempt)
          if (Option.isNone(delay))
            return yield* fail(input.assistant, attempt > 1 && isRetryable(error) ? gaveUp(error, attempt) : error)
          if (yield* waitToRetry(input, error, attempt, delay.value)) {
            const completed = yield* Clock.currentTimeMillis
            const why = "The turn was aborted while waiting to retry."
            return yield* stopAborted(abortedMessage(input.assistant, why, completed))
          }
        }
      })

      return Step.of({ run })
    })
  )
}
