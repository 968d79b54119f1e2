import type { AgentDefinition } from "./agent.js"
import type { HostFiles, HostTerminal } from "./host-side.js"
import type { Ruleset } from "./permission.js"
import type { LatheEvent } from "./schema/events.js"
import type { MessageWithParts, Session } from "./schema/message.js"
import type { PromptPart } from "./schema/prompt-part.js"
import type { AnyTool } from "./tool.js"

/**
 * The merged configuration as a plugin reads it (`lathe.json`, global and project, and `LATHE_*`): the keys every
 * plugin may care about are typed; the rest is there as the file has it, for a plugin that reads its own section
 * (validate it yourself, e.g. with zod). The host's value carries every key of its schema.
 */
export interface PluginConfig {
  /** The default model, `provider/model`. */
  readonly model?: string | undefined
  /** The cheaper model for titles and summaries, `provider/model`. */
  readonly small_model?: string | undefined
  readonly default_agent?: string | undefined
  /** How long one hook may run before the host reports it and goes on, in ms (see `plugin_timeout_ms`). */
  readonly plugin_timeout_ms?: number | undefined
  /**
   * Agents defined in config, by name (`lathe.json` `agent`): the fields a plugin that lists agents reads; the rest of
   * each is there as the file has it.
   */
  readonly agent?:
    | Readonly<
        Record<
          string,
          {
            readonly description?: string | undefined
            readonly mode?: "primary" | "subagent" | "all" | undefined
            readonly disable?: boolean | undefined
            readonly [key: string]: unknown
          }
        >
      >
    | undefined
  /** How programs are run: `env.inherit` names the variables that reach them though they look like credentials. */
  readonly shell?: { readonly env?: { readonly inherit?: ReadonlyArray<string> | undefined } | undefined } | undefined
  /** MCP servers by name (`lathe.json` `mcp`), as config validated them. */
  readonly mcp?: Readonly<Record<string, McpServerConfig>> | undefined
  /** The share of the context window MCP tool definitions may take before search takes over; `false`: never. */
  readonly mcp_tool_search?: number | false | undefined
  /** How long a turn's first request may wait for MCP servers still starting, in ms. */
  readonly mcp_startup_wait?: number | undefined
  readonly [key: string]: unknown
}

/** An MCP server Lathe starts itself and talks to over stdio (config `mcp.<name>`, `"type": "local"`). */
export interface McpLocalServerConfig {
  readonly type: "local"
  /** The program and its arguments. */
  readonly command: ReadonlyArray<string>
  readonly env?: Readonly<Record<string, string>> | undefined
  /** The working directory, relative to the project root. */
  readonly cwd?: string | undefined
  readonly enabled?: boolean | undefined
  /** How long to wait for it to start, in ms. */
  readonly timeout?: number | undefined
  /** Whether a run waits for it before its first model request. */
  readonly wait?: boolean | undefined
}

/** An MCP server reached over HTTP (config `mcp.<name>`, `"type": "remote"`). */
export interface McpRemoteServerConfig {
  readonly type: "remote"
  readonly url: string
  readonly headers?: Readonly<Record<string, string>> | undefined
  /** OAuth settings, or `false` never to try OAuth. */
  readonly oauth?:
    | false
    | {
        readonly clientId?: string | undefined
        readonly clientSecret?: string | undefined
        readonly scope?: string | undefined
        readonly clientMetadataUrl?: string | undefined
      }
    | undefined
  readonly enabled?: boolean | undefined
  readonly timeout?: number | undefined
  readonly wait?: boolean | undefined
}

/** One MCP server in config. The host's config schema outputs this shape (its type checks say so). */
export type McpServerConfig = McpLocalServerConfig | McpRemoteServerConfig

/** What the host knows about the model a step runs on (the `chat.params` hook's `modelInfo`). */
export interface ModelInfo {
  readonly providerID: string
  readonly modelID: string
  readonly name: string
  readonly limit: {
    /** Context window in tokens. */
    readonly context: number
    /** Most output tokens per step. */
    readonly output: number
  }
  /** USD per million tokens. */
  readonly cost: {
    readonly input: number
    readonly output: number
    readonly cacheRead: number
    readonly cacheWrite: number
  }
  readonly capabilities: {
    readonly reasoning: boolean
    readonly toolCall: boolean
    readonly temperature: boolean
    readonly image: boolean
  }
  /** How hard the model reasons on this turn (`low`, `medium`, `high`, or a token budget); absent: the provider's default. */
  readonly reasoning?: string | { readonly budget: number } | undefined
}

