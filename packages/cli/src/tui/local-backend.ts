import {
  Config,
  createSession,
  declineTrust,
  discardIfEmpty,
  LLM,
  listTurns,
  logText,
  OtherWorkTree,
  Paths,
  PermissionNext,
  Plugins,
  Question,
  type ReplySource,
  type RevertResult,
  recoverSession,
  redoSession,
  resolveAgents,
  runRuleset,
  SessionPrompt,
  SessionStore,
  StoreError,
  sessionTree,
  TurnRunner,
  trustDeclined,
  trustProject,
  undoSession
} from "@lathe/core"
import { auditPath, readAudit } from "@lathe/permission"
import type { AgentInfo, PermissionRequest, Ruleset } from "@lathe/plugin"
import type { MessageWithParts } from "@lathe/plugin/schema"
import { locate } from "@lathe/tools"
import { Effect, Layer, Logger, ManagedRuntime } from "effect"
import { type AppOptions, type AppServices, appLayer, failureText, repeatsEvent } from "../app.js"
import type {
  Backend,
  BackendFactory,
  BackendHooks,
  BackendPrompt,
  LoadedSession,
  Outcome,
  RevertOptions,
  TurnEnd
} from "../backend.js"
import type { CliIO } from "../io.js"
import { loadDocument } from "../session-document.js"
import { availableModelsWithLocal } from "./models.js"
import { trustPromptLines } from "./trust-prompt.js"

/** How a front-end other than the interactive UI (`lathe run`) wants the services built. */
export interface LocalBackendOptions {
  /** Where the services' log lines go (default: warnings and errors to `hooks.onWarning`). */
  readonly logger?: Layer.Layer<never>
  /** Whether start-up waits for the MCP servers (default: no, their tools join as they connect). */
  readonly mcpWait?: boolean
  /** Permission rules over the config's, for this process only (`lathe run --allow/--deny`). */
  readonly rules?: Ruleset
  /** MCP servers to start besides the config's (an editor's, `lathe acp`); see `AppOptions.mcpServers`. */
  readonly mcpServers?: AppOptions["mcpServers"]
  /** An editor's buffers and terminal for the tools (`lathe acp`); see `AppOptions.hostSide`. */
  readonly hostSide?: AppOptions["hostSide"]
}

/**
 * The agent in this process: owns a `ManagedRuntime` of the app layer and calls its services directly. Every
 * feature of the UI works with it. Events come from the app's Bus, synchronously, as they are published.
 */
export class LocalBackend implements Backend {
  readonly attached = undefined
  readonly queuesPrompts = false
  private agents: ReadonlyArray<AgentInfo> = []

  private runtime: ManagedRuntime.ManagedRuntime<AppServices, unknown>

  private constructor(
    private readonly io: CliIO,
    private readonly hooks: BackendHooks,
    private readonly options: LocalBackendOptions
  ) {
    this.runtime = LocalBackend.services(io, hooks, options)
  }

  /** A factory for `Controller.start`: builds the app's services for `io`'s project. */
  static factory(io: CliIO): BackendFactory {
    return (hooks) => LocalBackend.make(io, hooks)
  }

  /** Builds the app's services; warnings and errors they log go to `hooks.onWarning` unless `options.logger`. */
  static make(io: CliIO, hooks: BackendHooks, options: LocalBackendOptions = {}): LocalBackend {
    return new LocalBackend(io, hooks, options)
  }

  /** The app's services for `io`'s project (built on first use), logging warnings to `hooks.onWarning`. */
  private static services(
    io: CliIO,
    hooks: BackendHooks,
    options: LocalBackendOptions
  ): ManagedRuntime.ManagedRuntime<AppServices, unknown> {
    const logger =
      options.logger ??
      Logger.layer([
        Logger.make((log) => {
          if (log.logLevel !== "Warn" && log.logLevel !== "Error" && log.logLevel !== "Fatal") return
          if (repeatsEvent(log.fiber)) return // the transcript shows the event itself (a plugin failure)
          hooks.onWarning("log", logText(log.message)) // the sentence, without a plugin's log fields
        })
      ])
    // The session opens at once (unless `mcpWait`); MCP servers' tools join as they connect.
    const layer = appLayer(io, {
      onEvent: hooks.onEvent,
      mcpWait: options.mcpWait === true,
      ...(options.rules ? { rules: options.rules } : {}),
      ...(options.mcpServers ? { mcpServers: options.mcpServers } : {}),
      ...(options.hostSide ? { hostSide: options.hostSide } : {})
    }).pipe(Layer.provideMerge(logger))
    return ManagedRuntime.make(layer)
  }

