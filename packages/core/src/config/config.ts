import { mkdir, writeFile } from "node:fs/promises"
import { join, relative, resolve, sep } from "node:path"
import type { Rule } from "@lathe/plugin"
import { permissionRules } from "@lathe/plugin/host"
import { Context, Effect, Layer } from "effect"
import { z } from "zod"
import { descriptorOf, isProviderType } from "../provider/registry.js"
import type { ForeignFormat } from "./config-foreign.js"
import {
  ConfigError,
  envReferences,
  isObject,
  isWithin,
  type ParsedConfig,
  parseJsonc,
  type ResolvedEnv,
  readText,
  schemaError,
  storeFromEnv,
  substitute,
  validate
} from "./config-load.js"
import { OPENCODE_FILES } from "./config-opencode.js"
import {
  type AgentConfig,
  type ConfigFile,
  type ConfigFileInput,
  configFileSchemaFor,
  type PluginSpec,
  providerTypesText
} from "./config-schema.js"
import { type DroppedRule, droppedAllowRules, stripUntrusted, type UntrustedItem } from "./config-untrusted.js"
import { Paths, type PathsShape } from "./paths.js"

/** The loader's error (one tagged error with a `reason`), defined beside the file reader. */
export { ConfigError, ConfigErrorReason, type ResolvedEnv } from "./config-load.js"
export type { DroppedRule, UntrustedItem } from "./config-untrusted.js"

/** What one untrusted project file asked for and did not get (see {@link ConfigShape.ignored}). */
export interface IgnoredFile {
  readonly file: string
  readonly items: ReadonlyArray<UntrustedItem>
}

/** An agent in the merged config: its permission is the ruleset of every source, in merge order. */
export type ConfigAgent = Omit<AgentConfig, "permission"> & { readonly permission: Array<Rule> }

/**
 * The merged, validated config. `permission` is the concatenated ruleset of every source (later sources last,
 * so they win under last-match-wins); `agent`, `plugin` and `instructions` are always present.
 */
export type ConfigInfo = Omit<ConfigFile, "permission" | "agent" | "plugin" | "instructions"> & {
  readonly permission: Array<Rule>
  readonly agent: Record<string, ConfigAgent>
  readonly plugin: Array<PluginSpec>
  readonly instructions: Array<string>
}

/** Where part of the config came from. */
export interface ConfigSource {
  /** The file path, or "env" for `LATHE_MODEL` / `LATHE_BASE_URL`. */
  readonly file: string
  readonly scope: "global" | "project" | "explicit" | "env"
  /** False for a project file of an untrusted project: what it may widen was dropped. */
  readonly trusted: boolean
  /** Set for another agent's file read as a source (Claude Code settings, OpenCode config), translated to Lathe's. */
  readonly format?: ForeignFormat
}

/** The loaded config, its sources and what was ignored. */
export interface ConfigShape {
  /** Merged and validated; permissions expanded to rules. */
  readonly info: ConfigInfo
  /** The files read (and "env"), lowest precedence first. */
  readonly sources: ReadonlyArray<ConfigSource>
  /**
   * What was ignored and why, for the person. Everything an untrusted project's files lost is one notice that
   * starts with "Ignored from untrusted" and ends saying how to trust the folder.
   */
  readonly notices: ReadonlyArray<string>
  /**
   * The same as the "Ignored from untrusted" notice, per file, with the value each dropped key asked for (the plugin
   * specs, the MCP servers, the provider URL), for a prompt that shows what trusting the folder would grant.
   */
  readonly ignored?: ReadonlyArray<IgnoredFile>
  /** The allow rules an untrusted project's files asked for and did not get (empty when trusted). */
  readonly dropped: ReadonlyArray<DroppedRule>
  /** Whether the project is trusted (`lathe trust`). */
  readonly trusted: boolean
  /**
   * The entries of `info.instructions` that only an untrusted project's files named (none when trusted). Whatever
   * they spell, a file they match is read only while its real path is inside the project (see `SystemPrompt`).
   */
  readonly untrustedInstructions?: ReadonlyArray<string>
  /**
   * The `{env:NAME}` placeholders trusted files used and the values they were replaced with: `secretValues` treats
   * them as secrets (a config that reads a variable into a header or a server's env holds a credential).
   */
  readonly envResolved?: ReadonlyArray<ResolvedEnv>
  /**
   * Set when an untrusted project's files lost settings (see `ignored`): the project root, where `lathe trust` trusts
   * it, and the person's own config file, where provider settings apply in every folder. A failure that comes from
   * those settings (no model, no key) names them instead of asking for them again.
   */
  readonly untrusted?: UntrustedPlaces
  /**
   * For each provider whose `apiKey` a file sets: the file that won (the last to set it) and, when the value is a
   * `{env:NAME}` placeholder, the variable's name. A rejected key's message names where it came from (never the key).
   */
  readonly apiKeyFiles?: Readonly<Record<string, ApiKeyFile>>
}

