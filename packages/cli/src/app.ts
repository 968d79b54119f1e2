import {
  Bus,
  Config,
  dataDir,
  HostSide,
  jsonLogger,
  LLM,
  LOG_REPEATS_EVENT,
  type LogSettings,
  loggingBus,
  logSettingsFromEnv,
  logText,
  ModelCatalog,
  Paths,
  PermissionDefaults,
  type PluginEntry,
  Plugins,
  Question,
  Retry,
  SecretMask,
  SessionStore,
  SessionWriter,
  Subagents,
  sharePluginModules,
  truncationDir
} from "@lathe/core"
// From the loop's own entry, which also names its inner services (part of what `appLayer` provides).
import { loopLayer } from "@lathe/core/loop"
import { startupMark, startupMarksOn } from "@lathe/core/startup-marks"
import { withMcpDefaults } from "@lathe/mcp/host"
import { defaults, PermissionLive } from "@lathe/permission"
import type { Plugin, Ruleset } from "@lathe/plugin"
import type { LatheEvent } from "@lathe/plugin/schema"
import { type Cause, Effect, Exit, type Fiber, Layer, Logger, ManagedRuntime, References, type Scope } from "effect"
import { sandboxedCommandRunner } from "./command-runner.js"
import type { CliIO } from "./io.js"
import { builtinPlugins } from "./plugins.js"
import { snapshotLayer } from "./snapshot.js"
import { storeLayer } from "./store.js"
import { plainText } from "./terminal-text.js"

/** `layer`, marking `name` once it is built when start-up marks are on (`bench/startup-phases.ts`); else `layer`. */
const marked =
  (name: string) =>
  <A, E, R>(layer: Layer.Layer<A, E, R>): Layer.Layer<A, E, R> =>
    startupMarksOn() ? Layer.tap(layer, () => Effect.sync(() => startupMark(name))) : layer

/** How the CLI composes Lathe for one run. */
export interface AppOptions {
  /** Extra plugins (tests); the built-in tools plugin always loads first. */
  readonly plugins?: ReadonlyArray<PluginEntry | Plugin>
  /** Sees every event synchronously as it is published (the renderer), before any subscriber. */
  readonly onEvent?: (event: LatheEvent) => void
  /** Whether start-up waits for the MCP servers (`lathe run`); the interactive UI does not: tools appear as they connect. */
  readonly mcpWait?: boolean
  /** `false` leaves MCP servers unstarted (commands that call no tools: undo, redo, agents). */
  readonly mcp?: boolean
  /**
   * The session store to use instead of building one: a process with one app per directory (`lathe serve`,
   * `lathe runner`) shares one store (one SQLite connection or one Postgres pool) among all of them.
   */
  readonly store?: SessionStore["Service"]
  /** Rules over the config's for this run only (`lathe run --allow/--deny`): last, so they win. */
  readonly rules?: Ruleset
  /**
   * MCP servers to start besides the config's, for this process only (an editor's, `lathe acp`): as a config `mcp`
   * block of the person's own, so the trust rules that apply to them are unchanged; the config's entry of a name wins.
   */
  readonly mcpServers?: Config["Service"]["info"]["mcp"]
  /**
   * What the host does in the tools' place (an editor's buffers and terminal, `lathe acp`): handed to the plugins as
   * `ctx.files` / `ctx.terminal`. Absent: the disk and Lathe's own processes.
   */
  readonly hostSide?: HostSide["Service"]
}

/** The config of `env`, with `rules` after its own permission rules and `mcpServers` under its own. */
const configLayer = (
  env: CliIO["env"],
  rules: Ruleset | undefined,
  mcpServers: Config["Service"]["info"]["mcp"] = {}
) => {
  const loaded = Config.layerWith(env)
  if ((rules === undefined || rules.length === 0) && Object.keys(mcpServers).length === 0) return loaded
  return Layer.effect(
    Config,
    Effect.map(Config, (config) =>
      Config.of({
        ...config,
        info: {
          ...config.info,
          permission: [...config.info.permission, ...(rules ?? [])],
          ...(Object.keys(mcpServers).length > 0 ? { mcp: { ...mcpServers, ...config.info.mcp } } : {})
        }
      })
    )
  ).pipe(Layer.provide(loaded))
}

/** The in-process bus, with `onEvent` called on every publish. */
const busLayer = (onEvent: ((event: LatheEvent) => void) | undefined) =>
  onEvent === undefined
    ? Bus.layer
    : Layer.effect(
        Bus,
        Effect.map(Bus, (bus) =>
          Bus.of({
            ...bus,
            publish: (event) => Effect.sync(() => onEvent(event)).pipe(Effect.andThen(bus.publish(event)))
          })
        )
      ).pipe(Layer.provide(Bus.layer))