  supports(): boolean {
    return true
  }

  /** The app's plugin host (rebuilt with the services by `trust` and `reload`). */
  plugins(): Promise<Outcome<Plugins["Service"]>> {
    return this.run(
      Effect.gen(function* () {
        return yield* Plugins
      })
    )
  }

  /** Runs an effect on the app's services; a failure comes back as its message. */
  private run<A, E>(effect: Effect.Effect<A, E, AppServices>): Promise<Outcome<A>> {
    return this.runtime.runPromiseExit(effect).then((exit) => {
      if (exit._tag === "Success") return { ok: true, value: exit.value }
      const reason = exit.cause.reasons[0]
      return {
        ok: false,
        message: failureText(exit.cause),
        ...(reason?._tag === "Fail" ? { error: reason.error } : {})
      }
    })
  }

  async setup() {
    const setup = await this.run(
      Effect.gen(function* () {
        const config = yield* Config
        const paths = yield* Paths
        const plugins = yield* Plugins
        const declined = config.trusted ? false : yield* trustDeclined(paths)
        return { config, paths, declined, agents: [...resolveAgents(plugins.agents, config.info.agent).values()] }
      })
    )
    if (!setup.ok) return setup
    const { config, paths, declined, agents } = setup.value
    this.agents = agents
    const narrowed = (notice: string) => notice.startsWith("Ignored from untrusted")
    const ask = !config.trusted && !declined && config.notices.some(narrowed)
    return {
      ok: true as const,
      value: {
        root: paths.root,
        agents,
        defaultAgent: config.info.default_agent,
        // What the trust prompt shows is not said twice; after a "no", one line instead of the whole list.
        notices: config.notices.flatMap((notice) =>
          !narrowed(notice)
            ? [notice]
            : ask
              ? []
              : declined
                ? [
                    `This folder's config is narrowed (you chose not to trust it). \`lathe trust\` in ${paths.root} trusts it later.`
                  ]
                : [notice]
        ),
        // An untrusted folder whose config asks for more than it may: offer to trust it, showing what it asks for.
        trustPrompt: ask ? trustPromptLines(config.ignored ?? []) : undefined,
        history: { dataDir: paths.data, projectID: paths.projectID },
        configDir: paths.config,
        configNotices: config.notices,
        ...(config.info.budget
          ? {
              budget: {
                ...(config.info.budget.max_cost !== undefined ? { maxCost: config.info.budget.max_cost } : {}),
                ...(config.info.budget.max_session_cost !== undefined
                  ? { maxSessionCost: config.info.budget.max_session_cost }
                  : {})
              }
            }
          : {}),
        untrusted: config.untrusted !== undefined
      }
    }
  }

  createSession(agent: string | undefined) {
    return this.run(createSession(agent ? { agent } : {}))
  }

  async discardIfEmpty(sessionID: string) {
    const result = await this.run(discardIfEmpty(sessionID))
    return result.ok && result.value
  }