/** A provider Lathe can call in this run, as `ctx.catalog.providers()` lists it. */
export interface CatalogProvider {
  /** How models name it: `anthropic` in `anthropic/claude-sonnet-4-5`. */
  readonly id: string
  /** Its kind (`anthropic`, `openai`, `openai-compatible`…): the protocol Lathe speaks to it. */
  readonly type: string
  /** Whether it has what a request needs (a key, an address). */
  readonly ready: boolean
  /** The models config lists for it, in order (often none: the catalogue's models work too). */
  readonly models: ReadonlyArray<string>
  /** The model it offers when none is named: its first listed model, else its kind's default. */
  readonly defaultModel?: string | undefined
}

/** The providers and models Lathe knows of in this run (`ctx.catalog`). */
export interface PluginCatalog {
  /** Resolves once the model catalogue is loaded; `newestModel` answers from what is loaded (nothing before). */
  readonly ready: () => Promise<void>
  /**
   * The providers of this run: each `provider` of config, then each kind whose key is in the environment or stored by
   * `lathe auth login` (the same table `lathe models` shows).
   */
  readonly providers: () => ReadonlyArray<CatalogProvider>
  /** The newest model of `providerID` in the catalogue whose id starts with `prefix` (`claude-sonnet`), if any. */
  readonly newestModel: (providerID: string, prefix: string) => string | undefined
  /**
   * What Lathe knows of a model: the catalogue's entry with config's `provider.<id>.models.<model>` on top, or a small
   * safe window for a model it does not know. Answers from the loaded catalogue (await `ready()` first).
   */
  readonly model: (providerID: string, modelID: string) => ModelInfo
  /**
   * The `provider/model` Lathe answers with when config names no model: Anthropic's default when its key is there,
   * else OpenAI's, else another ready provider's; `undefined` when no provider is ready.
   */
  readonly defaultModel: () => string | undefined
}

/** How `ctx.run` runs a program. */
export interface RunProgramOptions {
  /** The working directory (default: the project root). */
  readonly cwd?: string
  /** Killed, with everything it started, after this long in ms (default: the host's, two minutes). */
  readonly timeoutMs?: number
  /** Written to its stdin, which is then closed (default: stdin closed at once). */
  readonly input?: string
}

/** How a program `ctx.run` started ended. */
export interface RunProgramResult {
  /** The exit code; null when it was killed by a signal. */
  readonly exitCode: number | null
  /** The signal that killed it, if one did. */
  readonly signal: string | null
  readonly stdout: string
  readonly stderr: string
  /** It outlived its time limit and was killed. */
  readonly timedOut: boolean
}

/** How `ctx.git` runs git. */
export interface GitOptions {
  /** The working directory (default: the project root). */
  readonly cwd?: string
  /** Options before the command, e.g. `["--work-tree", root]`; the repository's config is read as they make git read it. */
  readonly global?: ReadonlyArray<string>
  /** Killed, with everything it started, after this long in ms (default one minute). */
  readonly timeoutMs?: number
  /** Variables set for this call only (e.g. `{ LC_ALL: "C" }`). */
  readonly env?: Readonly<Record<string, string>>
}

/** A value, or a Promise of it: what a hook or a command may return. */
export type MaybePromise<T> = T | Promise<T>

/** A logger for plugins; lines carry the plugin's name. */
export interface PluginLogger {
  readonly info: (message: string, data?: Readonly<Record<string, unknown>>) => void
  readonly warn: (message: string, data?: Readonly<Record<string, unknown>>) => void
  readonly error: (message: string, data?: Readonly<Record<string, unknown>>) => void
}

/** Read access to sessions, for plugins (plain Promises). */
export interface PluginClient {
  readonly sessions: {
    /** The project's sessions, newest first. */
    readonly list: (options?: { readonly limit?: number }) => Promise<ReadonlyArray<Session>>
    readonly get: (sessionID: string) => Promise<Session>
    readonly messages: (sessionID: string) => Promise<ReadonlyArray<MessageWithParts>>
  }
}

