import type {
  AnyTool,
  HookInput,
  HookName,
  HookOutput,
  Plugin,
  PluginCommand,
  PluginContext,
  PluginHooks
} from "@lathe/plugin"
import { type AgentInfo, defineAgent } from "@lathe/plugin"
import { isPlugin, type TriggerHookName } from "@lathe/plugin/host"
import type { PromptPart } from "@lathe/plugin/schema"
import { Context, Duration, Effect, Layer, Option } from "effect"
import { Config } from "../config/config.js"
import { Paths } from "../config/paths.js"
import { PROVIDER_KEY_NAMES, secretValues } from "../config/secret-values.js"
import { Bus } from "../contracts/bus.js"
import { launcherKeys } from "../process/launcher-keys.js"
import { runSafeGit } from "../process/run-git.js"
import { startupMark } from "../process/startup-marks.js"
import { SessionStore } from "../store/session-store.js"
import { CommandRunner, unsandboxedRunner } from "./command-runner.js"
import {
  type CommandExpansion,
  type Contributor,
  type ListedCommand,
  type ListedResource,
  makeContributions,
  type PluginRequestError,
  thrownMessage,
  type UnknownCommand,
  type UnknownResource
} from "./contributions.js"
import { HostSide } from "./host-side.js"
import { pluginCatalog } from "./plugin-catalog.js"
import { importPlugins, type PluginEntry, type PluginLoadFailure, pluginReferences } from "./plugin-loader.js"
import { truncationDir } from "./truncate.js"

/** How long a hook may run before it is reported and skipped (config `plugin_timeout_ms`). */
export const DEFAULT_HOOK_TIMEOUT_MS = 30_000

/**
 * The log annotation on a warning that repeats a published event (its value is the event's type, e.g. `plugin.error`):
 * a host that shows events (the CLI's run and interactive session) skips such lines, so each failure is reported once;
 * a host that shows only its log (`lathe serve`, `lathe agents`) still prints them.
 */
export const LOG_REPEATS_EVENT = "lathe.repeats-event"

/** A plugin that loaded, as `Plugins.list` reports it. */
export interface LoadedPlugin {
  readonly name: string
  readonly source: string
  readonly tools: ReadonlyArray<string>
  readonly agents: ReadonlyArray<string>
  readonly hooks: ReadonlyArray<HookName>
}

/** The keys of a plugin's setup result that are contributions, not hooks. */
const CONTRIBUTION_KEYS = new Set<keyof PluginHooks>([
  "tools",
  "agents",
  "commands",
  "findCommand",
  "resources",
  "dispose"
])

/** Runs a plugin's async code, keeping what it threw as the failure (not a wrapped UnknownError). */
const attempt = <A>(f: () => Promise<A>) => Effect.tryPromise({ try: f, catch: (thrown) => thrown })

/**
 * The plugin host: holds every loaded plugin's hooks, tools, agents, commands and resources, in load order. A plugin
 * that throws at load or in a hook is reported (a `plugin.error` event naming it) and skipped; it never takes the
 * session down.
 */
export class Plugins extends Context.Service<
  Plugins,
  {
    readonly list: ReadonlyArray<LoadedPlugin>
    /** Plugins that could not be loaded (import or setup failed), with what to do about it. */
    readonly failed: ReadonlyArray<PluginLoadFailure>
    /**
     * Every plugin tool, in load order; a later tool with the same id replaces an earlier one. Read it when you need
     * it: tools a plugin adds after setup (`ctx.tools.set`) appear here.
     */
    readonly tools: ReadonlyArray<AnyTool>
    /** Every plugin agent, in load order; a later agent with the same name replaces an earlier one. */
    readonly agents: ReadonlyArray<AgentInfo>
    /** Whether any plugin implements a hook (lets hot paths skip building inputs). */
    readonly has: (hook: HookName) => boolean
    /**
     * Runs a hook of every plugin, in load order, one after another, on the same `output` object, and
     * returns it. Never fails: a throwing hook is reported and skipped.
     */
    readonly trigger: <K extends TriggerHookName>(
      hook: K,
      input: HookInput<K>,
      output: HookOutput<K>
    ) => Effect.Effect<HookOutput<K>>
    /**
     * Every plugin command (`/name`, `lathe run --command name`), in load order, listed when asked (commands a plugin
     * sets later with `ctx.commands.set` appear). On a name two plugins contribute, the first loaded keeps it and the
     * other is reported once (`plugin.error`). A plugin whose listing fails or times out is reported and left out.
     */
    readonly commands: Effect.Effect<ReadonlyArray<ListedCommand>>
    /**
     * Expands the command `name` with the words after it (`text`: the same arguments unsplit; default the words joined
     * with spaces): a listed command, else one a plugin's `findCommand` gives. Fails with `UnknownCommand`, or with
     * `PluginRequestError` saying why the plugin refused (or that it timed out, also reported as `plugin.error`).
     */
    readonly runCommand: (
      name: string,
      args: ReadonlyArray<string>,
      text?: string
    ) => Effect.Effect<CommandExpansion, UnknownCommand | PluginRequestError>
    /** Every plugin resource (`@<uri>`), merged in load order (the first plugin keeps a URI), listed when asked. */
    readonly resources: Effect.Effect<ReadonlyArray<ListedResource>>
    /**
     * Reads the resource `uri` from the plugin whose `accepts` takes it, else the one that lists it. Fails with
     * `UnknownResource` when none has it, with `PluginRequestError` when the plugin cannot read it.
     */
    readonly readResource: (
      uri: string
    ) => Effect.Effect<ReadonlyArray<PromptPart>, UnknownResource | PluginRequestError>
    /** Whether any plugin contributes resources (when none does, a host need not look for `@<uri>` mentions). */
    readonly hasResources: boolean
    /**
     * Calls `listener` whenever a plugin changes its commands after setup (`ctx.commands.set`), so a UI lists them
     * again; returns the function that stops it.
     */
    readonly watch: (listener: () => void) => () => void
  }
