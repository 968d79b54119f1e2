import type { AgentInfo, Ruleset } from "@lathe/plugin"
import type { AssistantMessage, MessageWithParts, PromptPart, Session, UserMessage } from "@lathe/plugin/schema"
import { Clock, Context, Effect, Layer, type Scope } from "effect"
import { assumedModelNotice } from "../catalog/model-catalog.js"
import type { ModelInfo } from "../catalog/model-info.js"
import { Config } from "../config/config.js"
import { Paths } from "../config/paths.js"
import { Bus } from "../contracts/bus.js"
import { PermissionDefaults } from "../contracts/permission-next.js"
import { LLM } from "../llm/llm.js"
import { isOverflow } from "../llm/usage.js"
import { resolveAgents } from "../plugin-host/agent.js"
import { Plugins } from "../plugin-host/plugins.js"
import { truncationDir } from "../plugin-host/truncate.js"
import { ascendingId } from "../schema/id.js"
import { DEFAULT_SESSION_TITLE } from "../store/session.js"
import { recoverSession } from "../store/session-recover.js"
import { commitRevert } from "../store/session-revert.js"
import { SessionStore } from "../store/session-store.js"
import { SessionWriter } from "../store/session-writer.js"
import { AgentSwitch, switchTurnAgent } from "./agent-switch.js"
import { Budget, type BudgetLedger, budgetStopNote, turnBudget } from "./budget.js"
import { Compaction } from "./compaction.js"
import { DoomLoopGuard, defaultDoomLoop, repeatingTools } from "./doom-loop.js"
import { subagentRules, turnTools } from "./offered-tools.js"
import { assembleRuleset } from "./permission-ruleset.js"
import { Processor } from "./processor.js"
import {
  AgentNotFound,
  type CompactError,
  type CompactRequest,
  type PromptError,
  type PromptInput,
  SessionBusy
} from "./prompt-input.js"
import { makeTurnHooks } from "./session-hooks.js"
import { sessionSummary } from "./session-summary-agent.js"
import { Step } from "./step.js"
import { recordStepLimit, stepCap } from "./step-limit.js"
import { checkFinal, nativeSchema, outputInstructions } from "./structured-output.js"
import { SubagentFailed, type SubagentRequest, Subagents } from "./subagents.js"
import { Title } from "./title.js"
import {
  assistantMessage,
  childResult,
  childSession,
  promptParts,
  storedPromptParts,
  userMessage
} from "./user-prompt.js"

/** A piece of a prompt as a person gives it (defined beside the plugin API, which contributes them too). */
export type { PromptPart } from "@lathe/plugin/schema"
export {
  AgentNotFound,
  type CompactError,
  type CompactRequest,
  type PromptError,
  type PromptInput,
  SessionBusy
} from "./prompt-input.js"

/**
 * The outer loop: stores the prompt, then repeats (assemble the system prompt and tools for the agent, call
 * the model, let the Processor consume the step) until the model stops calling tools, a permission is
 * rejected, an error is not retryable, the turn is aborted, or the step cap is reached (config `max_steps`,
 * default 200: the last step offers no tools, and the turn ends with a `StepLimit` error);
 * compacts history when the context fills up.
 */
export class SessionPrompt extends Context.Service<
  SessionPrompt,
  {
    /** Runs one turn; returns the last assistant message with its parts. */
    readonly prompt: (input: PromptInput) => Effect.Effect<MessageWithParts, PromptError>
    /**
     * Stores a prompt as a user message now, without running a turn: a turn running in the session sees it from its
     * next step (the person steers it). Answer it later with `prompt({ sessionID, messageID, parts: [] })` if the
     * running turn ended without answering it.
     */
    readonly append: (input: PromptInput) => Effect.Effect<UserMessage, PromptError>
    /** Aborts the session's running turn, if any. */
    readonly cancel: (sessionID: string) => Effect.Effect<void>
    /**
     * Summarises the session's whole history now (the person asked for it): the model then sees the summary
     * instead of the older messages. Fails with SessionBusy while a turn runs.
     */
    readonly compact: (input: CompactRequest) => Effect.Effect<void, CompactError>
  }
>()("@lathe/core/SessionPrompt") {
  /** The real turn, over the loop's `Step`, `Compaction` and `Title` (see `loopLayer` for the whole loop). */
  static readonly layer = Layer.effect(
    SessionPrompt,
    Effect.suspend(() => makeSessionPrompt)
  )
}

