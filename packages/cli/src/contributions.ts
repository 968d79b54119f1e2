import {
  type ExpandedCommand,
  expandedCommand,
  type ListedCommand,
  type ListedResource,
  mentionedResources,
  type Plugins,
  splitCommandWords
} from "@lathe/core"
import type { PromptPart } from "@lathe/plugin/schema"
import { Effect } from "effect"

// How a command expands and which resources a message mentions are the turn-runner's (core's `loop/turn-input.ts`):
// the interactive session lists and runs them through the same functions `lathe run` and a server use.
export type { ExpandedCommand } from "@lathe/core"

/** Expands `/name text` (`text`: the arguments as typed); undefined when no plugin has the command. */
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

/**
 * The parts of the resources `message` mentions (`@<uri>`), read from the plugins that offer them. A mention no plugin
 * offers is left alone (a file, `@user:pass`); one that cannot be read is named in `problems` and left out.
 */
export const attachResources = (
  plugins: Plugins["Service"],
  message: string
): Promise<{ readonly parts: ReadonlyArray<PromptPart>; readonly problems: ReadonlyArray<string> }> =>
  Effect.runPromise(mentionedResources(plugins, message))

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
