import type { ListedCommand, ListedResource } from "@lathe/core"
import type { PromptPart } from "@lathe/plugin/schema"
import { type Contributions, type ExpandedCommand, pluginContributions } from "../contributions.js"
import { commandFileContributions } from "../custom-commands.js"
import { listFiles } from "./mentions.js"
import type { ControllerBase } from "./session-view.js"
import { BUILTIN_COMMANDS, type SlashCommand } from "./slash-commands.js"

/**
 * What the person can complete and call: the project's files and the plugins' resources for `@`, the built-in and the
 * plugins' commands for `/`. The plugins' are taken from the backend's plugin host (again after the host is rebuilt)
 * and listed again whenever a plugin's commands change (an MCP server connected: the UI does not wait for them).
 * Attached to a server, whose plugins run there, only the command files are read, here.
 */
export class Listings {
  files: ReadonlyArray<string> = []
  /** The plugins' commands (markdown command files, MCP servers' prompts), listed at start and when they change. */
  pluginCommands: ReadonlyArray<ListedCommand> = []
  /** The plugins' resources (`@<uri>`: MCP servers' among them), listed with the commands. */
  resources: ReadonlyArray<ListedResource> = []
  /** Increases whenever the files, commands or resources listed change (the UI's completion caches by it). */
  revision = 0
  private contributions: Contributions | undefined
  private stopWatching: (() => void) | undefined
  /** Where the user's command files are read from, when attached (undefined: the backend's plugin host lists them). */
  private configDir: string | undefined
  /** Whether the custom commands read here (attached to a server) may choose their agent and model. */
  private commandsTrusted = false
  private mentionCache: { files: ReadonlyArray<string>; resources: ReadonlyArray<ListedResource> } | undefined
  private mentionList: ReadonlyArray<string> = []

  constructor(private readonly base: ControllerBase) {}

  /** Lists the plugins' commands and resources, and (not awaited) the project's files, at start. */
  async start(configDir: string | undefined, commandsTrusted: boolean): Promise<void> {
    this.configDir = configDir
    this.commandsTrusted = commandsTrusted
    await this.reload()
    void listFiles(this.base.project.root).then((files) => {
      this.files = files
      this.revision++
    })
  }

  /** Takes the plugins' commands and resources again (after the backend's services were rebuilt). */
  async reload(): Promise<void> {
    const { backend, view, project } = this.base
    this.stopWatching?.()
    this.stopWatching = undefined
    const host = backend.plugins ? await backend.plugins() : undefined
    if (host && !host.ok) return void view.note("warn", "plugins", [host.message])
    this.contributions = host
      ? pluginContributions(host.value)
      : this.configDir !== undefined
        ? commandFileContributions(project.root, this.configDir, this.commandsTrusted, (problem) =>
            view.note("warn", "custom command", [problem])
          )
        : undefined
    const contributions = this.contributions
    if (!contributions) return
    this.stopWatching = contributions.watch(() => void this.list(contributions))
    await this.list(contributions)
  }

  /** Lists the commands and resources again (a listing that fails keeps what was listed before). */
  private async list(contributions: Contributions): Promise<void> {
    const listed = await Promise.all([contributions.commands(), contributions.resources()]).catch(() => undefined)
    if (!listed) return
    const [commands, resources] = listed
    if (contributions !== this.contributions) return // the host was rebuilt meanwhile
    this.pluginCommands = commands
    this.resources = resources
    this.revision++
    this.base.view.changed()
  }

  /** What `@` completion offers: the project's files, then the plugins' resources. */
  get mentionTargets(): ReadonlyArray<string> {
    const cache = this.mentionCache
    if (!cache || cache.files !== this.files || cache.resources !== this.resources) {
      this.mentionCache = { files: this.files, resources: this.resources }
      this.mentionList = [...this.files, ...this.resources.map((resource) => resource.uri)]
    }
    return this.mentionList
  }

  /**
   * Every command the palette lists: built-ins, then the plugins' (the project's and the user's command files, then
   * MCP servers' prompts, then other plugins'); a built-in keeps its name.
   */
  commands(): ReadonlyArray<SlashCommand> {
    return [
      ...BUILTIN_COMMANDS,
      ...this.pluginCommands
        .filter((c) => !BUILTIN_COMMANDS.some((b) => b.name === c.name))
        .map((command) => ({ name: command.name, description: command.description, plugin: command }))
    ]
  }

  /** The parts of the resources `text` mentions (`@<uri>`); says which could not be attached. */
  async attach(text: string): Promise<ReadonlyArray<PromptPart>> {
    if (!this.contributions) return []
    const resources = await this.contributions.attach(text)
    for (const problem of resources.problems) this.base.view.note("warn", "resource not attached", [problem])
    return resources.parts
  }

  /**
   * A plugin's command `name` expanded with `args` (undefined: no plugin has it), or the error it threw. Returns
   * `{ command: undefined }` when nothing is listed at all.
   */
  async expand(
    name: string,
    args: string
  ): Promise<{ readonly command: ExpandedCommand | undefined } | { readonly error: string }> {
    if (!this.contributions) return { command: undefined }
    return this.contributions.expand(name, args).then(
      (command) => ({ command }),
      (error: unknown) => ({ error: error instanceof Error ? error.message : String(error) })
    )
  }

  /** Stops listening for the plugins' changes. */
  stop(): void {
    this.stopWatching?.()
  }
}