/** Where a provider's `apiKey` was set (see `ConfigShape.apiKeyFiles`). */
export interface ApiKeyFile {
  readonly file: string
  /** The variable a `{env:NAME}` value reads. */
  readonly env?: string
}

/** Where an untrusted project's ignored settings can take effect (see `ConfigShape.untrusted`). */
export interface UntrustedPlaces {
  readonly root: string
  /** The person's own config file: the one loaded (`<config>/lathe.json` or `.jsonc`), else `<config>/lathe.json`. */
  readonly userConfig: string
}

/** What `Config.layerTest` builds from: a config file's content as an object. */
export type ConfigTestInput = ConfigFileInput

/** The environment variables the loader reads. */
export type ConfigEnv = Readonly<Record<string, string | undefined>>

interface Loaded {
  readonly source: ConfigSource
  readonly data: ConfigFile
  readonly parsed?: ParsedConfig
  /** Rules translated from Claude Code settings, after the file's own `permission` rules. */
  readonly rules?: ReadonlyArray<Rule>
}

const mergeDeep = (base: Record<string, unknown>, next: Record<string, unknown>): Record<string, unknown> => {
  const out = { ...base }
  for (const [key, value] of Object.entries(next)) {
    const previous = out[key]
    out[key] = isObject(value) ? mergeDeep(isObject(previous) ? previous : {}, value) : value
  }
  return out
}

type Budget = NonNullable<ConfigFile["budget"]>

/** The lower of each cap (a cap missing on one side is the other's). */
const lowerCaps = (before: Budget | undefined, next: Budget): Budget => {
  const lower = (a: number | undefined, b: number | undefined) =>
    a === undefined ? b : b === undefined ? a : Math.min(a, b)
  const maxCost = lower(before?.max_cost, next.max_cost)
  const maxSession = lower(before?.max_session_cost, next.max_session_cost)
  return {
    ...(maxCost !== undefined ? { max_cost: maxCost } : {}),
    ...(maxSession !== undefined ? { max_session_cost: maxSession } : {})
  }
}

const pluginName = (spec: PluginSpec): string => (typeof spec === "string" ? spec : spec[0])

/**
 * Merges sources, lowest precedence first: objects deep-merge (later wins per key), `plugin` (one entry per
 * name; a later entry replaces an earlier one in place) and `instructions` concatenate without duplicates,
 * and permissions concatenate as rules. A provider without `type` takes its id when that is a provider type; `env`
 * without `type` and `baseURL` (model limits for LATHE_BASE_URL's server) is dropped when LATHE_BASE_URL is not set.
 */