/** What a turn runs with, once its prompt is stored. */
interface TurnContext {
  readonly sessionID: string
  readonly agent: AgentInfo
  readonly agents: Map<string, AgentInfo>
  readonly model: ModelInfo
  readonly input: PromptInput
  readonly abort: AbortSignal
  readonly user: UserMessage
  readonly session: Session
  /** The prompt's text, repeated after a summary of the whole history. */
  readonly promptText: string
  /** The turn's budget (its caller's, for a subagent), when a cap applies. */
  readonly budget: BudgetLedger | undefined
}

/** The title a session gets from its first prompt at once (the title agent's comes later): its first line, cut. */
const quickTitle = (session: Session, firstText: string, fresh: boolean): { readonly title?: string } =>
  fresh && firstText && session.title === DEFAULT_SESSION_TITLE
    ? { title: firstText.split("\n")[0]?.slice(0, 50) ?? session.title }
    : {}

/** A failure of a subagent's run as the `SubagentFailed` the task tool reports. */
const asSubagentFailure = (agent: string, error: { readonly _tag: string; readonly message: string }) =>
  error._tag === "SubagentFailed"
    ? (error as SubagentFailed)
    : new SubagentFailed({ agent, message: `The ${agent} subagent failed: ${error.message}` })

/** The services a turn runs on, bound once by `makeSessionPrompt`. */
interface TurnServices {
  readonly store: SessionStore["Service"]
  readonly writer: SessionWriter["Service"]
  readonly bus: Bus["Service"]
  readonly llm: LLM["Service"]
  readonly config: Config["Service"]
  readonly plugins: Plugins["Service"]
  readonly paths: Paths["Service"]
  readonly step: Step["Service"]
  readonly processor: Processor["Service"]
  readonly agentSwitch: AgentSwitch["Service"]
  readonly compaction: Compaction["Service"]
  readonly title: Title["Service"]
  /** The permission rules every agent starts from. */
  readonly defaults: Ruleset
  /** The layer's scope: a session's title is generated on it, outliving the turn that asked for it. */
  readonly scope: Scope.Scope
  /** Recovery and undo are store functions: they run on the store and writer bound here, once. */
  readonly storage: Context.Context<SessionStore | SessionWriter>
  readonly hooks: ReturnType<typeof makeTurnHooks>
}

/** The agent a prompt names, else the session's while it can take a prompt, else the default; checked. */
const pickAgent = Effect.fnUntraced(function* (
  { config, bus }: TurnServices,
  input: PromptInput,
  session: Session,
  agents: Map<string, AgentInfo>
) {
  const fallback = config.info.default_agent ?? "build"
  const primary = (a: AgentInfo | undefined): a is AgentInfo => a !== undefined && !a.hidden && a.mode !== "subagent"
  // The session's agent, unless it can no longer take a prompt (removed from config, or a subagent stored by a
  // mention before mentions ran for one prompt only): then the default answers, and the person is told.
  const stored = session.agent === undefined ? undefined : agents.get(session.agent)
  const sessionAgent = primary(stored) ? stored.name : fallback
  const agentName = input.agent ?? sessionAgent
  const agent = agents.get(agentName)
  const usable = (a: AgentInfo) => !a.hidden && (input.allowSubagents ? a.mode !== "primary" : a.mode !== "subagent")
  if (!agent || !usable(agent)) {
    const names = [...agents.values()].filter(usable).map((a) => a.name)
    return yield* new AgentNotFound({
      agent: agentName,
      message: `No agent "${agentName}" can take a prompt. Available agents: ${names.sort().join(", ")}.`
    })
  }
  if (input.agent === undefined && session.agent !== undefined && session.agent !== agentName)
    yield* bus.publish({
      type: "notice",
      level: "warn",
      message:
        `Session ${session.id}'s agent "${session.agent}" cannot take a prompt ` +
        `(${stored === undefined ? "no agent has that name now" : "it is a subagent"}); the "${agentName}" agent ` +
        `answers instead.`
    })
  return { agent, sessionAgent }
})