  /**
   * Runs the prompt on the app's `TurnRunner`: with `command` or `expand`, the runner makes `text` the prompt first
   * (what it could not attach is told to `onNotice` before the turn runs); else `parts` go as they are.
   */
  async prompt(input: BackendPrompt): Promise<Outcome<TurnEnd>> {
    const options = {
      sessionID: input.sessionID,
      ...(input.variant ? { variant: input.variant } : {}),
      ...input.limits,
      ...(input.allowSubagents ? { allowSubagents: true } : {}),
      ...(input.inheritedModel ? { inheritedModel: input.inheritedModel } : {}),
      ...(input.title === false ? { title: false } : {}),
      abort: input.signal
    }
    const prepares = input.command !== undefined || input.expand === true
    const result = await this.run(
      Effect.gen(function* () {
        const runner = yield* TurnRunner
        const prepared = prepares
          ? yield* runner.prepare({
              sessionID: input.sessionID,
              text: input.text,
              ...(input.command !== undefined ? { command: input.command } : {}),
              ...(input.arguments !== undefined ? { arguments: input.arguments } : {}),
              // What the run attaches (piped text, `-f` files) goes after the text, before any resource.
              ...(input.parts.length > 1 ? { attachments: input.parts.slice(1) } : {}),
              mentions: true,
              subagentMention: true,
              ...(input.agent ? { agent: input.agent } : {}),
              ...(input.model ? { model: input.model } : {})
            })
          : undefined
        for (const problem of prepared?.problems ?? []) input.onNotice?.(problem)
        // The parts as made (here or by the UI): the person's text first (`BackendPrompt.parts`), then the rest.
        const [first, ...rest] = prepared ? prepared.parts : input.parts
        const agent = prepared ? prepared.agent : input.agent
        const model = prepared ? prepared.model : input.model
        // The subagent the person addressed, for the prompt's `agent` part: found here, or by the UI (which lets a
        // subagent take a prompt only when the person named it).
        const mention = prepared?.mention ?? (input.allowSubagents ? input.agent : undefined)
        const done = yield* runner.run({
          ...options,
          text: first?.type === "text" ? first.text : input.text,
          attachments: first?.type === "text" ? rest : [...(first ? [first] : []), ...rest],
          ...(agent ? { agent } : {}),
          ...(model ? { model } : {}),
          ...(prepared?.allowSubagents ? { allowSubagents: true } : {}),
          ...(mention ? { mention } : {}),
          ...(prepared?.inheritedModel ? { inheritedModel: prepared.inheritedModel } : {})
        })
        return done.answer
      })
    )
    if (!result.ok) return result
    const info = result.value.info
    return { ok: true, value: { answer: info.role === "assistant" ? info : undefined } }
  }

  replyPermission(id: string, reply: "once" | "always" | "reject", message: string | undefined, by?: ReplySource) {
    const source = by === undefined ? {} : { by }
    return this.run(
      Effect.flatMap(PermissionNext, (permission) =>
        permission.reply(
          id,
          reply === "reject"
            ? { type: "reject", ...(message ? { message } : {}), ...source }
            : { type: reply, ...source }
        )
      )
    )
  }

  replyQuestion(id: string, answers: ReadonlyArray<ReadonlyArray<string>> | undefined, reason?: string) {
    return this.run(
      Effect.flatMap(Question, (question) =>
        answers
          ? question.reply(
              id,
              answers.map((a) => [...a])
            )
          : question.dismiss(id, reason ?? "The user dismissed the questions.")
      )
    )
  }

  async revert(verb: "undo" | "redo", sessionID: string, options: RevertOptions = {}) {
    const result = await this.run<RevertResult, unknown>(
      verb === "undo" ? undoSession(sessionID, options) : redoSession(sessionID, options)
    )
    return result.ok
      ? { ok: true as const, value: { files: result.value.files, overwritten: result.value.overwritten } }
      : result
  }

  turns(sessionID: string) {
    return this.run(listTurns(sessionID))
  }

  async sessions() {
    const result = await this.run(
      Effect.gen(function* () {
        const paths = yield* Paths
        return yield* (yield* SessionStore).listSessions({
          projectID: paths.projectID,
          tree: paths.root,
          parentID: null,
          limit: 200
        })
      })
    )
    return result.ok ? result.value : []
  }

  load(id: string | undefined): Promise<Outcome<LoadedSession | undefined>> {
    return this.run(
      Effect.gen(function* () {
        const store = yield* SessionStore
        const paths = yield* Paths
        const session = id
          ? yield* store.getSession(id)
          : (yield* store.listSessions({ projectID: paths.projectID, tree: paths.root, parentID: null, limit: 1 }))[0]
        if (!session) return undefined
        // Its history describes the tree it ran in: continued here, the model would act on files it never saw.
        const tree = session.workspace === undefined ? yield* Effect.promise(() => sessionTree(session)) : paths.root
        if (tree !== paths.root)
          return yield* new OtherWorkTree({
            sessionID: session.id,
            tree,
            message:
              `Session ${session.id} ran in ${tree}, another work tree than this one (${paths.root}), and its history ` +
              `describes that tree. Continue it there (\`lathe --session ${session.id}\` in ${tree}), or start a new ` +
              "session here."
          })
        // A step left open by a process that died is closed first, so it does not show as still running.
        yield* recoverSession(session.id)
        const messages = yield* store.messages(session.id)
        const children = new Map<string, ReadonlyArray<MessageWithParts>>()
        for (const child of yield* store.listSessions({ parentID: session.id }))
          children.set(child.id, yield* store.messages(child.id))
        return { session, messages, children }
      })
    )
  }