const merge = (loaded: ReadonlyArray<Loaded>): Effect.Effect<ConfigInfo, ConfigError> => {
  let merged: Record<string, unknown> = {}
  const permission: Array<Rule> = []
  const agentRules: Record<string, Array<Rule>> = {}
  const plugin: Array<PluginSpec> = []
  const instructions: Array<string> = []
  let previousBudget: Budget | undefined
  for (const { source, data, rules: translated = [] } of loaded) {
    const { permission: rules, agent = {}, plugin: plugins = [], instructions: files = [], ...rest } = data
    // An untrusted project's rules (only deny and ask are left) may narrow a decision, never loosen one.
    const mark = (list: Array<Rule>): Array<Rule> =>
      source.trusted ? list : list.map((rule) => ({ ...rule, narrows: true }))
    permission.push(...mark([...permissionRules(rules, source.file), ...translated]))
    for (const spec of plugins) {
      const index = plugin.findIndex((existing) => pluginName(existing) === pluginName(spec))
      if (index === -1) plugin.push(spec)
      else plugin[index] = spec
    }
    for (const file of files) if (!instructions.includes(file)) instructions.push(file)
    const agents: Record<string, unknown> = {}
    for (const [name, { permission: own, ...fields }] of Object.entries(agent)) {
      agentRules[name] = [...(agentRules[name] ?? []), ...mark(permissionRules(own, source.file))]
      agents[name] = fields
    }
    merged = mergeDeep(merged, { ...rest, agent: agents })
    // An untrusted project's cost caps only lower the caps set so far, never raise them.
    if (!source.trusted && rest.budget !== undefined) merged.budget = lowerCaps(previousBudget, rest.budget)
    previousBudget = isObject(merged.budget) ? (merged.budget as Budget) : undefined
  }
  const providers = isObject(merged.provider) ? merged.provider : {}
  for (const [id, provider] of Object.entries(providers)) {
    if (!isObject(provider) || provider.type !== undefined) continue
    // `provider.env` without a type or baseURL only adds to LATHE_BASE_URL's server (its models' limits): it applies
    // when LATHE_BASE_URL is set, and without it there is no such server to add to.
    if (id === "env" && provider.baseURL === undefined) {
      delete providers[id]
      continue
    }
    const inferred = descriptorOf(id)?.type
    if (inferred !== undefined && inferred !== "openai-compatible") {
      // A provider of the models.dev catalogue (`zhipuai`) stays without a type: its id finds its descriptor.
      if (isProviderType(inferred)) providers[id] = { ...provider, type: inferred }
      continue
    }
    const last = [...loaded].reverse().find((l) => l.data.provider?.[id] !== undefined)
    const parsed = last?.parsed ?? { file: last?.source.file ?? "config", text: "", tree: undefined, value: {} }
    const path = ["provider", id, "type"]
    return Effect.fail(schemaError(parsed, parsed.value, [{ path, expected: providerTypesText }]))
  }
  const agent: Record<string, ConfigAgent> = {}
  for (const [name, fields] of Object.entries(isObject(merged.agent) ? merged.agent : {}))
    agent[name] = { ...(fields as Omit<AgentConfig, "permission">), permission: agentRules[name] ?? [] }
  // Every source was validated, and a deep merge of valid configs is valid.
  const base = merged as Omit<ConfigFile, "permission" | "agent" | "plugin" | "instructions">
  return Effect.succeed({ ...base, permission, agent, plugin, instructions })
}

const isHttpUrl = (text: string): boolean => {
  try {
    return ["http:", "https:"].includes(new URL(text).protocol)
  } catch {
    return false
  }
}

/** `LATHE_MODEL`, and `LATHE_BASE_URL` (+ `LATHE_API_KEY`) as provider `env`, as a config source. */
const fromEnv = (env: ConfigEnv): Effect.Effect<ConfigFile | undefined, ConfigError> => {
  const model = env.LATHE_MODEL || undefined
  const url = env.LATHE_BASE_URL || undefined
  const fail = (file: string, message: string) => Effect.fail(new ConfigError({ file, reason: "InvalidEnv", message }))
  if (url === undefined) {
    if (model === undefined) return Effect.succeed(undefined)
    if (!model.includes("/"))
      return fail(
        "LATHE_MODEL",
        `LATHE_MODEL must look like "provider/model" (for example LATHE_MODEL=anthropic/claude-sonnet-4-5), ` +
          `got "${model}".`
      )
    return Effect.succeed({ model })
  }
  if (!isHttpUrl(url))
    return fail(
      "LATHE_BASE_URL",
      `LATHE_BASE_URL is not an http(s) URL: "${url}" (for example LATHE_BASE_URL=http://localhost:11434/v1).`
    )
  if (model === undefined)
    return fail(
      "LATHE_BASE_URL",
      `LATHE_BASE_URL is set but LATHE_MODEL is not: set LATHE_MODEL to the id of a model the server at ${url} ` +
        "serves (for example LATHE_MODEL=qwen3-coder)."
    )
  const apiKey = env.LATHE_API_KEY
  return Effect.succeed({
    model: model.startsWith("env/") ? model : `env/${model}`,
    provider: { env: { type: "openai-compatible", baseURL: url, ...(apiKey ? { apiKey } : {}) } }
  })
}