/**
 * The log settings of `io` (`LATHE_LOG`, `LATHE_LOG_STDERR`; `--log-level` sets the first in `main`): undefined when
 * logging is off. A value that is not a level was already reported by `main`.
 */
const logSettings = (io: CliIO): LogSettings | undefined => {
  const settings = logSettingsFromEnv(io.env, dataDir(io.env), io.stderr)
  return settings === undefined || "error" in settings ? undefined : settings
}

/** The Bus, logging the loop's steps and tool calls to `<data>/logs/` when logging is on (docs/logging.md). */
const withLoopLog = <E, R>(io: CliIO, bus: Layer.Layer<Bus, E, R>): Layer.Layer<Bus, E, R> => {
  const settings = logSettings(io)
  return settings === undefined ? bus : loggingBus(bus, settings)
}

/** The default rules, first in every ruleset (agent rules, the user's config and approvals come after and win). */
const permissionDefaults = Layer.effect(
  PermissionDefaults,
  Effect.map(Paths, (paths) => withMcpDefaults(defaults({ truncationDir: truncationDir(paths.data) })))
)

/**
 * Every service of a real run: paths and config from the environment, the session store config picks, the
 * built-in plugins, the real permission engine and snapshots, the configured providers, and the loop.
 */
export const appLayer = (io: CliIO, options: AppOptions = {}) => {
  // Plugin files import these as the host's own copies, wherever they live (see sharePluginModules). A plugin file
  // written before the kit defined the contract imports `definePlugin`, `Tool`… from "@lathe/core": it still finds
  // them there (the kit's names under core's), so it keeps loading. Loaded before the first plugin file only: each
  // namespace initialises every module behind it, which a run without plugin files never needs.
  sharePluginModules(sharedWithPlugins)
  const config = configLayer(io.env, options.rules, options.mcpServers).pipe(marked("app config"))
  const store = options.store
    ? Layer.succeed(SessionStore, options.store)
    : storeLayer.pipe(Layer.provide(config), marked("app store"))
  // Session writes go through the writer: stored, then announced on the bus (and so to `onEvent`).
  // and with the secrets Lathe holds masked (SecretMask) in everything stored and announced.
  const base = SessionWriter.layer.pipe(
    Layer.provideMerge(
      SecretMask.layerWith(io.env).pipe(
        Layer.provideMerge(
          Layer.mergeAll(config, withLoopLog(io, busLayer(options.onEvent)), store).pipe(
            Layer.provideMerge(Paths.layer(io.cwd, io.env).pipe(marked("app paths")))
          )
        )
      )
    )
  )
  // Plugins run programs (ctx.run) in bash's sandbox, with the secrets removed from their environment.
  const host = sandboxedCommandRunner().pipe(
    Layer.provideMerge(options.hostSide ? Layer.merge(base, Layer.succeed(HostSide, options.hostSide)) : base)
  )
  const features = Layer.mergeAll(
    Plugins.layerFromConfig([
      ...builtinPlugins(io.env, { mcpWait: options.mcpWait !== false, mcp: options.mcp !== false }),
      ...(options.plugins ?? [])
    ]).pipe(marked("app plugins")),
    Question.layer,
    Subagents.layer,
    LLM.layerWith(io.env).pipe(Layer.provideMerge(ModelCatalog.layerWith(io.env)), marked("app model")),
    Retry.layer,
    snapshotLayer
  ).pipe(Layer.provideMerge(host), marked("app features"))
  const permission = Layer.mergeAll(PermissionLive, permissionDefaults).pipe(Layer.provideMerge(features))
  return loopLayer().pipe(Layer.provideMerge(permission), marked("app loop"))
}

/** The modules plugin files share with the host, loaded when the first plugin file is imported. */
const sharedWithPlugins = async () => {
  const [core, kit, zod] = await Promise.all([import("@lathe/core"), import("@lathe/plugin"), import("zod")])
  return { "@lathe/core": { ...kit, ...core }, "@lathe/plugin": kit, zod }
}

/** Whether a log line repeats an event the host also shows (see `LOG_REPEATS_EVENT`). */
export const repeatsEvent = (fiber: Fiber.Fiber<unknown, unknown>): boolean =>
  fiber.getRef(References.CurrentLogAnnotations)[LOG_REPEATS_EVENT] !== undefined

/**
 * The CLI's logger: warnings and errors as `lathe: …` lines on stderr (never on stdout, which carries the answer or
 * the JSON events); with `LATHE_LOG` set, every entry also as a JSON line in the log file (docs/logging.md). With
 * `showsEvents` (the command renders events, plugin failures among them) a line that repeats an event is left out,
 * so each is reported once.
 */