/** The session, agents, agent and model a prompt runs with (the agent and model checked). */
const resolvePrompt = Effect.fnUntraced(function* (services: TurnServices, input: PromptInput) {
  const { store, plugins, config, llm, paths, bus } = services
  const session = yield* store.getSession(input.sessionID)
  const agents = resolveAgents(plugins.agents, config.info.agent)
  const { agent, sessionAgent } = yield* pickAgent(services, input, session, agents)
  // A subagent with no model of its own runs on its caller's: the turn that started it, else (a mention) the
  // model the session's own agent would have used.
  const inherited = input.allowSubagents ? (input.inheritedModel ?? agents.get(sessionAgent)?.model) : undefined
  const resolved = yield* llm.resolve(input.model ?? agent.model ?? inherited)
  // Once per model, remembered across runs: the limits Lathe guessed, and how to set them.
  const assumed = assumedModelNotice(resolved, {
    dataDir: paths.data,
    configDir: paths.config,
    silenced: config.info.models?.notice === false
  })
  if (assumed !== undefined) yield* bus.publish({ type: "notice", level: "warn", message: assumed })
  const reasoning = input.variant ?? config.info.agent?.[agent.name]?.reasoning ?? resolved.reasoning
  const model: ModelInfo = reasoning === undefined ? resolved : { ...resolved, reasoning }
  return { session, agents, agent, model }
})

/** Stores a person's prompt as a user message with its parts (and publishes them); `id` when the caller chose it. */
const storeUser = Effect.fnUntraced(function* (
  writer: SessionWriter["Service"],
  sessionID: string,
  agent: AgentInfo,
  model: ModelInfo,
  parts: ReadonlyArray<PromptPart>,
  id?: string,
  mention?: string
) {
  const user = userMessage(sessionID, agent, model, yield* Clock.currentTimeMillis, id)
  yield* writer.putMessage(user)
  for (const part of promptParts(sessionID, user.id, parts, mention)) yield* writer.putPart(part)
  return user
})

/**
 * Opens a turn: closes what a dead process left open, makes an undo final, stores (or finds) the prompt, runs the
 * prompt hooks, and names the session. Undefined when a hook withdrew the prompt.
 */
const openTurn = Effect.fnUntraced(function* (
  services: TurnServices,
  sessionID: string,
  agent: AgentInfo,
  model: ModelInfo,
  input: PromptInput,
  agents: Map<string, AgentInfo>,
  budget: BudgetLedger | undefined
) {
  const { store, writer, bus, storage, hooks, title, scope } = services
  // A step a dead process left open is closed first, so the history sent to the model is well-formed.
  yield* recoverSession(sessionID).pipe(Effect.provide(storage))
  // A new prompt after an undo makes the undo final: the hidden messages go.
  yield* commitRevert(sessionID).pipe(Effect.provide(storage))
  const now = yield* Clock.currentTimeMillis
  const stored = yield* store.messages(sessionID)
  // A prompt stored earlier (`append`, while another turn ran) is answered as it is; otherwise the parts are stored.
  const existing = input.messageID
    ? stored.find((m) => m.info.id === input.messageID && m.info.role === "user")
    : undefined
  const user: UserMessage =
    existing?.info.role === "user"
      ? existing.info
      : yield* storeUser(writer, sessionID, agent, model, input.parts, input.messageID, input.mention)
  const history = stored.filter((m) => m.info.id < user.id)
  const parts = existing ? storedPromptParts(existing) : input.parts
  yield* bus.publish({ type: "session.started", sessionID, messageID: user.id })
  yield* bus.publish({ type: "session.status", sessionID, status: { type: "busy" } })

  const session = yield* store.getSession(sessionID)
  const promptText = parts.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("\n")
  // Plugins see the prompt before the model does: they may add context to it, or withdraw it.
  const said = parts.flatMap((part) => (part.type === "text" && !part.synthetic ? [part.text] : [])).join("\n")
  if (yield* hooks.beforePrompt(session, agent, user.id, said, history.length === 0)) return { user, opened: undefined }
  const firstText = parts.find((part) => part.type === "text")?.text.trim() ?? ""
  // A subagent's prompt (a mention; a task's child session was made with its agent) leaves the session's agent.
  const kept = input.allowSubagents ? {} : { agent: agent.name }
  const titled = quickTitle(session, firstText, history.length === 0)
  yield* writer.updateSession({ ...session, ...titled, ...kept, time: { ...session.time, updated: now } })
  const titleAgent = agents.get("title")
  if (history.length === 0 && firstText && input.title !== false && titleAgent) {
    // A title needs no thinking: the turn's reasoning setting is not sent with it.
    const { reasoning: _, ...titleModel } = model
    yield* Effect.forkIn(title.generate(sessionID, firstText, titleAgent, titleModel, budget), scope)
  }
  return { user, opened: { session, history, promptText } }
})