/** The directories from the project root down to the working directory. */
const projectDirs = (paths: PathsShape): Array<string> => {
  if (!isWithin(paths.root, paths.directory)) return [paths.directory]
  const parts = relative(paths.root, paths.directory).split(sep).filter(Boolean)
  return [paths.root, ...parts.map((_, i) => join(paths.root, ...parts.slice(0, i + 1)))]
}

const trustFile = (paths: PathsShape) => join(paths.data, "trust.json")
const TrustStore = z.object({ trusted: z.array(z.string()), declined: z.array(z.string()).optional() })

/** The trust store: the trusted folders, and the project roots whose person answered "no" to trusting them. */
const readTrustRecords = Effect.fnUntraced(function* (paths: PathsShape) {
  const file = trustFile(paths)
  const text = yield* readText(file)
  if (text === undefined) return { trusted: [], declined: [] }
  const parsed = yield* parseJsonc(file, text)
  const store = yield* validate(parsed, parsed.value, TrustStore)
  return { trusted: store.trusted, declined: store.declined ?? [] }
})

const readTrustStore = (paths: PathsShape) => Effect.map(readTrustRecords(paths), (store) => store.trusted)

/** Whether the project root, or a folder above it, is in the trust store (`<data>/trust.json`). */
export const isTrusted = Effect.fn("Config.isTrusted")(function* (paths: PathsShape) {
  return (yield* readTrustStore(paths)).some((dir) => isWithin(dir, paths.root))
})

const writeTrustStore = (
  paths: PathsShape,
  { trusted, declined }: { readonly trusted: ReadonlyArray<string>; readonly declined: ReadonlyArray<string> }
) => {
  const file = trustFile(paths)
  return Effect.tryPromise({
    try: async () => {
      await mkdir(paths.data, { recursive: true })
      const store = declined.length > 0 ? { trusted, declined } : { trusted }
      await writeFile(file, `${JSON.stringify(store, null, 2)}\n`)
    },
    catch: (error) =>
      new ConfigError({
        file,
        reason: "Unreadable",
        message: `${file}: cannot write: ${error instanceof Error ? error.message : String(error)}`
      })
  })
}

/** The trusted folders (real paths, in the order they were trusted); each trusts every project inside it. */
export const trustedFolders = Effect.fn("Config.trustedFolders")(function* (paths: PathsShape) {
  return yield* readTrustStore(paths)
})

/**
 * Adds the project root (a real path, see `Paths`) to the trust store, so its config applies in full from the next
 * load, and forgets a "no" recorded for it by {@link declineTrust}.
 */
export const trustProject = Effect.fn("Config.trustProject")(function* (paths: PathsShape) {
  const { trusted, declined } = yield* readTrustRecords(paths)
  const still = declined.filter((dir) => dir !== paths.root)
  if (trusted.includes(paths.root) && still.length === declined.length) return
  yield* writeTrustStore(paths, {
    trusted: trusted.includes(paths.root) ? trusted : [...trusted, paths.root],
    declined: still
  })
})

/**
 * Records that the person answered "no" when the interactive UI offered to trust the project root, so it does not
 * ask again there (`lathe trust` still trusts it, and forgets the "no").
 */
export const declineTrust = Effect.fn("Config.declineTrust")(function* (paths: PathsShape) {
  const { trusted, declined } = yield* readTrustRecords(paths)
  if (declined.includes(paths.root)) return
  yield* writeTrustStore(paths, { trusted, declined: [...declined, paths.root] })
})

/** Whether the person declined to trust this project root (see {@link declineTrust}). */
export const trustDeclined = Effect.fn("Config.trustDeclined")(function* (paths: PathsShape) {
  return (yield* readTrustRecords(paths)).declined.includes(paths.root)
})

/**
 * Removes the project root from the trust store. `removed` says whether it was there; `coveredBy` lists the folders
 * still trusted above it (the project stays trusted through them until they are untrusted too).
 */
export const untrustProject = Effect.fn("Config.untrustProject")(function* (paths: PathsShape) {
  const { trusted, declined } = yield* readTrustRecords(paths)
  const kept = trusted.filter((dir) => dir !== paths.root)
  if (kept.length !== trusted.length) yield* writeTrustStore(paths, { trusted: kept, declined })
  return { removed: kept.length !== trusted.length, coveredBy: kept.filter((dir) => isWithin(dir, paths.root)) }
})