>()("@lathe/core/Plugins") {
  /** Loads the given plugins, in order. */
  static readonly layer = (entries: ReadonlyArray<PluginEntry | Plugin>) =>
    Layer.effect(Plugins, makePlugins(entries, []))

  /**
   * Loads the host's built-in plugins (minus those named in config `disabled_plugins`), then the config `plugin` list,
   * then the files of `.lathe/plugins/` and `~/.config/lathe/plugins/`. What cannot be loaded is reported (a
   * `plugin.error` event, and `failed`) and skipped. The config of an untrusted project has no `plugin` list (see
   * Config), so a cloned repository cannot load code this way.
   */
  static readonly layerFromConfig = (builtins: ReadonlyArray<PluginEntry | Plugin>) =>
    Layer.effect(
      Plugins,
      Effect.gen(function* () {
        const config = yield* Config
        const paths = yield* Paths
        const disabled = new Set(config.info.disabled_plugins ?? [])
        // Code in a cloned repository's .lathe/plugins/ runs only once the person trusts the project.
        const references = pluginReferences(config.info.plugin, {
          root: paths.root,
          config: paths.config,
          projectFolder: config.trusted,
          sources: config.sources
        })
        const skipped = config.trusted ? [] : pluginReferences([], { root: paths.root, config: "/nonexistent" })
        if (skipped.length > 0)
          yield* Effect.logWarning(
            `Ignored ${skipped.length} plugin file(s) in ${paths.root}/.lathe/plugins: this project is not trusted. ` +
              "Run `lathe trust` in it to load them."
          )
        const { entries, failures } = yield* Effect.promise(() => importPlugins(references, paths.config, paths.root))
        const enabled = builtins.filter((entry) =>
          isPlugin(entry) ? !disabled.has(entry.name ?? "") : !disabled.has(entry.source ?? entry.name ?? "")
        )
        return yield* makePlugins([...enabled, ...entries], failures)
      })
    )
}

/** What every plugin's context shares, made once by `makePlugins`. */
interface ContextHost {
  readonly paths: Paths["Service"]
  readonly config: Config["Service"]
  readonly client: PluginContext["client"]
  /** Runs the programs plugins start (`ctx.run`). */
  readonly runner: CommandRunner["Service"]
  readonly secrets: ReturnType<typeof secretValues>
  readonly timeoutMs: number
  /** Runs an effect for a plugin's Promise API, on the host's services. */
  readonly run: ReturnType<typeof Effect.runPromiseWith<never>>
  /** Forks an effect on the host's services: plugin log lines go through the host's logger, not the default one. */
  readonly fork: ReturnType<typeof Effect.runForkWith<never>>
  /** Every plugin's tools by id (`ctx.tools.set` changes them after setup). */
  readonly tools: Map<string, AnyTool>
  /** The host's listeners to a change of commands (`watch`). */
  readonly watchers: Set<() => void>
  /** What the host does in the tools' place (an editor's buffers and terminal), when it does. */
  readonly side: HostSide["Service"] | undefined
}

/**
 * The context a plugin's `setup` gets. `added` and `pushed` are this plugin's own: the tools it set and the commands
 * it pushed after setup.
 */