/** Compacts the history before the turn in progress, when the config lets the loop do it on its own. */
const autoCompact = (services: TurnServices, turn: TurnContext, request?: string) =>
  services.compaction.compact({
    sessionID: turn.sessionID,
    keepFrom: turn.user.id,
    model: turn.model,
    agents: turn.agents,
    abort: turn.abort,
    auto: true,
    ...(request !== undefined ? { request } : {}),
    ...(turn.budget ? { budget: turn.budget } : {})
  })

/**
 * The turn's steps, until the model stops calling tools (and no `turn.stop` hook sends it on), a call is blocked,
 * the turn is aborted, or the step cap is reached; compacts in between when the context filled up. Returns the
 * last step's message.
 */
const runSteps = Effect.fnUntraced(function* (services: TurnServices, turn: TurnContext) {
  const { config, plugins, defaults, paths, step, writer, bus, hooks } = services
  // Both change when a tool hands the session to another agent (`plan_exit`): see the end of a step below.
  let { agent, model } = turn
  const { abort, input } = turn
  const guard = new DoomLoopGuard({
    threshold: config.info.doom_loop?.threshold ?? defaultDoomLoop.threshold,
    ignoredTools: config.info.doom_loop?.ignored_tools ?? repeatingTools(plugins.tools)
  })
  const rulesOf = (of: AgentInfo): Ruleset =>
    assembleRuleset({
      defaults,
      agent: of.permission,
      config: config.info.permission,
      truncationDir: truncationDir(paths.data),
      extraRules: input.extraRules
    })
  let ruleset = rulesOf(agent)
  let offer = turnTools(agent, ruleset, input.callerTools)
  // The turn's cap on steps (the agent's, else config max_steps, else 200): the last one is asked to wrap up.
  const cap = stepCap(input.maxSteps ?? agent.maxSteps, config.info.max_steps)
  const instructions = input.outputSchema ? [outputInstructions(input.outputSchema)] : undefined
  const answerSchema = input.outputSchema ? nativeSchema(input.outputSchema) : undefined
  let last: AssistantMessage | undefined
  let continued = 0
  let resent = 0
  for (let number = 1; ; number++) {
    if (abort.aborted) break
    const lastStep = cap !== undefined && number >= cap
    const tools = offer(plugins.tools)
    const assistant = assistantMessage(
      turn.user,
      agent,
      model,
      { cwd: paths.directory, root: paths.root },
      yield* Clock.currentTimeMillis
    )
    const output = yield* step.run({
      assistant,
      agent,
      model,
      tools: lastStep ? {} : tools,
      abort,
      ruleset,
      step: number,
      guard,
      lastStep,
      ...(input.constraints ? { constraints: input.constraints } : {}),
      ...(instructions ? { instructions } : {}),
      ...(answerSchema ? { answerSchema } : {}),
      ...(turn.budget ? { budget: turn.budget } : {})
    })
    last = output.message
    // A tool handed the session to another agent (the person approved `plan_exit`): the turn goes on as that agent.
    const handed = yield* services.agentSwitch.take(turn.sessionID)
    const next =
      handed && !input.allowSubagents ? yield* switchTurnAgent(services, { ...turn, agent, model }, handed) : undefined
    if (next) {
      agent = next.agent
      model = next.model
      ruleset = rulesOf(agent)
      offer = turnTools(agent, ruleset, input.callerTools)
    }
    if (lastStep && !abort.aborted) last = yield* recordStepLimit(writer, bus, last, number)
    // A plugin may send a turn the model ended on with an instruction, a few times at most.
    if (
      output.result === "stop" &&
      !lastStep &&
      !abort.aborted &&
      (yield* hooks.goOn(turn.session, agent, model, output.message, continued))
    ) {
      continued++
      continue
    }
    if (output.result === "stop" && input.outputSchema && !lastStep && !abort.aborted && !last.error) {
      const sendBack = (text: string) =>
        storeUser(writer, turn.sessionID, agent, model, [{ type: "text", text }]).pipe(Effect.asVoid)
      const checked = yield* checkFinal(services, input.outputSchema, last, resent, sendBack)
      last = checked.message
      if (checked.resent) {
        resent++
        continue
      }
    }
    if (output.result === "stop" || lastStep) break
    // `compaction.auto: false` turns off the automatic compaction only: the turn goes on with the history as it is
    // (the person compacts by hand; a provider that finds it too long says so).
    if (output.result === "compact" && config.info.compaction?.auto !== false)
      yield* autoCompact(services, turn, turn.promptText)
  }
  return last
})

