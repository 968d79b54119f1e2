import type { CommandExpansion, ListedCommand, ListedResource, Plugins, PromptPart } from "@lathe/core"
import { Effect } from "effect"

/** A command expanded for sending: the text the person's message becomes, the other parts, the agent and model. */
export interface ExpandedCommand {
  /** The prompt's text (the command's text parts, joined by blank lines). */
  readonly text: string
  /** What goes with the text and is not the person's words: synthetic text and files. */
  readonly parts: ReadonlyArray<PromptPart>
  readonly agent?: string
  readonly model?: string
}

/** Splits command arguments like a shell: spaces separate, "double" or 'single' quotes group (and are removed). */
export const splitCommandWords = (text: string): Array<string> => {
  const words: Array<string> = []
  for (const match of text.matchAll(/(?:[^\s"']+|"[^"]*"|'[^']*')+/g))
    words.push(match[0].replace(/"([^"]*)"|'([^']*)'/g, (_, a?: string, b?: string) => a ?? b ?? ""))
  return words
}

/** A command's parts as a message: its plain text parts become the text; synthetic text and files go along. */
export const expandedCommand = (expansion: CommandExpansion): ExpandedCommand => {
  const own = expansion.parts.filter((part) => part.type === "text" && part.synthetic !== true)
  return {
    text: own.map((part) => (part.type === "text" ? part.text : "")).join("\n\n"),
    parts: expansion.parts.filter((part) => !own.includes(part)),
    ...(expansion.agent !== undefined ? { agent: expansion.agent } : {}),
    ...(expansion.model !== undefined ? { model: expansion.model } : {})
  }
}

/**
 * Expands the plugin command `name` (a markdown command file's, an MCP server's prompt, any plugin's) with `args`,
 * as `lathe run --command name args…` does; `text` is the arguments as typed (default: `args` joined with spaces).
 * Rejects with an Error whose message says what is wrong (no such command, a missing argument).
 */
export const expandCommand = async (
  plugins: Plugins["Service"],
  name: string,
  args: ReadonlyArray<string>,
  text?: string
): Promise<ExpandedCommand> => {
  const result = await Effect.runPromise(Effect.result(plugins.runCommand(name, args, text)))
  if (result._tag === "Failure") throw new Error(result.failure.message)
  return expandedCommand(result.success)
}

/** As {@link expandCommand}, but undefined when no plugin has the command (a UI then says so its own way). */
const expandKnown = async (
  plugins: Plugins["Service"],
  name: string,
  text: string
): Promise<ExpandedCommand | undefined> => {
  const result = await Effect.runPromise(Effect.result(plugins.runCommand(name, splitCommandWords(text), text)))
  if (result._tag === "Success") return expandedCommand(result.success)
  if (result.failure._tag === "UnknownCommand") return undefined
  throw new Error(result.failure.message)
}

// `@<uri>` at the start, or after whitespace, `(` or a quote; it ends at whitespace or a quote.
const MENTION = /(?:^|[\s("'])@([^\s"']+)/g

/**
 * The `@<uri>` mentions of `text` that could name a resource (they have a scheme: `<scheme>:<rest>`), each once, in
 * order, without trailing sentence punctuation (`.,;:!?)`).
 */
export const resourceMentions = (text: string): ReadonlyArray<string> => {
  const seen = new Set<string>()
  for (const match of text.matchAll(MENTION)) {
    const uri = (match[1] ?? "").replace(/[.,;:!?)]+$/, "")
    if (/^[^:]+:./.test(uri)) seen.add(uri)
  }
  return [...seen]
}

/**
 * The parts of the resources `message` mentions (`@<uri>`), read from the plugins that offer them. A mention no plugin
 * offers is left alone (a file, `@user:pass`); one that cannot be read is named in `problems` and left out.
 */
export const attachResources = async (
  plugins: Plugins["Service"],
  message: string
): Promise<{ readonly parts: ReadonlyArray<PromptPart>; readonly problems: ReadonlyArray<string> }> => {
  const parts: Array<PromptPart> = []
  const problems: Array<string> = []
  if (!plugins.hasResources) return { parts, problems }
  for (const uri of resourceMentions(message)) {
    const read = await Effect.runPromise(Effect.result(plugins.readResource(uri)))
    if (read._tag === "Success") parts.push(...read.success)
    else if (read.failure._tag === "PluginRequestError") problems.push(read.failure.message)
  }
  return { parts, problems }
}

/**
 * What the interactive session lists after `/` and `@` besides its own commands and files, and runs: the plugins'
 * commands and resources (markdown command files, MCP prompts and resources among them).
 */
export interface Contributions {
  readonly commands: () => Promise<ReadonlyArray<ListedCommand>>
  readonly resources: () => Promise<ReadonlyArray<ListedResource>>
  /**
   * Expands `/name text` (`text`: the arguments as typed): undefined when there is no such command; rejects with the
   * message to show when the command refuses.
   */
  readonly expand: (name: string, text: string) => Promise<ExpandedCommand | undefined>
  readonly attach: (message: string) => ReturnType<typeof attachResources>
  /** Calls `listener` when the commands change (a server connected); returns the function that stops it. */
  readonly watch: (listener: () => void) => () => void
}

/** The contributions of a plugin host. */
export const pluginContributions = (plugins: Plugins["Service"]): Contributions => ({
  commands: () => Effect.runPromise(plugins.commands),
  resources: () => Effect.runPromise(plugins.resources),
  expand: (name, text) => expandKnown(plugins, name, text),
  attach: (message) => attachResources(plugins, message),
  watch: (listener) => plugins.watch(listener)
})