const pluginContext = (
  host: ContextHost,
  entry: PluginEntry,
  name: string,
  added: Map<string, AnyTool>,
  pushed: Contributor["pushed"]
): PluginContext => {
  const { paths, config, client, runner, secrets, timeoutMs, run, fork, tools, watchers, side } = host
  const log = (level: "info" | "warn" | "error") => (text: string, data?: Readonly<Record<string, unknown>>) =>
    fork(
      (level === "info" ? Effect.logInfo : level === "warn" ? Effect.logWarning : Effect.logError)(
        text,
        data ?? {}
      ).pipe(Effect.annotateLogs({ plugin: name }))
    )
  return {
    directory: paths.directory,
    root: paths.root,
    projectID: paths.projectID,
    config: config.info,
    trusted: config.trusted,
    configDir: paths.config,
    home: paths.home,
    truncationDir: truncationDir(paths.data),
    options: entry.options ?? {},
    log: { info: log("info"), warn: log("warn"), error: log("error") },
    client,
    run: (file, args, options) => run(runner.run(file, args, options)),
    secrets,
    secretNames: PROVIDER_KEY_NAMES,
    git: async (args, { cwd, ...options } = {}) => {
      // Output is kept whole: a plugin reading `git status` of a large tree needs all of it.
      const result = await runSafeGit(cwd ?? paths.root, args, {
        ...options,
        maxOutputBytes: Number.POSITIVE_INFINITY
      })
      return { ...result, stdout: result.stdout.toString("utf8"), stderr: result.stderr.toString("utf8") }
    },
    hookTimeoutMs: timeoutMs,
    // The environment view the CLI reads provider keys through: the launcher's keys are not in process.env.
    catalog: pluginCatalog(config.info, { ...process.env, ...launcherKeys() }),
    tools: {
      set: (next) => {
        for (const [id, tool] of added) if (tools.get(id) === tool) tools.delete(id)
        added.clear()
        for (const tool of next) {
          tools.set(tool.id, tool)
          added.set(tool.id, tool)
        }
      }
    },
    ...(side?.files ? { files: side.files } : {}),
    ...(side?.terminal ? { terminal: side.terminal } : {}),
    commands: {
      set: (next: ReadonlyArray<PluginCommand>) => {
        pushed.commands = [...next]
        for (const watcher of watchers) {
          try {
            watcher()
          } catch {
            // a host's listener failing must not fail the plugin
          }
        }
      }
    }
  }
}