/** The child session a subagent runs in: the one the request continues (if it is this session's), else a new one. */
const openChild = Effect.fnUntraced(function* (services: TurnServices, request: SubagentRequest) {
  const { store, writer, paths } = services
  if (request.sessionID) {
    const existing = yield* store.getSession(request.sessionID).pipe(Effect.option)
    if (existing._tag === "None" || existing.value.parentID !== request.parentSessionID)
      return yield* new SubagentFailed({
        agent: request.agent,
        message: `Session ${request.sessionID} is not a subagent session of this session; omit session_id to start one.`
      })
    return request.sessionID
  }
  const child = childSession(request, paths, yield* Clock.currentTimeMillis)
  yield* writer.createSession(child, request.callID ? { callID: request.callID } : {})
  return child.id
})

/** The real turn over the services bound here, once; the parts of a turn above take them as `services`. */
const makeSessionPrompt = Effect.gen(function* () {
  const writer = yield* SessionWriter
  const bus = yield* Bus
  const plugins = yield* Plugins
  const services: TurnServices = {
    store: yield* SessionStore,
    writer,
    bus,
    llm: yield* LLM,
    config: yield* Config,
    plugins,
    paths: yield* Paths,
    step: yield* Step,
    processor: yield* Processor,
    agentSwitch: yield* AgentSwitch,
    compaction: yield* Compaction,
    title: yield* Title,
    defaults: yield* PermissionDefaults,
    scope: yield* Effect.scope,
    storage: yield* Effect.context<SessionStore | SessionWriter>(),
    hooks: makeTurnHooks({ plugins, writer, bus, storeUser: (...args) => storeUser(writer, ...args) })
  }
  const { store, llm, config, compaction } = services
  const subagents = yield* Subagents
  const running = new Map<string, AbortController>()
  /** The `provider/model` of each running turn, by session: what a subagent it starts inherits. */
  const turnModels = new Map<string, string>()
  /** The budget of each running turn that has one, by session: what a subagent it starts draws on. */
  const turnLedgers = new Map<string, BudgetLedger>()
  const budgets = yield* Budget

  const append = Effect.fn("SessionPrompt.append")(function* (input: PromptInput) {
    const { session, agent, model } = yield* resolvePrompt(services, input)
    return yield* storeUser(writer, session.id, agent, model, input.parts, input.messageID, input.mention)
  })

  /**
   * Marks a session busy until `release` runs: a turn on `model` (what its subagents inherit), or a compaction
   * (no model). The work's signal follows the caller's `abort` from now on (a turn's also when it already fired).
   */
  const claim = (sessionID: string, model: ModelInfo | undefined, abort: AbortSignal | undefined) => {
    const controller = new AbortController()
    const onAbort = () => controller.abort()
    abort?.addEventListener("abort", onAbort, { once: true })
    if (model && abort?.aborted) controller.abort()
    running.set(sessionID, controller)
    if (model) turnModels.set(sessionID, `${model.providerID}/${model.modelID}`)
    const release = Effect.sync(() => {
      running.delete(sessionID)
      turnModels.delete(sessionID)
      abort?.removeEventListener("abort", onAbort)
    })
    return { signal: controller.signal, release }
  }

  /** Fails with SessionBusy while the session runs a turn (or a compaction). */
  const ensureIdle = (sessionID: string, message: string) =>
    running.has(sessionID) ? Effect.fail(new SessionBusy({ sessionID, message })) : Effect.void

  const prompt = Effect.fn("SessionPrompt.prompt")(function* (input: PromptInput) {
    const found = yield* store.getSession(input.sessionID)
    yield* ensureIdle(
      found.id,
      `Session ${found.id} is already working on a prompt; wait for it to finish or cancel it.`
    )
    const { session, agents, agent, model } = yield* resolvePrompt(services, input)
    const ledger = yield* turnBudget(services, budgets, session, model, input)
    const { signal, release } = claim(session.id, model, input.abort)
    if (ledger) turnLedgers.set(session.id, ledger)
    return yield* turn(session.id, agent, model, input, signal, agents, ledger).pipe(
      Effect.tap(() => sessionSummary(services, session, agents.get("summary"), model, signal, ledger)),
      Effect.ensuring(
        Effect.gen(function* () {
          yield* release
          turnLedgers.delete(session.id)
          yield* store.flush.pipe(Effect.ignore)
          yield* bus.publish({ type: "session.status", sessionID: session.id, status: { type: "idle" } })
          yield* bus.publish({ type: "session.idle", sessionID: session.id })
        })
      )
    )
  })

  const turn = Effect.fnUntraced(function* (
    sessionID: string,
    agent: AgentInfo,
    model: ModelInfo,
    input: PromptInput,
    abort: AbortSignal,
    agents: Map<string, AgentInfo>,
    budget: BudgetLedger | undefined
  ) {
    const { user, opened } = yield* openTurn(services, sessionID, agent, model, input, agents, budget)
    if (opened === undefined) return { info: user, parts: [] } satisfies MessageWithParts
    const context: TurnContext = { sessionID, agent, agents, model, input, abort, user, budget, ...opened }
    // A previous turn that ended over the limit is compacted before this one starts.
    const lastAssistant = opened.history.findLast((m) => m.info.role === "assistant")?.info
    if (
      lastAssistant?.role === "assistant" &&
      isOverflow(lastAssistant.tokens, model) &&
      config.info.compaction?.auto !== false
    )
      yield* autoCompact(services, context)
    // A step's patch may still be being recorded (see `Processor.settled`): the turn ends once it is stored.
    const last = yield* runSteps(services, context).pipe(Effect.ensuring(services.processor.settled(sessionID)))
    if (!last) return { info: user, parts: [] } satisfies MessageWithParts
    return yield* store.getMessage(sessionID, last.id)
  })

  const cancel = (sessionID: string) => Effect.sync(() => running.get(sessionID)?.abort())

  /** Runs a subagent in a child session (new, or continued by id) and sums up what this run of it did. */
  const runChild = (request: SubagentRequest) =>
    Effect.gen(function* () {
      const sessionID = yield* openChild(services, request)
      if (request.onStart) yield* request.onStart(sessionID)
      const before = new Set((yield* store.messages(sessionID)).map((m) => m.info.id))
      const inheritedModel = turnModels.get(request.parentSessionID)
      const budget = turnLedgers.get(request.parentSessionID)
      const last = yield* prompt({
        sessionID,
        parts: [{ type: "text", text: request.prompt }],
        agent: request.agent,
        ...(inheritedModel ? { inheritedModel } : {}),
        abort: request.abort,
        title: false,
        allowSubagents: true,
        constraints: request.constraints,
        callerTools: request.callerTools,
        // No recursion and no todo list of its own: the caller plans.
        extraRules: subagentRules(plugins.tools),
        ...(budget ? { budget } : {})
      })
      const fresh = (yield* store.messages(sessionID)).filter((m) => !before.has(m.info.id))
      // A subagent the budget stopped still returns (what it spent rolls up into the caller's message), saying so.
      return budgetStopNote(last, request.agent, childResult(sessionID, fresh))
    }).pipe(
      Effect.catch((error: { readonly _tag: string; readonly message: string }) =>
        Effect.fail(asSubagentFailure(request.agent, error))
      )
    )

  // Late-bound: the tools (through ToolRunner) run subagents, and a subagent is a turn of this service.
  yield* subagents.register(runChild)

  const compact = Effect.fn("SessionPrompt.compact")(function* (request: CompactRequest) {
    const session = yield* store.getSession(request.sessionID)
    yield* ensureIdle(session.id, `Session ${session.id} is working on a prompt; compact it when the turn has ended.`)
    const agents = resolveAgents(plugins.agents, config.info.agent)
    const agent = agents.get(session.agent ?? config.info.default_agent ?? "build")
    const model = yield* llm.resolve(request.model ?? agent?.model)
    const { signal, release } = claim(session.id, undefined, request.abort)
    yield* bus.publish({ type: "session.status", sessionID: session.id, status: { type: "busy" } })
    // keepFrom is newer than every message: the whole history is summarised.
    const keepFrom = ascendingId("message")
    yield* compaction.compact({ sessionID: session.id, keepFrom, model, agents, abort: signal, auto: false }).pipe(
      Effect.ensuring(
        Effect.gen(function* () {
          yield* release
          yield* store.flush.pipe(Effect.ignore)
          yield* bus.publish({ type: "session.status", sessionID: session.id, status: { type: "idle" } })
        })
      )
    )
  })

  return SessionPrompt.of({ prompt, append, cancel, compact })
})