/** What a plugin's setup function receives. */
export interface PluginContext {
  /** The directory Lathe was started in. */
  readonly directory: string
  /** The project root. */
  readonly root: string
  readonly projectID: string
  /** The merged configuration (read-only; use the `config` hook to see it once at load). */
  readonly config: PluginConfig
  /**
   * Whether the person trusts this project (`lathe trust`). Until then, what the project's files define may only
   * narrow what Lathe does: load prompts or rules from the project with that in mind.
   */
  readonly trusted: boolean
  /** Lathe's config dir (`~/.config/lathe`), for the person's own files (agents, skills). */
  readonly configDir: string
  /** The person's home directory. */
  readonly home: string
  /**
   * Where Lathe keeps the whole output of a tool result it cut short (`<data dir>/tool-output`; the model is told the
   * file to read). A plugin that runs programs in a sandbox of its own leaves it writable, as bash's sandbox does.
   */
  readonly truncationDir: string
  /** The options given with the plugin in config: `"plugin": [["my-plugin", { "level": 2 }]]`. */
  readonly options: Readonly<Record<string, unknown>>
  readonly log: PluginLogger
  readonly client: PluginClient
  /**
   * Runs a program (no shell) the way bash runs commands: its environment is Lathe's without any secret, and with the
   * host's sandbox (the CLI's) it runs inside the same sandbox as bash, in the project root unless `cwd` says
   * otherwise. Use it for every program the project could have put there (its `node_modules/.bin`, its scripts). A
   * failing program resolves with its exit code; the promise rejects only when the program cannot be run at all.
   */
  readonly run: (file: string, args: ReadonlyArray<string>, options?: RunProgramOptions) => Promise<RunProgramResult>
  /**
   * The values Lathe holds as credentials (API keys, tokens). A program you start yourself, outside `run`, should get
   * `scrubEnv(process.env, { secrets })` (from this kit) as its environment.
   */
  readonly secrets: ReadonlyArray<string>
  /**
   * The variables Lathe reads its provider keys from (`ANTHROPIC_API_KEY`, `AWS_SECRET_ACCESS_KEY`, …): never passed to
   * a program whatever they hold. Give them to `scrubEnv` as `names` with `secrets`.
   */
  readonly secretNames: ReadonlyArray<string>
  /**
   * Runs `git <args>` the way Lathe runs its own git calls: no program the repository's config names runs (fsmonitor,
   * filters, hooks, pagers…), and no `GIT_*` variable of Lathe's environment points it at another repository. A failing
   * git resolves with its exit code; the promise rejects when git cannot be run or the config cannot be made safe.
   */
  readonly git: (args: ReadonlyArray<string>, options?: GitOptions) => Promise<RunProgramResult>
  /**
   * How long one hook may run, in ms, before the host reports it and goes on (`plugin_timeout_ms`, or the host's
   * default): a hook that waits on something slow should give up a little earlier.
   */
  readonly hookTimeoutMs: number
  /** The providers and models Lathe knows of: e.g. to turn a model alias into `provider/model`. */
  readonly catalog: PluginCatalog
  /**
   * Changes this plugin's tools after setup (a server that connected later): `set` replaces every tool this plugin
   * added this way (the tools setup returned stay). The loop offers them from its next step.
   */
  readonly tools: { readonly set: (tools: ReadonlyArray<AnyTool>) => void }
  /**
   * Changes this plugin's commands after setup (a server that connected later), as `tools.set` does for tools: `set`
   * replaces every command this plugin added this way (the commands setup returned stay). Hosts list them from then on
   * (the interactive session's `/` completion is told of the change).
   */
  readonly commands: { readonly set: (commands: ReadonlyArray<PluginCommand>) => void }
  /**
   * Where the text of files is read and written when the host keeps it elsewhere than the disk alone (an editor over
   * `lathe acp`: its unsaved buffers). Absent: the disk. A tool that reads or edits text files should go through it
   * (binary files and images stay on disk).
   */
  readonly files?: HostFiles
  /** The host's terminal for commands (an editor's, where the person watches them). Absent: run them yourself. */
  readonly terminal?: HostTerminal
}

/** An argument a command takes, shown in help. Values are strings. */
export interface PluginCommandArgument {
  readonly name: string
  readonly description?: string
  readonly required?: boolean
}

/**
 * A named prompt a plugin contributes: `/name args` in the interactive session, `lathe run --command name args`.
 * `run` gets the words after the name (split like a shell: spaces separate, quotes group) and `input.text`, the same
 * arguments unsplit, and returns the prompt to send: text, or parts (text and files). Throw to refuse (an unknown or
 * missing argument) with a message written for the person: it is shown to them and nothing is sent.
 */
export interface PluginCommand {
  /** What follows the `/`: no spaces; `:` groups (`review`, `github:pr`). */
  readonly name: string
  /** One line, shown beside the name in `/` completion and `/help`. */
  readonly description: string
  readonly arguments?: ReadonlyArray<PluginCommandArgument>
  /** The agent to answer the prompt (default: the one in use). */
  readonly agent?: string
  /** The `provider/model` to answer the prompt (default: the one in use). */
  readonly model?: string
  readonly run: (
    args: ReadonlyArray<string>,
    input: { readonly text: string }
  ) => MaybePromise<ReadonlyArray<PromptPart> | string>
}