  async models() {
    const result = await this.run(Effect.map(Config, (config) => config.info))
    return result.ok ? availableModelsWithLocal(result.value, this.io.env, this.agents) : []
  }

  async resolveModel(model: string | undefined, agent: string) {
    const agentModel = this.agents.find((a) => a.name === agent)?.model
    const resolved = await this.run(Effect.flatMap(LLM, (llm) => llm.resolve(model ?? agentModel)))
    if (!resolved.ok) return resolved
    return {
      ok: true as const,
      value: {
        label: `${resolved.value.providerID}/${resolved.value.modelID}`,
        contextLimit: resolved.value.limit.context,
        takes: { image: resolved.value.capabilities.image, pdf: resolved.value.capabilities.pdf === true }
      }
    }
  }

  mayRead(sessionID: string, agent: string | undefined, files: ReadonlyArray<string>): Promise<Outcome<void>> {
    const runtime = this.runtime
    return this.run(
      Effect.gen(function* () {
        const permission = yield* PermissionNext
        const { root } = yield* Paths
        const { ruleset } = yield* runRuleset(agent)
        // The read tool's own steps: `locate` asks `external_directory` for a file outside the project, then `read`.
        const ask = (request: PermissionRequest) =>
          runtime.runPromise(permission.ask({ ...request, sessionID, ruleset }))
        for (const path of files)
          yield* Effect.tryPromise({
            try: async () => {
              const located = await locate({ root, ask }, path, "file")
              await ask({
                permission: "read",
                patterns: located.patterns,
                metadata: { filepath: path, realPath: located.real }
              })
            },
            catch: (error) => error
          })
      })
    )
  }

  async compact(sessionID: string, model: string | undefined, signal: AbortSignal) {
    const result = await this.run(
      Effect.flatMap(SessionPrompt, (prompt) =>
        prompt.compact({ sessionID, abort: signal, ...(model ? { model } : {}) })
      )
    )
    return result.ok ? { ok: true as const, value: undefined } : result
  }

  /**
   * Trusts the project, then rebuilds the app's services (config, plugins, MCP servers, providers, rules), so its
   * config applies in full from the next prompt; sessions live in the store, so the one in view goes on.
   */
  async trust() {
    const result = await this.run(Effect.flatMap(Paths, (paths) => trustProject(paths)))
    if (!result.ok) return result
    const old = this.runtime
    this.runtime = LocalBackend.services(this.io, this.hooks, this.options)
    await old.dispose()
    return { ok: true as const, value: undefined }
  }

  /** Rebuilds the app's services, so config written since (by `/connect`) applies from the next prompt. */
  async reload() {
    const old = this.runtime
    this.runtime = LocalBackend.services(this.io, this.hooks, this.options)
    await old.dispose()
    return { ok: true as const, value: undefined }
  }

  document(sessionID: string) {
    return this.run(
      Effect.gen(function* () {
        const file = auditPath((yield* Paths).data)
        const audit = yield* Effect.tryPromise({
          try: () => readAudit(file),
          catch: (error) =>
            new StoreError({
              operation: "readAudit",
              message: `Cannot read the permission audit trail ${file}: ${error instanceof Error ? error.message : String(error)}`
            })
        })
        return yield* loadDocument(sessionID, audit)
      })
    )
  }

  /** Records the person's "no" for this project, so the UI does not offer to trust it again here. */
  async decline() {
    const result = await this.run(Effect.flatMap(Paths, (paths) => declineTrust(paths)))
    return result.ok ? { ok: true as const, value: undefined } : result
  }

  dispose() {
    return this.runtime.dispose()
  }
}