export const cliLogger = (io: CliIO, settings: { readonly showsEvents?: boolean } = {}) => {
  const log = logSettings(io)
  return Logger.layer([
    ...(log === undefined ? [] : [jsonLogger(log)]),
    Logger.make((options) => {
      if (settings.showsEvents === true && repeatsEvent(options.fiber)) return
      if (options.logLevel !== "Warn" && options.logLevel !== "Error" && options.logLevel !== "Fatal") return
      // The sentence only: a plugin's log fields (`{ paths: […] }`) go to the log file, not after the sentence.
      io.stderr(`lathe: ${plainText(logText(options.message))}\n`)
    })
  ])
}

/** The text to print for a failed command: the typed error's message, else the defect's, else "interrupted". */
export const failureText = (cause: Cause.Cause<unknown>): string => {
  const reason = cause.reasons[0]
  const error = reason?._tag === "Fail" ? reason.error : reason?._tag === "Die" ? reason.defect : "interrupted"
  return typeof error === "object" && error !== null && "message" in error && typeof error.message === "string"
    ? error.message
    : String(error)
}

/** Every service a real run provides. */
export type AppServices = Layer.Success<ReturnType<typeof appLayer>>

/** Runs a command's program on a real run's services and the CLI logger; a failure comes back as its text. */
export const runOnApp = async <A, E>(
  io: CliIO,
  program: Effect.Effect<A, E, AppServices | Scope.Scope>,
  options: AppOptions = {}
): Promise<{ readonly ok: true; readonly value: A } | { readonly ok: false; readonly message: string }> => {
  const exit = await Effect.runPromiseExit(
    program.pipe(Effect.scoped, Effect.provide(appLayer(io, options).pipe(Layer.provideMerge(cliLogger(io)))))
  )
  return Exit.isSuccess(exit) ? { ok: true, value: exit.value } : { ok: false, message: failureText(exit.cause) }
}

/** Loads only the config and paths (no plugins, no model): for commands that read settings. */
export const loadConfig = async (
  io: CliIO
): Promise<
  | { readonly ok: true; readonly value: { readonly config: Config["Service"]; readonly paths: Paths["Service"] } }
  | { readonly ok: false; readonly message: string }
> => {
  const layer = Config.layerWith(io.env).pipe(Layer.provideMerge(Paths.layer(io.cwd, io.env)))
  const exit = await Effect.runPromiseExit(
    Effect.gen(function* () {
      return { config: yield* Config, paths: yield* Paths }
    }).pipe(Effect.provide(layer))
  )
  return Exit.isSuccess(exit) ? { ok: true, value: exit.value } : { ok: false, message: failureText(exit.cause) }
}

/** The session store config picks for `io` (its cwd and env), with that config and those paths: no plugins, no model. */
const storeOnly = (io: CliIO) =>
  storeLayer.pipe(Layer.provideMerge(Config.layerWith(io.env)), Layer.provideMerge(Paths.layer(io.cwd, io.env)))

/** Runs `program` with only the config, paths and session store (no plugins, no model): for commands that read sessions. */
export const runOnStore = async <A, E>(
  io: CliIO,
  program: Effect.Effect<A, E, SessionStore | Config | Paths>
): Promise<{ readonly ok: true; readonly value: A } | { readonly ok: false; readonly message: string }> => {
  const exit = await Effect.runPromiseExit(program.pipe(Effect.scoped, Effect.provide(storeOnly(io))))
  return Exit.isSuccess(exit) ? { ok: true, value: exit.value } : { ok: false, message: failureText(exit.cause) }
}

/**
 * The session store config picks for `io` (its cwd and env), built once for a process that serves many directories;
 * `dispose` flushes and closes it (after the apps that use it are gone).
 */
export const sharedStore = async (
  io: CliIO
): Promise<{ readonly store: SessionStore["Service"]; readonly dispose: () => Promise<void> }> => {
  const runtime = ManagedRuntime.make(storeOnly(io))
  try {
    const store = await runtime.runPromise(
      Effect.gen(function* () {
        return yield* SessionStore
      })
    )
    return { store, dispose: () => runtime.dispose() }
  } catch (error) {
    await runtime.dispose().catch(() => undefined)
    throw error
  }
}

/**
 * The app factory of a process that serves many directories (`lathe serve`, `lathe runner`): `appLayer` for each
 * directory with the given plugins and shared store, its config notices on stderr, and the CLI's logger.
 */
export const directoryApps = (io: CliIO, options: Pick<AppOptions, "plugins" | "store">) => (directory: string) =>
  Layer.effectDiscard(
    Effect.map(Config, (config) => {
      for (const notice of config.notices) io.stderr(`lathe: ${plainText(notice)}\n`)
    })
  ).pipe(Layer.provideMerge(appLayer({ ...io, cwd: directory }, options)), Layer.provideMerge(cliLogger(io)))