/** A resource a plugin lists: something a person attaches to a prompt with `@<uri>`. */
export interface PluginResource {
  /** Has a scheme (`notes:today`, `github:repo://x/y`) and no spaces or quotes: that is how `@<uri>` finds it. */
  readonly uri: string
  readonly name: string
  readonly description?: string
  readonly mimeType?: string
}

/**
 * Things a person attaches with `@<uri>` (the interactive session's `@` completion lists them beside files). Reading
 * goes to the plugin that lists the URI, or first to one whose `accepts` takes it. `read` returns the parts that go
 * with the prompt (mark text the person did not write `synthetic`); throw to say why it cannot be read (the person
 * is told, and the prompt goes without it).
 */
export interface PluginResources {
  readonly list: () => MaybePromise<ReadonlyArray<PluginResource>>
  readonly read: (uri: string) => MaybePromise<ReadonlyArray<PromptPart>>
  /** URIs this plugin reads though it may not list them (a server's resource templates); must answer at once. */
  readonly accepts?: (uri: string) => boolean
}

/** The model and agent a hook runs for. */
interface StepInput {
  readonly sessionID: string
  readonly agent: string
  readonly model: { readonly providerID: string; readonly modelID: string }
}

/**
 * The hooks a plugin may implement. Each is `(input, output) => void | Promise<void>`; hooks of all plugins run
 * in load order, one after another, and each may change `output` in place; the next hook sees the change.
 * A hook that throws is reported with the plugin's name and skipped; the session goes on.
 */
export interface Hooks {
  /** Every Bus event, delivered in order from a background listener (does not slow the loop). */
  readonly event?: (input: { readonly event: LatheEvent }, output: Record<string, never>) => void | Promise<void>
  /** The merged config, once at load. */
  readonly config?: (input: { readonly config: PluginConfig }, output: Record<string, never>) => void | Promise<void>
  /**
   * Change the system prompt of a step. `permission` is the step's effective ruleset (defaults, agent, config):
   * evaluate it with `evaluate` from `@lathe/plugin` to leave out what the agent may not use.
   */
  readonly "system.transform"?: (
    input: StepInput & { readonly permission: Ruleset },
    output: { system: string[] }
  ) => void | Promise<void>
  /** Change the history sent to the model in a step (what is stored stays as it was). */
  readonly "messages.transform"?: (input: StepInput, output: { messages: MessageWithParts[] }) => void | Promise<void>
  /** Change sampling parameters, provider options and headers of a step. */
  readonly "chat.params"?: (
    input: StepInput & { readonly modelInfo: ModelInfo },
    output: {
      temperature?: number
      topP?: number
      maxOutputTokens?: number
      options: Record<string, unknown>
      headers: Record<string, string>
    }
  ) => void | Promise<void>
  /** Change a text part once the model has finished it (before it is stored as final). */
  readonly "text.complete"?: (
    input: { readonly sessionID: string; readonly messageID: string; readonly partID: string },
    output: { text: string }
  ) => void | Promise<void>
  /**
   * Inspect or change a tool call's arguments before it runs, or block it: set `block` to a reason and the call fails
   * with that reason, which the model reads.
   */
  readonly "tool.before"?: (
    input: { readonly tool: string; readonly sessionID: string; readonly callID: string },
    output: { args: Record<string, unknown>; block?: string }
  ) => void | Promise<void>
  /** Inspect or change a tool's result before the model sees it. */
  readonly "tool.after"?: (
    input: {
      readonly tool: string
      readonly sessionID: string
      readonly callID: string
      readonly args: Readonly<Record<string, unknown>>
    },
    output: { title: string; output: string; metadata: Record<string, unknown> }
  ) => void | Promise<void>
  /** Decide a permission ask before the person sees it: leave `status` at "ask" to let them decide. */
  readonly "permission.ask"?: (
    input: {
      readonly sessionID: string
      readonly callID?: string
      readonly permission: string
      readonly patterns: ReadonlyArray<string>
      readonly metadata: Readonly<Record<string, unknown>>
    },
    output: { status: "ask" | "allow" | "deny"; message?: string }
  ) => void | Promise<void>
  /** Add context to (or replace the prompt of) a compaction summary. */
  readonly "session.compacting"?: (
    input: { readonly sessionID: string },
    output: { context: string[]; prompt?: string }
  ) => void | Promise<void>
  /**
   * A session's first turn in this process, before its prompt is answered: `source` is "startup" for a session
   * without history, "resume" for one with. Text pushed to `context` reaches the model with that turn's prompt.
   */
  readonly "session.start"?: (
    input: TurnInput & { readonly source: "startup" | "resume" },
    output: { context: string[] }
  ) => void | Promise<void>
  /**
   * A prompt, before the model sees it. Text pushed to `context` is stored with the prompt (as synthetic text: UIs
   * hide it, the model reads it). Set `block` to a reason and the prompt is withdrawn: it is removed from the session,
   * the turn ends without a model call, and the person sees the reason (a `notice`).
   */
  readonly "prompt.submit"?: (
    input: TurnInput & {
      readonly text: string
      /** The agent's tool switches (its definition's `tools`, e.g. `"github_*": true`). */
      readonly agentTools?: Readonly<Record<string, boolean>>
      /** The agent's own permission rules (its definition's, before the config's). */
      readonly agentPermission?: Ruleset
    },
    output: { context: string[]; block?: string }
  ) => void | Promise<void>
  /**
   * The model ended the turn (it answered without calling a tool). Set `continue` to an instruction and the turn goes
   * on with it as a new prompt. `continued` counts how often this turn went on that way; at 3 Lathe stops asking.
   */
  readonly "turn.stop"?: (
    input: TurnInput & { readonly continued: number },
    output: { continue?: string }
  ) => void | Promise<void>
}

