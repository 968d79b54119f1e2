import type { MaybePromise, PluginCommand, PluginCommandArgument, PluginHooks, PluginResource } from "@lathe/plugin"
import type { PromptPart } from "@lathe/plugin/schema"
import { Duration, Effect, Schema } from "effect"

/** A plugin command as the host lists it: what `/` completion and help show, and the plugin it came from. */
export interface ListedCommand {
  readonly name: string
  readonly description: string
  readonly arguments: ReadonlyArray<PluginCommandArgument>
  readonly agent?: string
  readonly model?: string
  /** The plugin that contributed it. */
  readonly plugin: string
}

/** A plugin resource as the host lists it, with the plugin it came from. */
export interface ListedResource extends PluginResource {
  readonly plugin: string
}

/** What a command expands to: the prompt's parts, and the agent and model it asks for. */
export interface CommandExpansion {
  readonly parts: ReadonlyArray<PromptPart>
  readonly agent?: string
  readonly model?: string
}

/** No plugin has a command by this name. */
export class UnknownCommand extends Schema.TaggedError<UnknownCommand>()("UnknownCommand", {
  name: Schema.String,
  message: Schema.String
}) {}

/** No plugin lists or accepts this resource URI. */
export class UnknownResource extends Schema.TaggedError<UnknownResource>()("UnknownResource", {
  uri: Schema.String,
  message: Schema.String
}) {}

/**
 * A plugin refused a command or a resource (what it threw: a missing argument, an unreadable URI), or did not answer
 * within `plugin_timeout_ms` (then also reported as `plugin.error`). `message` is written for the person.
 */
export class PluginRequestError extends Schema.TaggedError<PluginRequestError>()("PluginRequestError", {
  plugin: Schema.String,
  message: Schema.String
}) {}

/** The text of whatever a plugin threw. */
export const thrownMessage = (error: unknown): string =>
  error instanceof Error ? error.message || error.name : typeof error === "string" ? error : JSON.stringify(error)

