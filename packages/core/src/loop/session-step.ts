import { Clock, Duration, Effect, Exit, Option, Stream } from "effect"
import type { Paths } from "../config/paths.js"
import type { Bus } from "../contracts/bus.js"
import type { Ruleset } from "../contracts/permission-next.js"
import type { AgentInfo } from "../plugin-host/agent.js"
import type { Plugins } from "../plugin-host/plugins.js"
import type { AnyTool } from "../plugin-host/tool.js"
import { type LLM, type LLMRequest, type ModelInfo, ProviderError } from "../provider/llm.js"
import { toModelMessages, visibleHistory } from "../provider/model-messages.js"
import { contextUsed, isOverflow } from "../provider/usage.js"
import { ascendingId } from "../schema/id.js"
import type { AssistantMessage, MessageWithParts, UserMessage } from "../schema/message.js"
import { emptyTokens, type Part } from "../schema/part.js"
import type { SessionStore, StoreError } from "../store/session-store.js"
import { pruneToolOutputs } from "./compaction.js"
import { type DoomLoopGuard, DoomLoopGuard as Guard } from "./doom-loop.js"
import type { DoomLoopDetected, Processor, ProcessorOutput } from "./processor.js"
import { compactionPrompt, lastStepPrompt, titlePrompt } from "./prompts.js"
import { isRetryable, type Retry } from "./retry.js"
import { messageError } from "./session-prompt.js"
import type { SystemPrompt } from "./system-prompt.js"

/** The services a step needs. */
export interface StepServices {
  readonly store: SessionStore["Service"]
  readonly bus: Bus["Service"]
  readonly llm: LLM["Service"]
  readonly plugins: Plugins["Service"]
  readonly processor: Processor["Service"]
  readonly system: SystemPrompt["Service"]
  readonly retry: Retry["Service"]
  readonly paths: Paths["Service"]
}

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
}

/** A compaction to run. */
export interface CompactInput {
  readonly sessionID: string
  /** The turn in progress: messages from here on stay verbatim after the summary. */
  readonly keepFrom: string
  readonly model: ModelInfo
  readonly agents: Map<string, AgentInfo>
  readonly abort: AbortSignal
  readonly auto: boolean
  /** The text of the turn's prompt, repeated after the summary when the whole history (this turn too) is summarised. */
  readonly request?: string
}

/** Runs steps (with retries), compactions and titles for SessionPrompt. */
export interface StepRunner {
  readonly step: (input: StepInput) => Effect.Effect<ProcessorOutput, ProviderError | DoomLoopDetected | StoreError>
  readonly compact: (input: CompactInput) => Effect.Effect<void, ProviderError | DoomLoopDetected | StoreError>
  readonly title: (sessionID: string, text: string, agent: AgentInfo, model: ModelInfo) => Effect.Effect<void>
}

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

