import { Clock, Context, Effect, Layer, Schema, type Scope } from "effect"
import { assumedModelNotice } from "../catalog/model-catalog.js"
import { Config } from "../config/config.js"
import { Paths } from "../config/paths.js"
import { Bus } from "../contracts/bus.js"
import { PermissionDefaults, type Ruleset } from "../contracts/permission-next.js"
import { assembleRuleset } from "../contracts/permission-ruleset.js"
import { compilePattern } from "../contracts/wildcard.js"
import { type AgentInfo, agentAllowsTool, resolveAgents } from "../plugin-host/agent.js"
import { Plugins } from "../plugin-host/plugins.js"
import type { AnyTool } from "../plugin-host/tool.js"
import { truncationDir } from "../plugin-host/truncate.js"
import {
  LLM,
  type ModelInfo,
  type ModelNotFound,
  type ProviderError,
  type ProviderNotConfigured
} from "../provider/llm.js"
import type { Reasoning } from "../provider/reasoning.js"
import { addTokens, isOverflow } from "../provider/usage.js"
import { ascendingId } from "../schema/id.js"
import type { AssistantMessage, MessageError, MessageWithParts, Session, UserMessage } from "../schema/message.js"
import { emptyTokens, type Part } from "../schema/part.js"
import { DEFAULT_SESSION_TITLE } from "../store/session.js"
import { recoverSession } from "../store/session-recover.js"
import { commitRevert } from "../store/session-revert.js"
import { type MessageNotFound, type SessionNotFound, SessionStore, type StoreError } from "../store/session-store.js"
import { DoomLoopGuard, defaultDoomLoop } from "./doom-loop.js"
import { type DoomLoopDetected, Processor } from "./processor.js"
import { Retry } from "./retry.js"
import { makeTurnHooks } from "./session-hooks.js"
import { makeStepRunner, type StepRunner } from "./session-step.js"
import { recordStepLimit, stepCap } from "./step-limit.js"
import { SubagentFailed, type SubagentRequest, type SubagentResult, Subagents } from "./subagents.js"
import { SystemPrompt } from "./system-prompt.js"

/** A piece of a prompt as a person gives it. */
export type PromptPart =
  /** `synthetic` text is context Lathe added for the person (an attached file's contents); UIs do not show it. */
  | { readonly type: "text"; readonly text: string; readonly synthetic?: boolean }
  | { readonly type: "file"; readonly url: string; readonly mime: string; readonly filename?: string }

/** One prompt to a session. */
export interface PromptInput {
  readonly sessionID: string
  readonly parts: ReadonlyArray<PromptPart>
  /**
   * The user message's ID, for a caller that must know it before the turn starts (the server answers a prompt with
   * it). When a user message with this ID is already stored in the session (see `append`), the turn answers that
   * message and `parts` are not stored again. A new ID must come from `ascendingId("message")` and be newer than
   * every message of the session, or the history would be out of order.
   */
  readonly messageID?: string
  /**
   * The agent to answer. Default: the session's, while it can take a prompt; else the configured default, else
   * `build` (with a `notice` when the session's agent had to be passed over).
   */
  readonly agent?: string
  /**
   * `provider/model` for this turn. Default: the agent's own; for a subagent without one, its caller's
   * (`inheritedModel`, else the session's own agent's, which a mention stands in for); else the configured model.
   */
  readonly model?: string
  /** `provider/model` of the turn that started this one (a subagent's caller), for an agent with no model of its own. */
  readonly inheritedModel?: string
  /**
   * How hard the model reasons on this turn (`lathe run --variant`, `/variant`), over the agent's and the model
   * entry's `reasoning`. Sent only to reasoning models.
   */
  readonly variant?: Reasoning
  /** Aborting ends the turn cleanly and records the aborted state. */
  readonly abort?: AbortSignal
  /** Name the session with the hidden `title` agent after its first message (default true). */
  readonly title?: boolean
  /**
   * Let an agent of mode `subagent` take the prompt (the task tool, or the person naming it with `@name`). It runs
   * for this prompt only: the session keeps the agent it has.
   */
  readonly allowSubagents?: boolean
  /** Rules appended after the agent's and the config's (the task tool denies recursion this way). */
  readonly extraRules?: Ruleset
  /** Rulesets of the sessions above (a subagent's parents): every ask must pass them too. */
  readonly constraints?: ReadonlyArray<Ruleset>
}

