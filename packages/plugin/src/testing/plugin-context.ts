import { tmpdir } from "node:os"
import { join } from "node:path"
import type { ModelInfo, PluginCatalog, PluginCommand, PluginConfig, PluginContext, PluginLogger } from "../plugin.js"
import { runProgram } from "../run-program.js"
import type { MessageWithParts, Session } from "../schema/message.js"
import { scrubEnv } from "../secret-env.js"
import type { AnyTool } from "../tool.js"

/** What `pluginContext` builds from; every field has a default. */
export interface PluginContextOptions {
  /** The plugin's options, as `"plugin": [["my-plugin", { … }]]` in config gives them. Default `{}`. */
  readonly options?: Readonly<Record<string, unknown>>
  /** The person's home folder (`ctx.home`, where e.g. `~/.claude` is read from). Default: `root`. */
  readonly home?: string
  /** Lathe's config folder (`ctx.configDir`, the person's own agents and skills). Default: `root`. */
  readonly configDir?: string
  /** `ctx.truncationDir`, where the host keeps cut-short tool output. Default: `lathe-tool-output` in the OS temp dir. */
  readonly truncationDir?: string
  /** Whether the person trusts the project (`lathe trust`). Default true. */
  readonly trusted?: boolean
  /** The merged config the plugin reads as `ctx.config`, as an object (e.g. `{ model: "acme/m1" }`). Default `{}`. */
  readonly config?: PluginConfig
  /** The environment `ctx.run`'s programs start from, its credentials removed as the host does. Default `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>>
  /** The values the host holds as credentials (`ctx.secrets`); `ctx.run` drops variables holding one. Default none. */
  readonly secrets?: ReadonlyArray<string>
  /** The host's provider key variables (`ctx.secretNames`); `ctx.run` drops them. Default none. */
  readonly secretNames?: ReadonlyArray<string>
  /** `ctx.hookTimeoutMs`. Default: the host's default, 30 s (or `config.plugin_timeout_ms` when given). */
  readonly hookTimeoutMs?: number
  /**
   * `ctx.catalog`, in part. Default: loaded, no provider, no model (`model` answers with the host's unknown-model
   * window, 32,768 tokens of context; `defaultModel` with `undefined`).
   */
  readonly catalog?: Partial<PluginCatalog>
  /** The sessions `ctx.client.sessions` knows (e.g. a subagent's child session, with its `parentID`). Default none. */
  readonly sessions?: ReadonlyArray<Session>
  /** The stored messages `ctx.client.sessions.messages` returns, by session id. Default none. */
  readonly messages?: Readonly<Record<string, ReadonlyArray<MessageWithParts>>>
  /** Where `ctx.log` writes. Default: nowhere. */
  readonly log?: PluginLogger
  /** Also called with each list a plugin passes to `ctx.tools.set` (the context keeps the last one either way). */
  readonly setTools?: PluginContext["tools"]["set"]
  /** Also called with each list a plugin passes to `ctx.commands.set` (the context keeps the last one either way). */
  readonly setCommands?: PluginContext["commands"]["set"]
}

/** What the host answers for a model it does not know: a small safe window. */
const unknownModel = (providerID: string, modelID: string): ModelInfo => ({
  providerID,
  modelID,
  name: modelID,
  limit: { context: 32_768, output: 4_096 },
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  capabilities: { reasoning: false, toolCall: true, temperature: true, image: false }
})

/** A plugin context for tests: the host's context, plus what the plugin set through it after setup. */
export interface TestPluginContext extends PluginContext {
  /** The tools and commands the plugin last passed to `ctx.tools.set` and `ctx.commands.set`. */
  readonly contributed: {
    readonly tools: ReadonlyArray<AnyTool>
    readonly commands: ReadonlyArray<PluginCommand>
  }
}

const silent: PluginLogger = { info: () => {}, warn: () => {}, error: () => {} }

/** The host's default for `plugin_timeout_ms`. */
const DEFAULT_HOOK_TIMEOUT_MS = 30_000

/** The environment without git's own variables (`GIT_DIR`…), which would point git at another repository. */
const withoutGitVariables = (env: Readonly<Record<string, string>>): Record<string, string> =>
  Object.fromEntries(Object.entries(env).filter(([name]) => !name.startsWith("GIT_")))

/**
 * A plugin context for calling a plugin's `setup` and its hooks directly, without the host: `root` is the project
 * root and working directory, and the config dir and home unless the options name others; `ctx.run` runs programs for real, unsandboxed (the host's default), in
 * the root, with the credentials of `env` removed (`scrubEnv`, the host's rule); `ctx.git` runs git the same way,
 * without git's own variables (not hardened against the repository's config as the host's is); the session client knows the `sessions` and `messages` given (none by default); `ctx.tools.set` and
 * `ctx.commands.set` are kept in `contributed` (and `runCommand` finds the commands set there).
 * ```ts
 * const hooks = await myPlugin.setup(pluginContext(dir, { options: { level: 2 } }))
 * ```
 */
export const pluginContext = (root: string, options: PluginContextOptions = {}): TestPluginContext => {
  const contributed: { tools: ReadonlyArray<AnyTool>; commands: ReadonlyArray<PluginCommand> } = {
    tools: [],
    commands: []
  }
  const secrets = options.secrets ?? []
  return {
    directory: root,
    root,
    trusted: options.trusted ?? true,
    configDir: options.configDir ?? root,
    home: options.home ?? root,
    truncationDir: options.truncationDir ?? join(tmpdir(), "lathe-tool-output"),
    projectID: "test",
    config: options.config ?? {},
    catalog: {
      ready: async () => {},
      providers: () => [],
      newestModel: () => undefined,
      model: unknownModel,
      defaultModel: () => undefined,
      ...options.catalog
    },
    hookTimeoutMs: options.hookTimeoutMs ?? options.config?.plugin_timeout_ms ?? DEFAULT_HOOK_TIMEOUT_MS,
    options: options.options ?? {},
    log: options.log ?? silent,
    tools: {
      set: (tools) => {
        contributed.tools = [...tools]
        options.setTools?.(tools)
      }
    },
    commands: {
      set: (commands) => {
        contributed.commands = [...commands]
        options.setCommands?.(commands)
      }
    },
    run: (file, args, runOptions = {}) =>
      runProgram(file, args, {
        ...runOptions,
        cwd: runOptions.cwd ?? root,
        env: scrubEnv(options.env ?? process.env, { secrets, names: options.secretNames ?? [] }).env
      }),
    secrets,
    secretNames: options.secretNames ?? [],
    git: (args, gitOptions = {}) =>
      runProgram("git", [...(gitOptions.global ?? []), ...args], {
        cwd: gitOptions.cwd ?? root,
        env: {
          ...withoutGitVariables(
            scrubEnv(options.env ?? process.env, { secrets, names: options.secretNames ?? [] }).env
          ),
          ...gitOptions.env
        },
        timeoutMs: gitOptions.timeoutMs ?? 60_000
      }),
    client: {
      sessions: {
        list: async (listOptions = {}) => (options.sessions ?? []).slice(0, listOptions.limit),
        get: async (id) => {
          const session = options.sessions?.find((candidate) => candidate.id === id)
          if (session === undefined) throw new Error(`There is no session ${id} in this test plugin context.`)
          return session
        },
        messages: async (id) => options.messages?.[id] ?? []
      }
    },
    contributed
  }
}
