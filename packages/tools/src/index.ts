/**
 * @lathe/tools: Lathe's built-in tools, shipped as a plugin.
 *
 * The default export is the plugin; it gives each loaded instance its own per-session state (reads, todos).
 * Each tool is also exported by name (`ReadTool`, `EditTool`, …), sharing one module-level state, for hosts
 * and tests that pick tools individually; `createTools` builds a fresh set.
 */
import { type AnyTool, definePlugin, type HostFiles } from "@lathe/plugin"
import { createApplyPatchTool } from "./apply-patch.js"
import { type BashConfig, type BashOptions, bashOptionsFromConfig, createBashTool, type StartEnv } from "./bash.js"
import { createEditTool } from "./edit.js"
import { createGlobTool } from "./glob.js"
import { createGrepTool } from "./grep.js"
import { createListTool } from "./list.js"
import { createMultiEditTool } from "./multiedit.js"
import { createQuestionTool } from "./question.js"
import { createReadTool } from "./read.js"
import type { RipgrepOption } from "./ripgrep.js"
import { ToolState } from "./state.js"
import { createTodoReadTool, createTodoWriteTool } from "./todo.js"
import { createWebFetchTool, type WebFetchOptions } from "./webfetch.js"
import { createWriteTool } from "./write.js"

export * from "./apply-patch.js"
export * from "./bash.js"
export * from "./config-advice.js"
export * from "./edit.js"
export type { EditSpec } from "./edit-apply.js"
export { applyEdit } from "./edit-apply.js"
export { findMatches, type MatcherName, type MatchOutcome } from "./edit-match.js"
export * from "./glob.js"
export * from "./grep.js"
export * from "./list.js"
export * from "./multiedit.js"
export { checkProtected, type Located, locate, resolvePath } from "./paths.js"
export * from "./question.js"
export * from "./read.js"
export type { RipgrepOption } from "./ripgrep.js"
export * from "./sandbox.js"
export { chooseSandbox, type SandboxChoice } from "./sandbox-plan.js"
export * from "./sandbox-run.js"
export { runShell, type ShellResult } from "./shell.js"
export * from "./state.js"
export * from "./todo.js"
export * from "./webfetch.js"
export { type HostLookup, PrivateDestinationError, privateAddressKind, type ResolvedAddress } from "./webfetch-net.js"
export * from "./write.js"

/** Options of {@link createTools}, also read from the plugin's config options (`{ "ripgrep": false }`). */
export interface ToolsOptions {
  /** Per-session state shared by the tools; a new one by default. */
  readonly state?: ToolState
  /** Which ripgrep glob and grep use (default "auto"; `false` forces the pure-Node walker). */
  readonly ripgrep?: RipgrepOption
  /** How bash runs commands (sandbox, environment); the plugin fills it from config. Default: no sandbox. */
  readonly bash?: BashOptions
  /** Which private hosts webfetch may reach; the plugin fills it from config (`webfetch.allow_private_hosts`). */
  readonly webfetch?: WebFetchOptions
  /**
   * Where read, write, edit, multiedit and apply_patch read and write text (the plugin passes `ctx.files`: an editor's
   * buffers). Default: the disk.
   */
  readonly files?: HostFiles
}

/** Builds every built-in tool over one shared state, in the order the model sees them. */
export const createTools = (options: ToolsOptions = {}): ReadonlyArray<AnyTool> => {
  const state = options.state ?? new ToolState()
  const ripgrep = options.ripgrep ?? "auto"
  const files = options.files
  const tools = [
    createBashTool(options.bash),
    createReadTool(state, files),
    createListTool(),
    createGlobTool({ ripgrep }),
    createGrepTool({ ripgrep }),
    createEditTool(state, files),
    createMultiEditTool(state, files),
    createWriteTool(state, files),
    createApplyPatchTool(state, files),
    createWebFetchTool(options.webfetch),
    createQuestionTool(),
    createTodoWriteTool(state),
    createTodoReadTool(state)
  ]
  return tools as ReadonlyArray<AnyTool>
}

const shared = new ToolState()
/** `read` over the module-level state. */
export const ReadTool = createReadTool(shared)
/** `write` over the module-level state (it sees reads made with {@link ReadTool}). */
export const WriteTool = createWriteTool(shared)
/** `edit` over the module-level state. */
export const EditTool = createEditTool(shared)
/** `multiedit` over the module-level state. */
export const MultiEditTool = createMultiEditTool(shared)
/** `apply_patch` over the module-level state. */
export const ApplyPatchTool = createApplyPatchTool(shared)
/** `list`. */
export const ListTool = createListTool()
/** `glob`, with ripgrep found automatically. */
export const GlobTool = createGlobTool({ ripgrep: "auto" })
/** `grep`, with ripgrep found automatically. */
export const GrepTool = createGrepTool({ ripgrep: "auto" })
/** `bash`. */
export const BashTool = createBashTool()
/** `webfetch`. */
export const WebFetchTool = createWebFetchTool()
/** `question`. */
export const QuestionTool = createQuestionTool()
/** `todowrite` over the module-level state. */
export const TodoWriteTool = createTodoWriteTool(shared)
/** `todoread` over the module-level state (it sees {@link TodoWriteTool}'s lists). */
export const TodoReadTool = createTodoReadTool(shared)

/** The sections of the merged config the tools read: bash's (`sandbox`, `shell`) and `webfetch`. */
type ToolsConfig = BashConfig & {
  readonly webfetch?: { readonly allow_private_hosts?: ReadonlyArray<string> | undefined } | undefined
}

/** What a host gives {@link createToolsPlugin} beyond the plugin context. */
export interface ToolsPluginOptions {
  /**
   * The environment Lathe was started with, read at each bash call (default: this process's). The CLI adds the
   * provider keys its launcher handed over on a descriptor (kept out of `process.env`), so that scrubbing and
   * `shell.env.inherit` decide about them as about any variable.
   */
  readonly startEnv?: StartEnv
}

/**
 * The plugin: contributes every built-in tool, with state private to this loaded instance. bash takes the config's
 * sandbox and environment settings and, from the context, the secrets and provider key variables to keep out of
 * commands, the truncation dir the sandbox leaves writable and the host's terminal (`ctx.terminal`) when it has one;
 * the notice that no sandbox is available goes to the plugin log as a warning. The file tools take `ctx.files`.
 */
export const createToolsPlugin = (options: ToolsPluginOptions = {}) =>
  definePlugin({
    name: "@lathe/tools",
    setup: async (ctx) => {
      // The host's merged config, validated by its schema: the sections the tools read (see ToolsConfig).
      const config = ctx.config as ToolsConfig
      return {
        tools: createTools({
          ripgrep: ctx.options.ripgrep === false ? false : "auto",
          bash: bashOptionsFromConfig(config, {
            notice: (message) => ctx.log.warn(message),
            secrets: ctx.secrets,
            secretNames: ctx.secretNames,
            truncationDir: ctx.truncationDir,
            startEnv: options.startEnv,
            terminal: ctx.terminal
          }),
          webfetch: { allowPrivateHosts: config.webfetch?.allow_private_hosts },
          ...(ctx.files ? { files: ctx.files } : {})
        })
      }
    }
  })

/** The plugin, its commands starting from this process's environment (see {@link createToolsPlugin}). */
export default createToolsPlugin()