/**
 * The file `$LATHE_CONFIG` names: absolute, or relative to the home directory (`~/` too). Never the working
 * directory: it is trusted, and a relative name resolved there would load a file the repository chose.
 */
export const explicitConfigFile = (value: string, home: string): string =>
  resolve(home, value.startsWith("~/") ? value.slice(2) : value === "~" ? "." : value)

/**
 * Loads and merges, lowest precedence first: `<config>/lathe.json(c)`, each project dir from the root down to
 * the working directory (`lathe.json(c)`, `.lathe/lathe.json(c)`), `$LATHE_CONFIG` (see {@link explicitConfigFile}),
 * then `LATHE_MODEL` / `LATHE_BASE_URL` / `LATHE_STORE`. An untrusted project's files keep only what the allow-list
 * of `config-untrusted.ts` keeps; the rest is named in one notice.
 */
export const loadConfig = Effect.fn("Config.load")(function* (paths: PathsShape, env: ConfigEnv) {
  const trusted = yield* isTrusted(paths)
  const loaded: Array<Loaded> = []
  // Why the project root is not the repository git found comes first: everything below depends on that root.
  const notices: Array<string> = [...(paths.notices ?? [])]
  const ignored: Array<IgnoredFile> = []
  const dropped: Array<DroppedRule> = []
  const envResolved: Array<ResolvedEnv> = []
  const load = Effect.fnUntraced(function* (file: string, scope: ConfigSource["scope"], trustedFile: boolean) {
    const text = yield* readText(file)
    if (text === undefined) return false
    const parsed = yield* parseJsonc(file, text)
    const stripped = trustedFile ? { value: parsed.value, items: [] } : stripUntrusted(parsed.value)
    const substituted = yield* substitute(parsed, stripped.value, { env, home: paths.home, trusted: trustedFile })
    const data = yield* validate(parsed, substituted.value, configFileSchemaFor(substituted.value))
    const items = [...stripped.items, ...substituted.ignored.map((name) => ({ name }))]
    if (items.length > 0) ignored.push({ file, items })
    if (!trustedFile) dropped.push(...droppedAllowRules(parsed.value, file))
    else for (const name of envReferences(parsed.value)) envResolved.push({ name, value: env[name] ?? "" })
    loaded.push({ source: { file, scope, trusted: trustedFile }, data, parsed })
    return true
  })
  const problems: Array<string> = []
  // Claude Code settings, then OpenCode config, sit just below Lathe's own files at the same level.
  const foreign = Effect.fnUntraced(function* (
    file: string,
    format: ForeignFormat,
    scope: ConfigSource["scope"],
    trustedFile: boolean,
    base: string
  ) {
    const text = yield* readText(file)
    if (text === undefined) return
    // The translators are loaded only for a file that exists: most runs have none.
    const { loadForeign } = yield* Effect.promise(() => import("./config-foreign.js"))
    const places = { root: paths.root, base, home: paths.home }
    const read = yield* loadForeign(file, text, format, { trusted: trustedFile, places, env })
    if (read.items.length > 0) ignored.push({ file, items: read.items })
    dropped.push(...read.dropped)
    envResolved.push(...read.envResolved)
    problems.push(...read.problems)
    const source = { file, scope, trusted: trustedFile, format }
    loaded.push({ source, data: read.data, parsed: read.parsed, rules: read.rules })
  })
  const opencodeHome = join(env.XDG_CONFIG_HOME || join(paths.home, ".config"), "opencode")
  yield* foreign(join(paths.home, ".claude", "settings.json"), "claude-code", "global", true, paths.root)
  for (const name of OPENCODE_FILES) yield* foreign(join(opencodeHome, name), "opencode", "global", true, paths.root)
  for (const name of ["lathe.json", "lathe.jsonc"]) yield* load(join(paths.config, name), "global", true)
  for (const dir of projectDirs(paths)) {
    for (const name of ["settings.json", "settings.local.json"])
      yield* foreign(join(dir, ".claude", name), "claude-code", "project", trusted, dir)
    for (const name of OPENCODE_FILES) yield* foreign(join(dir, name), "opencode", "project", trusted, dir)
    for (const name of ["lathe.json", "lathe.jsonc", join(".lathe", "lathe.json"), join(".lathe", "lathe.jsonc")])
      yield* load(join(dir, name), "project", trusted)
  }
  if (problems.length > 0)
    notices.push(`Not understood in Claude Code or OpenCode settings, so not applied: ${problems.join("; ")}.`)
  if (ignored.length > 0)
    notices.push(
      `Ignored from untrusted ${ignored.map(({ file, items }) => `${file}: ${items.map((i) => i.name).join(", ")}`).join("; ")}. ` +
        `Run \`lathe trust\` in ${paths.root} to trust this folder.`
    )
  if (env.LATHE_CONFIG) {
    const file = explicitConfigFile(env.LATHE_CONFIG, paths.home)
    if (!(yield* load(file, "explicit", true)))
      return yield* new ConfigError({
        file,
        reason: "MissingFile",
        message:
          `LATHE_CONFIG is set to ${env.LATHE_CONFIG}, but ${file} does not exist ` +
          "(a relative LATHE_CONFIG is taken from your home directory, never from the working directory)."
      })
  }
  const environment = yield* fromEnv(env)
  const store = storeFromEnv(env.LATHE_STORE)
  if (store.error !== undefined)
    return yield* new ConfigError({ file: "LATHE_STORE", reason: "InvalidEnv", message: store.error })
  const fromVariables = store.store === undefined ? environment : { ...environment, store: store.store }
  if (fromVariables) loaded.push({ source: { file: "env", scope: "env", trusted: true }, data: fromVariables })
  const info = yield* merge(loaded)
  const named = (trustedFile: boolean) =>
    new Set(loaded.filter((l) => l.source.trusted === trustedFile).flatMap((l) => l.data.instructions ?? []))
  const theirs = named(true)
  const untrustedInstructions = [...named(false)].filter((entry) => !theirs.has(entry))
  const userConfig =
    loaded.find((l) => l.source.scope === "global" && l.source.format === undefined)?.source.file ??
    join(paths.config, "lathe.json")
  const apiKeyFiles: Record<string, ApiKeyFile> = {}
  for (const { source, data, parsed } of loaded)
    for (const [id, provider] of Object.entries(data.provider ?? {})) {
      if (!provider?.apiKey || source.file === "env") continue
      const raw = (parsed?.value as { provider?: Record<string, { apiKey?: unknown }> } | undefined)?.provider?.[id]
      const placeholder = typeof raw?.apiKey === "string" ? /^\{env:([^}]+)\}$/.exec(raw.apiKey.trim())?.[1] : undefined
      apiKeyFiles[id] = placeholder === undefined ? { file: source.file } : { file: source.file, env: placeholder }
    }
  return {
    info,
    sources: loaded.map((l) => l.source),
    notices,
    ignored,
    dropped,
    trusted,
    envResolved,
    untrustedInstructions,
    apiKeyFiles,
    ...(ignored.length > 0 ? { untrusted: { root: paths.root, userConfig } } : {})
  } satisfies ConfigShape
})