/** Builds the step runner over bound services. */
export const makeStepRunner = (services: StepServices): StepRunner => {
  const { store, bus, llm, plugins, processor, system, retry } = services

  const request = Effect.fnUntraced(function* (input: StepInput) {
    const { sessionID } = input.assistant
    const stepInput = {
      sessionID,
      agent: input.agent.name,
      model: { providerID: input.model.providerID, modelID: input.model.modelID }
    }
    const stored = yield* store.messages(sessionID)
    const history = input.history ? input.history(stored) : stored
    const transformed = yield* plugins.trigger("messages.transform", stepInput, { messages: [...history] })
    // Pure CPU work first: on the first step the system prompt waits for `git status`, which runs meanwhile (on a
    // large repository for tens of milliseconds), so the tools' JSON schemas and the messages cost nothing there.
    const tools = toolSpecs(input.tools)
    const messages = toModelMessages(transformed.messages, { images: input.model.capabilities.image })
    const systemMessages = input.system
      ? [...input.system]
      : [...(yield* system.build({ sessionID, agent: input.agent, model: input.model, ruleset: input.ruleset }))]
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
    const llmRequest: LLMRequest = {
      sessionID,
      model: input.model,
      system: systemMessages,
      messages,
      tools,
      abort: input.abort,
      ...(params.temperature !== undefined ? { temperature: params.temperature } : {}),
      ...(params.topP !== undefined ? { topP: params.topP } : {}),
      ...(params.maxOutputTokens !== undefined ? { maxOutputTokens: params.maxOutputTokens } : {}),
      ...(Object.keys(params.options).length > 0
        ? { providerOptions: { [input.model.providerID]: params.options } }
        : {}),
      ...(Object.keys(params.headers).length > 0 ? { headers: params.headers } : {})
    }
    return llmRequest
  })

  /** Removes what a failed attempt left, except completed tool calls (their effects are real). */
  const discardAttempt = Effect.fnUntraced(function* (message: AssistantMessage) {
    const stored = yield* store.getMessage(message.sessionID, message.id).pipe(Effect.option)
    if (Option.isNone(stored)) return
    for (const part of stored.value.parts) {
      if (part.type === "retry" || (part.type === "tool" && part.state.status === "completed")) continue
      yield* store.removePart(part.sessionID, part.messageID, part.id)
      yield* bus.publish({
        type: "part.removed",
        sessionID: part.sessionID,
        messageID: part.messageID,
        partID: part.id
      })
    }
  })

  const fail = Effect.fnUntraced(function* (message: AssistantMessage, error: ProviderError | DoomLoopDetected) {
    const stored = yield* store.getMessage(message.sessionID, message.id).pipe(Effect.option)
    const info = Option.isSome(stored) && stored.value.info.role === "assistant" ? stored.value.info : message
    const failed: AssistantMessage = {
      ...info,
      error: messageError(error),
      time: { ...info.time, completed: yield* Clock.currentTimeMillis }
    }
    yield* store.putMessage(failed)
    yield* bus.publish({ type: "message.updated", message: failed })
    yield* bus.publish({ type: "session.error", sessionID: message.sessionID, error: messageError(error) })
    return yield* Effect.fail(error)
  })

  const step = Effect.fn("SessionPrompt.step")(function* (input: StepInput) {
    const { sessionID } = input.assistant
    yield* store.putMessage(input.assistant)
    yield* bus.publish({ type: "message.updated", message: input.assistant })
    for (let attempt = 1; ; attempt++) {
      const llmRequest = yield* request(input)
      const exit = yield* Effect.exit(
        processor.process({
          assistant: input.assistant,
          agent: input.agent,
          model: input.model,
          tools: input.tools,
          stream: llm.stream(llmRequest),
          abort: input.abort,
          ruleset: input.ruleset,
          step: input.step,
          guard: input.guard,
          ...(input.constraints ? { constraints: input.constraints } : {}),
          rulesFor: (files) => system.nested(sessionID, files)
        })
      )
      if (Exit.isSuccess(exit)) return exit.value
      const reason = exit.cause.reasons.find((r) => r._tag === "Fail")
      if (reason?._tag !== "Fail") return yield* Effect.failCause(exit.cause)
      const error = reason.error
      if (error._tag === "StoreError") return yield* Effect.fail(error)
      if (error._tag === "DoomLoopDetected") return yield* fail(input.assistant, error)
      if (input.abort.aborted) {
        const message: AssistantMessage = {
          ...input.assistant,
          error: { name: "Aborted", message: "The turn was aborted." }
        }
        yield* store.putMessage(message)
        yield* bus.publish({ type: "message.updated", message })
        return { result: "stop", message, toolsCompleted: false } satisfies ProcessorOutput
      }
      const delay = yield* retry.delay(error, attempt)
      if (Option.isNone(delay))
        return yield* fail(input.assistant, attempt > 1 && isRetryable(error) ? gaveUp(error, attempt) : error)
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
      yield* store.putPart(retryPart)
      yield* bus.publish({ type: "part.updated", part: retryPart })
      const wait = Duration.toMillis(delay.value)
      yield* bus.publish({
        type: "session.status",
        sessionID,
        status: { type: "retry", attempt: attempt + 1, message: error.message, next: now + wait }
      })
      yield* Effect.raceFirst(Effect.sleep(delay.value), aborted(input.abort))
      yield* bus.publish({ type: "session.status", sessionID, status: { type: "busy" } })
      if (input.abort.aborted) {
        const message: AssistantMessage = {
          ...input.assistant,
          error: { name: "Aborted", message: "The turn was aborted while waiting to retry." },
          time: { ...input.assistant.time, completed: yield* Clock.currentTimeMillis }
        }
        yield* store.putMessage(message)
        yield* bus.publish({ type: "message.updated", message })
        return { result: "stop", message, toolsCompleted: false } satisfies ProcessorOutput
      }
    }
  })

  const compact = Effect.fn("SessionPrompt.compact")(function* (input: CompactInput) {
    const { sessionID } = input
    const agent = input.agents.get("compaction")
    const messages = yield* store.messages(sessionID)
    const hasOlder = visibleHistory(messages).some((m) => m.info.id < input.keepFrom)
    const keepFrom = hasOlder ? input.keepFrom : undefined
    const freed = yield* pruneToolOutputs(store, bus, messages, keepFrom)
    // Automatic compaction: pruning alone is enough when it brings the last step's context back under the limit.
    const lastTokens = messages.findLast((m) => m.info.role === "assistant" && !m.info.summary)?.info
    if (input.auto && lastTokens?.role === "assistant") {
      const used = contextUsed(lastTokens.tokens) - freed
      const tokens = { ...emptyTokens(), input: Math.max(0, used) }
      if (freed > 0 && !isOverflow(tokens, input.model)) return
    }
    if (!agent) return
    const now = yield* Clock.currentTimeMillis
    const user: UserMessage = {
      id: ascendingId("message"),
      sessionID,
      role: "user",
      time: { created: now },
      agent: "compaction",
      model: { providerID: input.model.providerID, modelID: input.model.modelID }
    }
    yield* store.putMessage(user)
    const marker: Part = {
      id: ascendingId("part"),
      sessionID,
      messageID: user.id,
      type: "compaction",
      auto: input.auto,
      ...(keepFrom ? { keepFrom } : {})
    }
    yield* store.putPart(marker)
    yield* bus.publish({ type: "message.updated", message: user })
    yield* bus.publish({ type: "part.updated", part: marker })
    const hook = yield* plugins.trigger("session.compacting", { sessionID }, { context: [] })
    const rules = yield* system.rules(sessionID)
    const summary: AssistantMessage = {
      id: ascendingId("message"),
      sessionID,
      role: "assistant",
      parentID: user.id,
      agent: "compaction",
      model: { providerID: input.model.providerID, modelID: input.model.modelID },
      path: { cwd: services.paths.directory, root: services.paths.root },
      time: { created: yield* Clock.currentTimeMillis },
      tokens: emptyTokens(),
      cost: 0,
      summary: true
    }
    // The summariser sees the history up to the turn in progress (which stays verbatim), then the request.
    yield* step({
      assistant: summary,
      agent,
      model: input.model,
      tools: {},
      abort: input.abort,
      ruleset: agent.permission,
      step: 1,
      guard: new Guard({ threshold: 0, ignoredTools: [] }),
      lastStep: false,
      system: [hook.prompt ?? compactionPrompt, ...rules, ...hook.context],
      history: (all) => all.filter((m) => keepFrom === undefined || m.info.id < keepFrom || m.info.id >= user.id)
    })
    if (!keepFrom) {
      // Everything was summarised: ask the model to go on from the summary.
      const next: UserMessage = {
        ...user,
        id: ascendingId("message"),
        agent: "build",
        time: { created: yield* Clock.currentTimeMillis }
      }
      yield* store.putMessage(next)
      const text: Part = {
        id: ascendingId("part"),
        sessionID,
        messageID: next.id,
        type: "text",
        synthetic: true,
        text:
          "Continue the task from the summary above. If it is already done, say so briefly." +
          (input.request ? `\nThe request being worked on was:\n${input.request}` : "")
      }
      yield* store.putPart(text)
      yield* bus.publish({ type: "message.updated", message: next })
      yield* bus.publish({ type: "part.updated", part: text })
    }
    yield* bus.publish({ type: "session.compacted", sessionID, messageID: summary.id })
  })

  const title = (sessionID: string, text: string, agent: AgentInfo, model: ModelInfo) =>
    Effect.gen(function* () {
      const controller = new AbortController()
      let answer = ""
      yield* llm
        .stream({
          sessionID,
          model,
          system: [titlePrompt],
          messages: [{ role: "user", content: text.slice(0, 4_000) }],
          tools: {},
          abort: controller.signal,
          ...(agent.temperature !== undefined ? { temperature: agent.temperature } : {})
        })
        .pipe(
          Stream.runForEach((event) =>
            Effect.sync(() => {
              if (event.type === "text-delta") answer += event.text
            })
          ),
          Effect.onInterrupt(() => Effect.sync(() => controller.abort()))
        )
      const cleaned = answer
        .replace(/<think>[\s\S]*?<\/think>/g, "")
        .trim()
        .split("\n")[0]
        ?.replace(/^["']|["']$/g, "")
      if (!cleaned) return
      const session = yield* store.getSession(sessionID)
      const named = { ...session, title: cleaned.slice(0, 80) }
      yield* store.putSession(named)
      yield* bus.publish({ type: "session.updated", session: named })
    }).pipe(Effect.ignore)

  return { step, compact, title }
}