const makePlugins = Effect.fnUntraced(function* (
  entries: ReadonlyArray<PluginEntry | Plugin>,
  importFailures: ReadonlyArray<PluginLoadFailure>
) {
  const bus = yield* Bus
  const config = yield* Config
  const paths = yield* Paths
  const store = yield* SessionStore
  // The host's runner (the CLI's runs in bash's sandbox); without one, programs run unsandboxed with secrets removed.
  const runner = Option.getOrElse(yield* Effect.serviceOption(CommandRunner), () =>
    unsandboxedRunner(config, paths.root)
  )
  const secrets = secretValues(config)
  const run = Effect.runPromiseWith(yield* Effect.context<never>())
  // Plugin log lines go through the host's logger (the CLI prints warnings on stderr), not the default one.
  const fork = Effect.runForkWith(yield* Effect.context<never>())

  const timeoutMs = config.info.plugin_timeout_ms ?? DEFAULT_HOOK_TIMEOUT_MS
  const failed: Array<PluginLoadFailure> = [...importFailures]
  const report = (plugin: string, hook: string, error: unknown, source?: string) =>
    Effect.gen(function* () {
      const text = `Plugin "${plugin}" failed in ${hook}: ${thrownMessage(error)}`
      if (hook === "load") failed.push({ name: plugin, source: source ?? plugin, message: text })
      yield* Effect.logWarning(text).pipe(Effect.annotateLogs(LOG_REPEATS_EVENT, "plugin.error"))
      yield* bus.publish({ type: "plugin.error", plugin, hook, message: text })
    })
  for (const failure of importFailures) {
    yield* Effect.logWarning(failure.message).pipe(Effect.annotateLogs(LOG_REPEATS_EVENT, "plugin.error"))
    yield* bus.publish({ type: "plugin.error", plugin: failure.name, hook: "load", message: failure.message })
  }
  /** A hook call with the time limit: a hook that hangs is reported and skipped. */
  const withLimit = <A>(name: string, hook: string, run: () => Promise<A>) =>
    attempt(run).pipe(
      Effect.timeoutOrElse({
        duration: Duration.millis(timeoutMs),
        orElse: () =>
          Effect.fail(
            new Error(
              `it did not finish within ${timeoutMs} ms (raise plugin_timeout_ms in lathe.json if it needs longer)`
            )
          )
      }),
      Effect.catch((error) => report(name, hook, error).pipe(Effect.as(undefined)))
    )

  const client: PluginContext["client"] = {
    sessions: {
      list: (options = {}) =>
        run(store.listSessions({ projectID: paths.projectID, ...(options.limit ? { limit: options.limit } : {}) })),
      get: (sessionID) => run(store.getSession(sessionID)),
      messages: (sessionID) => run(store.messages(sessionID))
    }
  }

  const loaded: Array<Contributor> = []
  const watchers = new Set<() => void>()
  const list: Array<LoadedPlugin> = []
  const tools = new Map<string, AnyTool>()
  const agents = new Map<string, AgentInfo>()
  const side = Option.getOrUndefined(yield* Effect.serviceOption(HostSide))
  const host: ContextHost = { paths, config, client, runner, secrets, timeoutMs, run, fork, tools, watchers, side }

  for (const [index, raw] of entries.entries()) {
    const entry: PluginEntry = isPlugin(raw) ? { plugin: raw } : raw
    const plugin = typeof entry.plugin === "function" ? undefined : entry.plugin
    const setup = typeof entry.plugin === "function" ? entry.plugin : entry.plugin.setup
    const name = entry.name ?? plugin?.name ?? entry.source ?? `plugin #${index + 1}`
    const source = entry.source ?? name
    /** The tools this plugin added after setup through `ctx.tools.set`. */
    const added = new Map<string, AnyTool>()
    /** The commands this plugin set after setup through `ctx.commands.set`. */
    const pushed: Contributor["pushed"] = { commands: [] }
    const ctx = pluginContext(host, entry, name, added, pushed)
    const hooks = yield* attempt(async () => setup(ctx)).pipe(
      Effect.tap((hooks) =>
        typeof hooks === "object" && hooks !== null
          ? Effect.void
          : Effect.fail(new Error("setup must return an object of hooks (return {} for none)"))
      ),
      Effect.catch((error) => report(name, "load", error, source).pipe(Effect.as(undefined)))
    )
    startupMark(`plugin ${name}`)
    if (!hooks) continue

    const agentNames: Array<string> = []
    for (const definition of hooks.agents ?? []) {
      const agent = yield* Effect.try(() => defineAgent(definition, name)).pipe(
        Effect.catch((error) => report(name, "agents", error).pipe(Effect.as(undefined)))
      )
      if (agent) {
        agents.set(agent.name, agent)
        agentNames.push(agent.name)
      }
    }
    for (const tool of hooks.tools ?? []) tools.set(tool.id, tool)
    loaded.push({ name, hooks, pushed })
    list.push({
      name,
      source,
      tools: (hooks.tools ?? []).map((tool) => tool.id),
      agents: agentNames,
      hooks: (Object.keys(hooks) as Array<keyof PluginHooks>).filter(
        (key): key is HookName => !CONTRIBUTION_KEYS.has(key)
      )
    })
  }

  // The config hook sees the merged config once, then event hooks follow the bus for the layer's lifetime.
  for (const { name, hooks } of loaded) {
    const hook = hooks.config
    if (hook) {
      yield* attempt(async () => hook({ config: config.info }, {})).pipe(
        Effect.catch((error) => report(name, "config", error))
      )
    }
  }
  for (const { name, hooks } of loaded) {
    const hook = hooks.event
    if (hook) {
      yield* bus.listen(async (event) => {
        if (event.type === "plugin.error" && event.plugin === name) return // never feed a plugin its own failure
        try {
          await hook({ event }, {})
        } catch (error) {
          await run(report(name, "event", error))
        }
      })
    }
  }
  yield* Effect.addFinalizer(() =>
    Effect.forEach(
      loaded,
      ({ name, hooks }) => {
        const dispose = hooks.dispose
        return dispose
          ? attempt(async () => dispose()).pipe(Effect.catch((error) => report(name, "dispose", error)))
          : Effect.void
      },
      { discard: true }
    )
  )

  const implemented = new Set<HookName>(list.flatMap((plugin) => plugin.hooks))

  const trigger = <K extends TriggerHookName>(hook: K, input: HookInput<K>, output: HookOutput<K>) =>
    implemented.has(hook)
      ? Effect.gen(function* () {
          for (const { name, hooks } of loaded) {
            const fn = hooks[hook] as ((input: HookInput<K>, output: HookOutput<K>) => void | Promise<void>) | undefined
            if (!fn) continue
            yield* withLimit(name, hook, async () => fn(input, output))
          }
          return output
        })
      : Effect.succeed(output)

  const contributions = makeContributions(loaded, {
    timeoutMs,
    report: (plugin, hook, error) => report(plugin, hook, error)
  })

  return Plugins.of({
    ...contributions,
    watch: (listener) => {
      watchers.add(listener)
      return () => {
        watchers.delete(listener)
      }
    },
    list,
    failed,
    // A getter: plugins may change their tools after setup (ctx.tools.set); each step reads the current list.
    get tools() {
      return [...tools.values()]
    },
    agents: [...agents.values()],
    has: (hook) => implemented.has(hook),
    trigger
  })
})