/** Builds a config from an object, validated and expanded like a file (rule source "config"), with no sources. */
const fromObject = Effect.fnUntraced(function* (input: ConfigTestInput) {
  const parsed: ParsedConfig = { file: "config", text: "", tree: undefined, value: input }
  const data = yield* validate(parsed, input, configFileSchemaFor(input))
  const info = yield* merge([{ source: { file: "config", scope: "explicit", trusted: true }, data, parsed }])
  return { info, sources: [], notices: [], dropped: [], trusted: true } satisfies ConfigShape
})

/** Lathe's merged configuration for the current project. */
export class Config extends Context.Service<Config, ConfigShape>()("@lathe/core/Config") {
  /** Loads the config files of `Paths` and the given environment variables. */
  static readonly layerWith = (env: ConfigEnv): Layer.Layer<Config, ConfigError, Paths> =>
    Layer.effect(
      Config,
      Effect.gen(function* () {
        return Config.of(yield* loadConfig(yield* Paths, env))
      })
    )

  /** Loads the config files of `Paths` and the process environment. */
  static readonly layer: Layer.Layer<Config, ConfigError, Paths> = Config.layerWith(process.env)

  /** A trusted config built from an object (validated like a file; an invalid one is a defect), no files. */
  static readonly layerTest = (input: ConfigTestInput = {}): Layer.Layer<Config> =>
    Layer.effect(
      Config,
      Effect.map(Effect.orDie(fromObject(input)), (shape) => Config.of(shape))
    )
}