/** The session and agent of a turn hook; `parentID` is set when the session is a subagent's child session. */
interface TurnInput {
  readonly sessionID: string
  readonly parentID?: string
  readonly agent: string
}

/** The name of a hook. */
export type HookName = keyof Hooks
/** The hooks run through `Plugins.trigger` (the others are delivered by the host). */
export type TriggerHookName = Exclude<HookName, "event" | "config">
/** A hook's input. */
export type HookInput<K extends HookName> = Parameters<NonNullable<Hooks[K]>>[0]
/** A hook's output, which hooks change in place. */
export type HookOutput<K extends HookName> = Parameters<NonNullable<Hooks[K]>>[1]

/** What a plugin's setup returns: hooks, and optionally tools, agents, commands and resources it contributes. */
export interface PluginHooks extends Hooks {
  readonly tools?: ReadonlyArray<AnyTool>
  readonly agents?: ReadonlyArray<AgentDefinition>
  /**
   * Named prompts (see {@link PluginCommand}): a list, or a function the host calls when it lists commands (for
   * commands read from files on demand). Add more later with `ctx.commands.set`. When two plugins contribute one
   * name, the first loaded keeps it and the other is reported once (a `plugin.error`).
   */
  readonly commands?: ReadonlyArray<PluginCommand> | (() => MaybePromise<ReadonlyArray<PluginCommand>>)
  /**
   * A command asked for by a name no plugin lists (a server's prompt not listed yet): return it, return undefined to
   * let the next plugin answer, or throw to say why there is none (e.g. naming the ones that exist).
   */
  readonly findCommand?: (name: string) => MaybePromise<PluginCommand | undefined>
  /** Things a person attaches with `@<uri>` (see {@link PluginResources}). */
  readonly resources?: PluginResources
  /** Called when Lathe shuts down. */
  readonly dispose?: () => void | Promise<void>
}

/** A plugin's setup function. */
export type PluginSetup = (ctx: PluginContext) => MaybePromise<PluginHooks>

// The brand keeps its old registry key, so a plugin made with an older kit (or core) is still recognised.
const PluginBrand = Symbol.for("@lathe/core/Plugin")

/** A plugin: a name (optional; the host uses the module it came from) and a setup function. */
export interface Plugin {
  readonly [PluginBrand]: true
  readonly name?: string
  readonly setup: PluginSetup
}

/**
 * Defines a plugin. The module's default export should be the result:
 * ```ts
 * export default definePlugin(async (ctx) => ({
 *   "tool.before": async (input, output) => { if (input.tool === "bash") ctx.log.info("running", output.args) }
 * }))
 * ```
 */
export function definePlugin(setup: PluginSetup): Plugin
export function definePlugin(options: { readonly name: string; readonly setup: PluginSetup }): Plugin
export function definePlugin(arg: PluginSetup | { readonly name: string; readonly setup: PluginSetup }): Plugin {
  return typeof arg === "function"
    ? { [PluginBrand]: true, setup: arg }
    : { [PluginBrand]: true, name: arg.name, setup: arg.setup }
}

/** Whether a value (e.g. a module's default export) is a plugin made with `definePlugin`. */
export const isPlugin = (value: unknown): value is Plugin =>
  typeof value === "object" && value !== null && PluginBrand in value