/** No agent of that name exists (or it is hidden, or a subagent only). */
export class AgentNotFound extends Schema.TaggedError<AgentNotFound>()("AgentNotFound", {
  agent: Schema.String,
  message: Schema.String
}) {}

/** A compaction the person asked for. */
export interface CompactRequest {
  readonly sessionID: string
  /** `provider/model` to summarise with (default: the session agent's, else the configured model). */
  readonly model?: string
  readonly abort?: AbortSignal
}

/** The session is already running a turn. */
export class SessionBusy extends Schema.TaggedError<SessionBusy>()("SessionBusy", {
  sessionID: Schema.String,
  message: Schema.String
}) {}

/** Every way a requested compaction can fail. */
export type CompactError =
  | SessionNotFound
  | SessionBusy
  | StoreError
  | ProviderError
  | ProviderNotConfigured
  | ModelNotFound
  | DoomLoopDetected

/** Every way a turn can fail. */
export type PromptError =
  | SessionNotFound
  | MessageNotFound
  | SessionBusy
  | StoreError
  | ProviderError
  | ProviderNotConfigured
  | ModelNotFound
  | AgentNotFound
  | DoomLoopDetected

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
  /** The real loop. */
  static readonly layer = Layer.effect(
    SessionPrompt,
    Effect.suspend(() => makeSessionPrompt)
  )
}

/** The permission name a tool's calls are checked under (the file-changing tools share `edit`). */
export const toolPermission = (toolID: string): string =>
  ["write", "edit", "multiedit", "apply_patch", "patch"].includes(toolID) ? "edit" : toolID

/** The tools an agent is offered: switched on for it, and not denied outright (`*` → deny as the last word). */
export const offeredTools = (
  tools: ReadonlyArray<AnyTool>,
  agent: AgentInfo,
  ruleset: Ruleset
): Record<string, AnyTool> => {
  const offered: Record<string, AnyTool> = {}
  for (const tool of tools) {
    if (!agentAllowsTool(agent, tool.id)) continue
    const permission = toolPermission(tool.id)
    const last = ruleset.findLast((rule) => compilePattern(rule.permission)(permission))
    if (last && last.pattern === "*" && last.action === "deny") continue
    offered[tool.id] = tool
  }
  return offered
}

/** The error recorded on a message for a failure of the turn. */
export const messageError = (
  error: PromptError | { readonly _tag: string; readonly message: string }
): MessageError => {
  switch (error._tag) {
    case "ProviderError": {
      const e = error as ProviderError
      return {
        name: "ProviderError",
        message: e.message,
        providerID: e.providerID,
        modelID: e.modelID,
        reason: e.reason
      }
    }
    case "DoomLoopDetected": {
      const e = error as DoomLoopDetected
      return {
        name: "DoomLoopDetected",
        message: e.message,
        tool: e.tool,
        count: e.count,
        threshold: e.threshold,
        calls: e.calls,
        suggestion: e.suggestion
      }
    }
    case "ProviderNotConfigured":
    case "ModelNotFound":
      return { name: error._tag, message: error.message }
    default:
      return { name: "Unknown", message: error.message }
  }
}

