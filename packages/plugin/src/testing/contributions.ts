import { mkdtemp } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Plugin, PluginCommand, PluginHooks, PluginResource } from "../plugin.js"
import type { PromptPart } from "../schema/prompt-part.js"
import { type PluginContextOptions, pluginContext, type TestPluginContext } from "./plugin-context.js"

/** What `runCommand` and `readResource` set a plugin up with: a context's options, and its project root. */
export interface ContributionOptions extends PluginContextOptions {
  /** The project root the plugin is set up in. Default: a fresh temp folder. */
  readonly root?: string
}

/** A plugin set up for a test: its hooks, and the context it was given. */
export interface SetUpPlugin {
  readonly name: string
  readonly hooks: PluginHooks
  readonly context: TestPluginContext
}

/** What a command expands to, as the host sends it: the prompt's parts, and the agent and model it asks for. */
export interface CommandExpansion {
  readonly parts: ReadonlyArray<PromptPart>
  /** The text parts joined: the prompt as the model reads it. */
  readonly text: string
  readonly agent?: string
  readonly model?: string
}

/**
 * Sets a plugin up as the host would (with `pluginContext`), for `runCommand` and `readResource` to use more than once.
 * ```ts
 * const notes = await setUpPlugin(myPlugin, { root: dir, options: { folder: "notes" } })
 * ```
 */
export const setUpPlugin = async (plugin: Plugin, options: ContributionOptions = {}): Promise<SetUpPlugin> => {
  const root = options.root ?? (await mkdtemp(join(tmpdir(), "lathe-plugin-")))
  const context = pluginContext(root, options)
  const hooks = await plugin.setup(context)
  return { name: plugin.name ?? "plugin", hooks, context }
}

const setUp = (plugin: Plugin | SetUpPlugin, options: ContributionOptions) =>
  "hooks" in plugin ? Promise.resolve(plugin) : setUpPlugin(plugin, options)

const isPart = (value: unknown): value is PromptPart =>
  typeof value === "object" &&
  value !== null &&
  (("type" in value && value.type === "text" && "text" in value && typeof value.text === "string") ||
    ("type" in value && value.type === "file" && "url" in value && typeof value.url === "string"))

const fail = (plugin: string, hook: string, message: string) =>
  new Error(`Plugin "${plugin}" failed in ${hook}: ${message}`)

/** The plugin's commands as the host lists them: setup's (a list or a function), then those set through the context. */
export const listCommands = async (
  plugin: Plugin | SetUpPlugin,
  options: ContributionOptions = {}
): Promise<ReadonlyArray<PluginCommand>> => {
  const { hooks, context } = await setUp(plugin, options)
  const own = typeof hooks.commands === "function" ? await hooks.commands() : (hooks.commands ?? [])
  return [...own, ...context.contributed.commands]
}

/**
 * Runs a plugin's command as `/name args` (or `lathe run --command name args`) does: finds it among the plugin's
 * commands (or asks its `findCommand`), calls `run` with the words and their text, and resolves with the prompt it
 * expands to. `run` may answer with text, parts, or a Promise of either. Rejects with what `run` threw (the message
 * the person would see), or with an error naming the plugin and command when there is no such command or it answered
 * with something that is not a prompt (the host reports that as a `plugin.error`).
 * ```ts
 * const { text } = await runCommand(myPlugin, "wc", ["one", "two"])
 * ```
 */
export const runCommand = async (
  plugin: Plugin | SetUpPlugin,
  name: string,
  args: ReadonlyArray<string> = [],
  options: ContributionOptions = {}
): Promise<CommandExpansion> => {
  const loaded = await setUp(plugin, options)
  const listed = (await listCommands(loaded)).find((command) => command.name === name)
  const command = listed ?? (await loaded.hooks.findCommand?.(name))
  if (!command) throw new Error(`No command "${name}": plugin "${loaded.name}" does not define it.`)
  const result: unknown = await command.run(args, { text: args.join(" ") })
  const parts =
    typeof result === "string"
      ? [{ type: "text" as const, text: result }]
      : Array.isArray(result) && result.every(isPart)
        ? (result as ReadonlyArray<PromptPart>)
        : undefined
  if (!parts)
    throw fail(loaded.name, `command /${name}`, `it returned ${JSON.stringify(result)}, not a prompt (text or parts)`)
  return {
    parts,
    text: parts.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("\n"),
    ...(command.agent !== undefined ? { agent: command.agent } : {}),
    ...(command.model !== undefined ? { model: command.model } : {})
  }
}

/** The resources the plugin lists (`@<uri>` completion shows them). */
export const listResources = async (
  plugin: Plugin | SetUpPlugin,
  options: ContributionOptions = {}
): Promise<ReadonlyArray<PluginResource>> => {
  const { hooks } = await setUp(plugin, options)
  return hooks.resources ? await hooks.resources.list() : []
}

/**
 * Reads a resource as `@<uri>` in a prompt does: the plugin reads it if it lists the URI or its `accepts` takes it,
 * and the parts that go with the prompt come back. Rejects with what `read` threw, or with an error naming the plugin
 * when it does not offer the URI or answered with something that is not a list of parts.
 */
export const readResource = async (
  plugin: Plugin | SetUpPlugin,
  uri: string,
  options: ContributionOptions = {}
): Promise<ReadonlyArray<PromptPart>> => {
  const loaded = await setUp(plugin, options)
  const source = loaded.hooks.resources
  const offered =
    source !== undefined &&
    (source.accepts?.(uri) === true || (await source.list()).some((resource) => resource.uri === uri))
  if (!source || !offered) throw new Error(`Plugin "${loaded.name}" does not offer the resource "${uri}".`)
  const parts: unknown = await source.read(uri)
  if (!Array.isArray(parts) || !parts.every(isPart))
    throw fail(loaded.name, "resources.read", `it returned ${JSON.stringify(parts)}, not a list of prompt parts`)
  return parts
}