/** A value as a `plugin.error` names it: its type, and a short look at it. */
const describeValue = (value: unknown): string => {
  if (value === undefined || value === null) return String(value)
  if (Array.isArray(value)) return `a list (${JSON.stringify(value).slice(0, 60)})`
  const text = typeof value === "object" ? JSON.stringify(value) : String(value)
  return `${typeof value === "object" ? "an object" : `a ${typeof value}`} (${(text ?? "").slice(0, 60)})`
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null

const isPart = (value: unknown): value is PromptPart =>
  isRecord(value) &&
  ((value.type === "text" && typeof value.text === "string") ||
    (value.type === "file" && typeof value.url === "string" && typeof value.mime === "string"))

const isPartList = (value: unknown): value is ReadonlyArray<PromptPart> => Array.isArray(value) && value.every(isPart)

const isPrompt = (value: unknown): value is ReadonlyArray<PromptPart> | string =>
  typeof value === "string" || isPartList(value)

const isCommand = (value: unknown): value is PluginCommand =>
  isRecord(value) && typeof value.name === "string" && typeof value.run === "function"

const isCommandList = (value: unknown): value is ReadonlyArray<PluginCommand> =>
  Array.isArray(value) && value.every(isCommand)

const isResourceList = (value: unknown): value is ReadonlyArray<PluginResource> =>
  Array.isArray(value) && value.every((r) => isRecord(r) && typeof r.uri === "string" && typeof r.name === "string")

/** One loaded plugin, as the contributions see it: its hooks, and the commands it set after setup. */
export interface Contributor {
  readonly name: string
  readonly hooks: PluginHooks
  readonly pushed: { commands: ReadonlyArray<PluginCommand> }
}

/** What the host gives the contributions: the time limit, and how to report a plugin's failure. */
export interface ContributionHost {
  readonly timeoutMs: number
  readonly report: (plugin: string, hook: string, error: unknown) => Effect.Effect<void>
}

/** A command found by name, with the plugin it belongs to. */
interface Found {
  readonly plugin: string
  readonly command: PluginCommand
}

/**
 * Commands and resources of every plugin, listed uniformly: `commands` and `resources` merge them in load order (the
 * first plugin keeps a name or URI), `runCommand` and `readResource` route to the plugin that has it. Every call to a
 * plugin runs under the host's time limit.
 */
export const makeContributions = (contributors: ReadonlyArray<Contributor>, host: ContributionHost) => {
  const timeoutError = () =>
    new Error(
      `it did not finish within ${host.timeoutMs} ms (raise plugin_timeout_ms in lathe.json if it needs longer)`
    )
  /**
   * A call to a plugin under the time limit. A timeout is reported (plugin.error) and fails the call; what the plugin
   * threw fails it too, and is reported only when `reportThrown` (listing, which no person asked for directly).
   */
  const call = <A>(plugin: string, hook: string, reportThrown: boolean, run: () => MaybePromise<A>) =>
    // `async` so a plugin may answer with a plain value (plain JavaScript's first try) or throw before any await.
    Effect.tryPromise({ try: async () => run(), catch: (thrown) => thrown }).pipe(
      Effect.catch((thrown) =>
        (reportThrown ? host.report(plugin, hook, thrown) : Effect.void).pipe(
          Effect.andThen(Effect.fail(new PluginRequestError({ plugin, message: thrownMessage(thrown) })))
        )
      ),
      Effect.timeoutOrElse({
        duration: Duration.millis(host.timeoutMs),
        orElse: () =>
          host.report(plugin, hook, timeoutError()).pipe(
            Effect.andThen(
              Effect.fail(
                new PluginRequestError({
                  plugin,
                  message: `Plugin "${plugin}" failed in ${hook}: ${thrownMessage(timeoutError())}`
                })
              )
            )
          )
      })
    )

  /**
   * What a plugin answered, checked against the shape `hook` promises: a wrong shape is reported (plugin.error, naming
   * the plugin and the hook) and fails the call, as a throw would, instead of failing somewhere deeper in the host.
   */
  const checked = <A>(plugin: string, hook: string, value: unknown, expected: string, fits: (v: unknown) => v is A) =>
    fits(value)
      ? Effect.succeed(value)
      : Effect.gen(function* () {
          const error = new Error(`it returned ${describeValue(value)}, not ${expected}`)
          yield* host.report(plugin, hook, error)
          return yield* new PluginRequestError({
            plugin,
            message: `Plugin "${plugin}" failed in ${hook}: ${error.message}`
          })
        })

  const reported = new Set<string>()
  /** A `commands` list of the wrong shape (one command, not a list of them): reported once, and left out. */
  const listedOnce = (plugin: string, value: unknown) =>
    reported.has(`${plugin}\u0000commands`)
      ? Effect.succeed<ReadonlyArray<PluginCommand>>([])
      : Effect.sync(() => reported.add(`${plugin}\u0000commands`)).pipe(
          Effect.andThen(checked(plugin, "commands", value, "a list of commands", isCommandList)),
          Effect.orElseSucceed((): ReadonlyArray<PluginCommand> => [])
        )
  /** Every command with its plugin, in load order; a later plugin's command of a taken name is reported once. */
  const found = Effect.gen(function* () {
    const byName = new Map<string, Found>()
    for (const { name, hooks, pushed } of contributors) {
      const own = hooks.commands
      const listed =
        typeof own === "function"
          ? yield* call(name, "commands", true, own).pipe(
              Effect.flatMap((value) => checked(name, "commands", value, "a list of commands", isCommandList)),
              Effect.orElseSucceed((): ReadonlyArray<PluginCommand> => [])
            )
          : isCommandList(own ?? [])
            ? (own ?? [])
            : yield* listedOnce(name, own)
      for (const command of [...listed, ...pushed.commands]) {
        const holder = byName.get(command.name)
        if (!holder) byName.set(command.name, { plugin: name, command })
        else if (holder.plugin !== name && !reported.has(`${name}\u0000${command.name}`)) {
          reported.add(`${name}\u0000${command.name}`)
          yield* host.report(
            name,
            "commands",
            new Error(
              `its command "/${command.name}" has the name of one from "${holder.plugin}", which keeps it ` +
                "(the plugin loaded first wins); rename one of them"
            )
          )
        }
      }
    }
    return byName
  })

  const commands: Effect.Effect<ReadonlyArray<ListedCommand>> = Effect.map(found, (byName) =>
    [...byName.values()].map(({ plugin, command }) => ({
      name: command.name,
      description: command.description,
      arguments: command.arguments ?? [],
      ...(command.agent !== undefined ? { agent: command.agent } : {}),
      ...(command.model !== undefined ? { model: command.model } : {}),
      plugin
    }))
  )

  /** The command `name`: a listed one, else one a plugin's `findCommand` gives. */
  const lookup = (name: string) =>
    Effect.gen(function* () {
      const listed = (yield* found).get(name)
      if (listed) return listed
      for (const { name: plugin, hooks } of contributors) {
        const find = hooks.findCommand
        if (!find) continue
        const command = yield* call(plugin, "findCommand", false, () => find(name)).pipe(
          Effect.flatMap((value) =>
            checked(plugin, "findCommand", value, "a command or undefined", (v) => v === undefined || isCommand(v))
          )
        )
        if (command) return { plugin, command }
      }
      return yield* Effect.fail(
        new UnknownCommand({ name, message: `No command "${name}": no plugin or command file defines it.` })
      )
    })

  const runCommand = (name: string, args: ReadonlyArray<string>, text: string = args.join(" ")) =>
    Effect.gen(function* () {
      const { plugin, command } = yield* lookup(name)
      const hook = `command /${name}`
      const result = yield* call(plugin, hook, false, () => command.run(args, { text })).pipe(
        Effect.flatMap((value) => checked(plugin, hook, value, "a prompt (text, or a list of parts)", isPrompt))
      )
      const expansion: CommandExpansion = {
        parts: typeof result === "string" ? [{ type: "text", text: result }] : result,
        ...(command.agent !== undefined ? { agent: command.agent } : {}),
        ...(command.model !== undefined ? { model: command.model } : {})
      }
      return expansion
    })

  const resourceContributors = contributors.filter((c) => c.hooks.resources !== undefined)

  /** Every listed resource with the plugin that listed it, in load order; the first plugin keeps a URI. */
  const listing = Effect.gen(function* () {
    const byUri = new Map<string, { readonly resource: ListedResource; readonly owner: Contributor }>()
    for (const owner of resourceContributors) {
      const source = owner.hooks.resources
      if (!source) continue
      const listed = yield* call(owner.name, "resources.list", true, () => source.list()).pipe(
        Effect.flatMap((value) => checked(owner.name, "resources.list", value, "a list of resources", isResourceList)),
        Effect.orElseSucceed((): ReadonlyArray<PluginResource> => [])
      )
      for (const resource of listed)
        if (!byUri.has(resource.uri)) byUri.set(resource.uri, { resource: { ...resource, plugin: owner.name }, owner })
    }
    return byUri
  })

  const resources: Effect.Effect<ReadonlyArray<ListedResource>> = Effect.map(listing, (byUri) =>
    [...byUri.values()].map(({ resource }) => resource)
  )

  /** The first plugin whose `accepts` takes `uri` (one that throws takes nothing). */
  const accepting = (uri: string) =>
    resourceContributors.find(({ hooks }) => {
      try {
        return hooks.resources?.accepts?.(uri) === true
      } catch {
        return false
      }
    })

  const readResource = (uri: string) =>
    Effect.gen(function* () {
      const owner = accepting(uri) ?? (yield* listing).get(uri)?.owner
      const source = owner?.hooks.resources
      if (!owner || !source)
        return yield* Effect.fail(new UnknownResource({ uri, message: `No plugin offers the resource "${uri}".` }))
      return yield* call(owner.name, "resources.read", false, () => source.read(uri)).pipe(
        Effect.flatMap((value) => checked(owner.name, "resources.read", value, "a list of prompt parts", isPartList))
      )
    })

  return {
    commands,
    runCommand,
    resources,
    readResource,
    /** Whether some plugin contributes resources (lets a host skip looking for `@<uri>` mentions). */
    hasResources: resourceContributors.length > 0
  }
}