const makeSessionPrompt = Effect.gen(function* () {
  const store = yield* SessionStore
  const bus = yield* Bus
  const llm = yield* LLM
  const config = yield* Config
  const plugins = yield* Plugins
  const paths = yield* Paths
  const subagents = yield* Subagents
  const defaults = yield* PermissionDefaults
  const scope: Scope.Scope = yield* Effect.scope
  const runner: StepRunner = makeStepRunner({
    store,
    bus,
    llm,
    plugins,
    processor: yield* Processor,
    system: yield* SystemPrompt,
    retry: yield* Retry,
    paths
  })
  const running = new Map<string, AbortController>()
  /** The `provider/model` of each running turn, by session: what a subagent it starts inherits. */
  const turnModels = new Map<string, string>()
  const hooks = makeTurnHooks({ plugins, store, bus, storeUser: (...args) => storeUser(...args) })

  /** The session, agents, agent and model a prompt runs with (the agent and model checked). */
  const resolve = Effect.fnUntraced(function* (input: PromptInput) {
    const session = yield* store.getSession(input.sessionID)
    const agents = resolveAgents(plugins.agents, config.info.agent)
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
    // A subagent with no model of its own runs on its caller's: the turn that started it, else (a mention) the
    // model the session's own agent would have used.
    const inherited = input.allowSubagents ? (input.inheritedModel ?? agents.get(sessionAgent)?.model) : undefined
    const resolved = yield* llm.resolve(input.model ?? agent.model ?? inherited)
    const assumed = assumedModelNotice(resolved) // once per model: the limits Lathe guessed, and how to set them
    if (assumed !== undefined) yield* bus.publish({ type: "notice", level: "warn", message: assumed })
    const reasoning = input.variant ?? config.info.agent?.[agent.name]?.reasoning ?? resolved.reasoning
    const model: ModelInfo = reasoning === undefined ? resolved : { ...resolved, reasoning }
    return { session, agents, agent, model }
  })

  const append = Effect.fn("SessionPrompt.append")(function* (input: PromptInput) {
    const { session, agent, model } = yield* resolve(input)
    return yield* storeUser(session.id, agent, model, input.parts, input.messageID)
  })

  const prompt = Effect.fn("SessionPrompt.prompt")(function* (input: PromptInput) {
    const found = yield* store.getSession(input.sessionID)
    if (running.has(found.id))
      return yield* new SessionBusy({
        sessionID: found.id,
        message: `Session ${found.id} is already working on a prompt; wait for it to finish or cancel it.`
      })
    const { session, agents, agent, model } = yield* resolve(input)

    const controller = new AbortController()
    const onAbort = () => controller.abort()
    input.abort?.addEventListener("abort", onAbort, { once: true })
    if (input.abort?.aborted) controller.abort()
    running.set(session.id, controller)
    turnModels.set(session.id, `${model.providerID}/${model.modelID}`)
    const release = Effect.sync(() => {
      running.delete(session.id)
      turnModels.delete(session.id)
      input.abort?.removeEventListener("abort", onAbort)
    })

    return yield* turn(session.id, agent, model, input, controller.signal, agents).pipe(
      Effect.ensuring(
        Effect.gen(function* () {
          yield* release
          yield* store.flush.pipe(Effect.ignore)
          yield* bus.publish({ type: "session.status", sessionID: session.id, status: { type: "idle" } })
          yield* bus.publish({ type: "session.idle", sessionID: session.id })
        })
      )
    )
  })

  /** Stores a person's prompt as a user message with its parts (and publishes them); `id` when the caller chose it. */
  const storeUser = Effect.fnUntraced(function* (
    sessionID: string,
    agent: AgentInfo,
    model: ModelInfo,
    promptParts: ReadonlyArray<PromptPart>,
    id?: string
  ) {
    const user: UserMessage = {
      id: id ?? ascendingId("message"),
      sessionID,
      role: "user",
      time: { created: yield* Clock.currentTimeMillis },
      agent: agent.name,
      model: { providerID: model.providerID, modelID: model.modelID }
    }
    yield* store.putMessage(user)
    yield* bus.publish({ type: "message.updated", message: user })
    for (const promptPart of promptParts) {
      const part: Part =
        promptPart.type === "text"
          ? {
              id: ascendingId("part"),
              sessionID,
              messageID: user.id,
              type: "text",
              text: promptPart.text,
              ...(promptPart.synthetic ? { synthetic: true } : {})
            }
          : {
              id: ascendingId("part"),
              sessionID,
              messageID: user.id,
              type: "file",
              mime: promptPart.mime,
              url: promptPart.url,
              ...(promptPart.filename ? { filename: promptPart.filename } : {})
            }
      yield* store.putPart(part)
      yield* bus.publish({ type: "part.updated", part })
    }
    return user
  })

  const turn = Effect.fnUntraced(function* (
    sessionID: string,
    agent: AgentInfo,
    model: ModelInfo,
    input: PromptInput,
    abort: AbortSignal,
    agents: Map<string, AgentInfo>
  ) {
    // A step a dead process left open is closed first, so the history sent to the model is well-formed.
    yield* recoverSession(sessionID).pipe(Effect.provideService(SessionStore, store), Effect.provideService(Bus, bus))
    // A new prompt after an undo makes the undo final: the hidden messages go.
    yield* commitRevert(sessionID).pipe(Effect.provideService(SessionStore, store), Effect.provideService(Bus, bus))
    const now = yield* Clock.currentTimeMillis
    const stored = yield* store.messages(sessionID)
    // A prompt stored earlier (`append`, while another turn ran) is answered as it is; otherwise the parts are stored.
    const existing = input.messageID
      ? stored.find((m) => m.info.id === input.messageID && m.info.role === "user")
      : undefined
    const user: UserMessage =
      existing?.info.role === "user"
        ? existing.info
        : yield* storeUser(sessionID, agent, model, input.parts, input.messageID)
    const history = stored.filter((m) => m.info.id < user.id)
    const parts: ReadonlyArray<PromptPart> = existing
      ? existing.parts.flatMap((part) => (part.type === "text" ? [{ type: "text" as const, text: part.text }] : []))
      : input.parts
    yield* bus.publish({ type: "session.started", sessionID, messageID: user.id })
    yield* bus.publish({ type: "session.status", sessionID, status: { type: "busy" } })

    const session = yield* store.getSession(sessionID)
    const promptText = parts.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("\n")
    // Plugins see the prompt before the model does: they may add context to it, or withdraw it.
    const said = parts.flatMap((part) => (part.type === "text" && !part.synthetic ? [part.text] : [])).join("\n")
    if (yield* hooks.beforePrompt(session, agent, user.id, said, history.length === 0))
      return { info: user, parts: [] } satisfies MessageWithParts
    const firstText = parts.find((part) => part.type === "text")?.text.trim() ?? ""
    const titled =
      history.length === 0 && firstText && session.title === DEFAULT_SESSION_TITLE
        ? { title: firstText.split("\n")[0]?.slice(0, 50) ?? session.title }
        : {}
    // A subagent's prompt (a mention; a task's child session was made with its agent) leaves the session's agent.
    const kept = input.allowSubagents ? {} : { agent: agent.name }
    const updated = { ...session, ...titled, ...kept, time: { ...session.time, updated: now } }
    yield* store.putSession(updated)
    yield* bus.publish({ type: "session.updated", session: updated })
    if (history.length === 0 && firstText && input.title !== false) {
      const titleAgent = agents.get("title")
      // A title needs no thinking: the turn's reasoning setting is not sent with it.
      const { reasoning: _, ...titleModel } = model
      if (titleAgent) yield* Effect.forkIn(runner.title(sessionID, firstText, titleAgent, titleModel), scope)
    }

    // A previous turn that ended over the limit is compacted before this one starts.
    const lastAssistant = history.findLast((m) => m.info.role === "assistant")?.info
    if (
      lastAssistant?.role === "assistant" &&
      isOverflow(lastAssistant.tokens, model) &&
      config.info.compaction?.auto !== false
    )
      yield* runner.compact({ sessionID, keepFrom: user.id, model, agents, abort, auto: true })

    const guard = new DoomLoopGuard({
      threshold: config.info.doom_loop?.threshold ?? defaultDoomLoop.threshold,
      ignoredTools: config.info.doom_loop?.ignored_tools ?? defaultDoomLoop.ignoredTools
    })
    const ruleset: Ruleset = assembleRuleset({
      defaults,
      agent: agent.permission,
      config: config.info.permission,
      truncationDir: truncationDir(paths.data),
      extraRules: input.extraRules
    })
    // The tools on offer are decided again only when a plugin changed its tools (an MCP server that connected while
    // the turn ran): its tools are offered from the next step.
    let pluginTools = plugins.tools
    let turnTools = offeredTools(pluginTools, agent, ruleset)
    let last: AssistantMessage | undefined
    // The turn's cap on steps (the agent's, else config max_steps, else 200): the last one is asked to wrap up.
    const cap = stepCap(agent.maxSteps, config.info.max_steps)
    let continued = 0
    for (let step = 1; ; step++) {
      if (abort.aborted) break
      const lastStep = cap !== undefined && step >= cap
      const current = plugins.tools
      if (current.length !== pluginTools.length || current.some((tool, index) => tool !== pluginTools[index])) {
        pluginTools = current
        turnTools = offeredTools(pluginTools, agent, ruleset)
      }
      const tools = lastStep ? {} : turnTools
      const assistant: AssistantMessage = {
        id: ascendingId("message"),
        sessionID,
        role: "assistant",
        parentID: user.id,
        agent: agent.name,
        model: { providerID: model.providerID, modelID: model.modelID },
        path: { cwd: paths.directory, root: paths.root },
        time: { created: yield* Clock.currentTimeMillis },
        tokens: emptyTokens(),
        cost: 0
      }
      const output = yield* runner.step({
        assistant,
        agent,
        model,
        tools,
        abort,
        ruleset,
        step,
        guard,
        lastStep,
        ...(input.constraints ? { constraints: input.constraints } : {})
      })
      last = output.message
      if (lastStep && !abort.aborted) last = yield* recordStepLimit(store, bus, last, step)
      // A plugin may send a turn the model ended on with an instruction, a few times at most.
      if (
        output.result === "stop" &&
        !lastStep &&
        !abort.aborted &&
        (yield* hooks.goOn(session, agent, model, output.message, continued))
      ) {
        continued++
        continue
      }
      if (output.result === "stop" || lastStep) break
      if (output.result === "compact") {
        if (config.info.compaction?.auto === false) break
        yield* runner.compact({ sessionID, keepFrom: user.id, model, agents, abort, auto: true, request: promptText })
      }
    }
    if (!last) return { info: user, parts: [] } satisfies MessageWithParts
    return yield* store.getMessage(sessionID, last.id)
  })

  const cancel = (sessionID: string) => Effect.sync(() => running.get(sessionID)?.abort())

  yield* subagents.register((request) => runChild(request))

  /** Runs a subagent in a child session (new, or continued by id) and sums up what this run of it did. */
  const runChild = (request: SubagentRequest) =>
    Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      let sessionID = request.sessionID
      if (sessionID) {
        const existing = yield* store.getSession(sessionID).pipe(Effect.option)
        if (existing._tag === "None" || existing.value.parentID !== request.parentSessionID)
          return yield* new SubagentFailed({
            agent: request.agent,
            message: `Session ${sessionID} is not a subagent session of this session; omit session_id to start one.`
          })
      } else {
        const child: Session = {
          id: ascendingId("session"),
          projectID: paths.projectID,
          directory: paths.directory,
          parentID: request.parentSessionID,
          title: `${request.description} (@${request.agent} subagent)`,
          agent: request.agent,
          time: { created: now, updated: now }
        }
        yield* store.putSession(child)
        yield* bus.publish({
          type: "session.created",
          session: child,
          ...(request.callID ? { callID: request.callID } : {})
        })
        sessionID = child.id
      }
      const before = new Set((yield* store.messages(sessionID)).map((m) => m.info.id))
      const inheritedModel = turnModels.get(request.parentSessionID)
      yield* prompt({
        sessionID,
        parts: [{ type: "text", text: request.prompt }],
        agent: request.agent,
        ...(inheritedModel ? { inheritedModel } : {}),
        abort: request.abort,
        title: false,
        allowSubagents: true,
        constraints: request.constraints,
        // No recursion and no todo list of its own: the caller plans.
        extraRules: ["task", "todowrite", "todoread"].map((permission) => ({
          permission,
          pattern: "*",
          action: "deny" as const,
          source: "subagent (no recursion)"
        }))
      })
      const fresh = (yield* store.messages(sessionID)).filter((m) => !before.has(m.info.id))
      const answers = fresh.flatMap((m) => (m.info.role === "assistant" ? [m] : []))
      const last = answers.findLast((m) => m.parts.some((p) => p.type === "text" && !p.synthetic && p.text.trim()))
      let tokens = emptyTokens()
      let cost = 0
      for (const answer of answers) {
        if (answer.info.role !== "assistant") continue
        tokens = addTokens(tokens, answer.info.tokens)
        cost += answer.info.cost
      }
      return {
        sessionID,
        text: last?.parts.flatMap((p) => (p.type === "text" && !p.synthetic ? [p.text] : [])).join("\n") ?? "",
        calls: fresh.flatMap((m) =>
          m.parts.flatMap((p) =>
            p.type === "tool" && (p.state.status === "completed" || p.state.status === "error")
              ? [
                  {
                    tool: p.tool,
                    title: p.state.status === "completed" ? p.state.title : p.state.error,
                    status: p.state.status
                  }
                ]
              : []
          )
        ),
        tokens,
        cost
      } satisfies SubagentResult
    }).pipe(
      Effect.catch((error: { readonly _tag: string; readonly message: string }) =>
        error._tag === "SubagentFailed"
          ? Effect.fail(error as SubagentFailed)
          : Effect.fail(
              new SubagentFailed({
                agent: request.agent,
                message: `The ${request.agent} subagent failed: ${error.message}`
              })
            )
      )
    )

  const compact = Effect.fn("SessionPrompt.compact")(function* (request: CompactRequest) {
    const session = yield* store.getSession(request.sessionID)
    if (running.has(session.id))
      return yield* new SessionBusy({
        sessionID: session.id,
        message: `Session ${session.id} is working on a prompt; compact it when the turn has ended.`
      })
    const agents = resolveAgents(plugins.agents, config.info.agent)
    const agent = agents.get(session.agent ?? config.info.default_agent ?? "build")
    const model = yield* llm.resolve(request.model ?? agent?.model)
    const controller = new AbortController()
    const onAbort = () => controller.abort()
    request.abort?.addEventListener("abort", onAbort, { once: true })
    running.set(session.id, controller)
    yield* bus.publish({ type: "session.status", sessionID: session.id, status: { type: "busy" } })
    // keepFrom is newer than every message: the whole history is summarised.
    yield* runner
      .compact({
        sessionID: session.id,
        keepFrom: ascendingId("message"),
        model,
        agents,
        abort: controller.signal,
        auto: false
      })
      .pipe(
        Effect.ensuring(
          Effect.gen(function* () {
            running.delete(session.id)
            request.abort?.removeEventListener("abort", onAbort)
            yield* store.flush.pipe(Effect.ignore)
            yield* bus.publish({ type: "session.status", sessionID: session.id, status: { type: "idle" } })
          })
        )
      )
  })

  return SessionPrompt.of({ prompt, append, cancel, compact })
})
