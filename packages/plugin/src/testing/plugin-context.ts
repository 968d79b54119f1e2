import {
  Config,
  type ConfigInfo,
  type ConfigTestInput,
  type PluginContext,
  type PluginLogger,
  runUnsandboxed,
  scrubEnv
} from "@lathe/core"
import { Effect } from "effect"

/** What `pluginContext` builds from; every field has a default. */
export interface PluginContextOptions {
  /** The plugin's options, as `"plugin": [["my-plugin", { … }]]` in config gives them. Default `{}`. */
  readonly options?: Readonly<Record<string, unknown>>
  /** Whether the person trusts the project (`lathe trust`). Default true. */
  readonly trusted?: boolean
  /** `lathe.json` as an object, validated and merged as the host does (e.g. `{ shell: { … } }`). Default `{}`. */
  readonly config?: ConfigTestInput
  /** The environment `ctx.run`'s programs start from (its secrets removed, as the host does). Default `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>>
  /** Where `ctx.log` writes. Default: nowhere. */
  readonly log?: PluginLogger
  /** Called with each list a plugin passes to `ctx.tools.set`. Default: ignored. */
  readonly setTools?: PluginContext["tools"]["set"]
}

const silent: PluginLogger = { info: () => {}, warn: () => {}, error: () => {} }

/** The merged config the host would give a plugin for `input` (the same validation as a `lathe.json`). */
const configInfo = (input: ConfigTestInput): ConfigInfo =>
  Effect.runSync(
    Effect.gen(function* () {
      return (yield* Config).info
    }).pipe(Effect.provide(Config.layerTest(input)))
  )

/**
 * A plugin context for calling a plugin's `setup` and its hooks directly, without the host: `root` is the project
 * root, working directory, config dir and home; `ctx.run` runs programs for real, unsandboxed (the host's default),
 * with the secrets of `env` removed; the session client has no sessions.
 * ```ts
 * const hooks = await myPlugin.setup(pluginContext(dir, { options: { level: 2 } }))
 * ```
 */
export const pluginContext = (root: string, options: PluginContextOptions = {}): PluginContext => ({
  directory: root,
  root,
  trusted: options.trusted ?? true,
  configDir: root,
  home: root,
  projectID: "test",
  config: configInfo(options.config ?? {}),
  options: options.options ?? {},
  log: options.log ?? silent,
  tools: { set: options.setTools ?? (() => {}) },
  commands: { set: () => {} },
  run: (file, args, runOptions = {}) =>
    Effect.runPromise(
      runUnsandboxed(file, args, {
        ...runOptions,
        cwd: runOptions.cwd ?? root,
        env: scrubEnv(options.env ?? process.env).env
      })
    ),
  secrets: [],
  client: {
    sessions: {
      list: async () => [],
      get: async (id) => Promise.reject(new Error(`There is no session ${id} in a test plugin context.`)),
      messages: async () => []
    }
  }
})
