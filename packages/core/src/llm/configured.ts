import { flagshipCatalogModel } from "../catalog/model-catalog.js"
import { authFile, credentialStore, storedKeys } from "../config/auth-store.js"
import type { ApiKeyFile, ConfigInfo } from "../config/config.js"
import type { ModelConfig, ProviderConfig } from "../config/config-schema.js"
import type { ProviderDescriptor, ProviderEnv, ProviderSettings } from "../provider/descriptor.js"
import { nodeFetch } from "../provider/http-fetch.js"
import { keyHintFor, keyVariables } from "../provider/key-hint.js"
import { descriptorFor, descriptorOf, PROVIDERS } from "../provider/registry.js"

/**
 * Where a provider's key comes from: config `apiKey`, a variable (`env:ANTHROPIC_API_KEY`), `lathe auth login`, the
 * SDK's own credential chain (`ambient`), or nowhere.
 */
export type KeySource = "config" | `env:${string}` | "auth" | "ambient" | "none"

/** A provider as one run sees it: its descriptor, the settings its SDK gets, and whether a request can be tried. */
export interface ConfiguredProvider {
  /** The id models are referenced by (`anthropic` in `anthropic/claude-sonnet-4-5`). */
  readonly id: string
  readonly descriptor: ProviderDescriptor
  /** Where the key comes from. */
  readonly keySource: KeySource
  /** Whether a request can be tried: a key when one is needed, a base URL when one is required, nothing missing. */
  readonly ready: boolean
  /** What is missing, worded as the fix, when not `ready`. */
  readonly problem?: string
  /** The settings `descriptor.load` receives. */
  readonly settings: ProviderSettings
  /** The config's model entries for this provider (limits, prices, abilities). */
  readonly models: Readonly<Record<string, ModelConfig>>
  /** How a person fixes a missing or rejected key (follows "To fix it, "). */
  readonly keyHint: string
  /** From a `provider` block in config (else set up by the environment, a stored key, or a model reference). */
  readonly configured: boolean
}

/**
 * Which key `provider` sends, in words, never the key: "the key from OPENAI_API_KEY", "the key stored by `lathe auth
 * login openai` (<data>/auth.json)", "the apiKey in <file>" (or "the key from MY_KEY, which provider.x.apiKey in
 * <file> reads"); `undefined` when it sends none of those (ambient credentials, no key). `apiKeyFiles` is the config's
 * (see `ConfigShape.apiKeyFiles`).
 */
export const keyFromOf = (
  provider: Pick<ConfiguredProvider, "id" | "keySource">,
  apiKeyFiles: Readonly<Record<string, ApiKeyFile>> | undefined,
  env: ProviderEnv
): string | undefined => {
  const { id, keySource } = provider
  if (keySource.startsWith("env:")) return `the key from ${keySource.slice(4)}`
  if (keySource === "auth") return `the key stored by \`lathe auth login ${id}\` (${authFile(env)})`
  if (keySource !== "config") return undefined
  const set = apiKeyFiles?.[id]
  if (set === undefined) return `the key in provider.${id}.apiKey`
  return set.env === undefined
    ? `the apiKey in ${set.file} (provider.${id}.apiKey)`
    : `the key from ${set.env}, which provider.${id}.apiKey in ${set.file} reads`
}

/** What `configuredProviders` reads besides config and env; the stored keys default to `lathe auth`'s file. */
export interface ConfiguredOptions {
  readonly stored?: Readonly<Record<string, string>>
}

/** `text` ending as a sentence (a full stop added unless it ends with one, or with ! or ?). */
const sentence = (text: string) => (/[.!?]$/.test(text) ? text : `${text}.`)

const isSet = (env: ProviderEnv, name: string): boolean => (env[name] ?? "") !== ""

/** The stored key of `id` (an alias also finds the key stored under its type). */
const storedKeyOf = (stored: Readonly<Record<string, string>>, id: string, descriptor: ProviderDescriptor) =>
  stored[id] ?? (descriptorOf(id) === descriptor ? stored[descriptor.type] : undefined)

/** One provider of the table from its id, config block (empty when not configured) and the environment. */
const build = (
  id: string,
  config: ProviderConfig,
  env: ProviderEnv,
  stored: Readonly<Record<string, string>>,
  configured: boolean
): ConfiguredProvider => {
  const descriptor = descriptorFor(id, config.type)
  const fromEnv = descriptor.keyEnv.find((name) => isSet(env, name))
  const fromStore = storedKeyOf(stored, id, descriptor)
  const apiKey = config.apiKey || (fromEnv ? env[fromEnv] : undefined) || fromStore || undefined
  const keySource: KeySource = config.apiKey
    ? id === "env" && env.LATHE_API_KEY === config.apiKey
      ? "env:LATHE_API_KEY"
      : "config"
    : fromEnv
      ? `env:${fromEnv}`
      : fromStore
        ? "auth"
        : descriptor.auth === "ambient"
          ? "ambient"
          : "none"
  const urlEnv = descriptor.baseURL?.env
  const baseURL =
    config.baseURL || (urlEnv && isSet(env, urlEnv) ? env[urlEnv] : undefined) || descriptor.baseURL?.default
  const settings: ProviderSettings = {
    id,
    apiKey,
    baseURL,
    headers: config.headers,
    options: config.options ?? {},
    env,
    fetch: nodeFetch as typeof fetch,
    // A sign-in (Copilot, ChatGPT) renews its tokens during a run and keeps them where `lathe auth login` put them.
    ...(descriptor.signIn ? { credential: credentialStore(stored[id] !== undefined ? id : descriptor.type, env) } : {})
  }
  const keyHint = keyHintFor(id, config.type)
  const problem = problemOf(id, descriptor, settings, keyHint)
  return {
    id,
    descriptor,
    keySource,
    ready: problem === undefined,
    ...(problem === undefined ? {} : { problem }),
    settings,
    models: config.models ?? {},
    keyHint,
    configured
  }
}

/** What keeps `settings` from working, as the fix; `undefined` when a request can be tried. */
const problemOf = (
  id: string,
  descriptor: ProviderDescriptor,
  settings: ProviderSettings,
  keyHint: string
): string | undefined => {
  if (descriptor.unsupported !== undefined) return descriptor.unsupported
  if (descriptor.auth === "key" && !settings.apiKey) return `Provider "${id}" has no API key: ${keyHint}.`
  if (descriptor.baseURL?.required && !settings.baseURL)
    return (
      `Provider "${id}" (${descriptor.type}) has no baseURL: set provider.${id}.baseURL in lathe.json` +
      (descriptor.baseURL.env ? ` or ${descriptor.baseURL.env}` : "") +
      ' (for example "http://127.0.0.1:11434/v1"; an untrusted project\'s URL is ignored).'
    )
  const missing = descriptor.missing?.(settings)
  return missing === undefined ? undefined : `Provider "${id}" (${descriptor.name}) is not set up: ${sentence(missing)}`
}

/** Whether `descriptor` is set up by the environment or a stored key alone (no `provider` block). */
const detected = (descriptor: ProviderDescriptor, env: ProviderEnv, stored: Readonly<Record<string, string>>) =>
  (descriptor.detectEnv ?? descriptor.keyEnv).some((name) => isSet(env, name)) || stored[descriptor.type] !== undefined

/**
 * Every provider a run can use, by id: each `provider` block of config (its type from `type`, else from its id), then
 * each provider type not configured under its own id whose variables are set (`detectEnv`, default `keyEnv`) or whose
 * key `lathe auth login` stored, then each provider of the models.dev catalogue whose key it stored (`zhipuai`: its
 * key variable alone only makes it usable by reference, see `referencedProvider`). The same table the `LLM` layer
 * uses, for `lathe models`, `lathe auth list`, `/models` and `lathe doctor`. Local servers that need no key
 * (`ollama/qwen3`) are usable by reference without being listed here (see `referencedProvider`).
 */
export const configuredProviders = (
  info: Pick<ConfigInfo, "provider">,
  env: ProviderEnv,
  options: ConfiguredOptions = {}
): ReadonlyArray<ConfiguredProvider> => {
  const stored = options.stored ?? storedKeys(env)
  const table = new Map<string, ConfiguredProvider>()
  for (const [id, config] of Object.entries(info.provider ?? {})) table.set(id, build(id, config, env, stored, true))
  for (const descriptor of PROVIDERS)
    if (!table.has(descriptor.type) && detected(descriptor, env, stored))
      table.set(descriptor.type, build(descriptor.type, {}, env, stored, false))
  // A key `lathe auth login` stored for a catalogue provider (`zhipuai`) sets it up, as for a shipped one: storing it
  // chose it. Its key variable alone does not (several providers share one; see docs/providers.md).
  for (const id of Object.keys(stored))
    if (!table.has(id) && descriptorOf(id)?.catalogue !== undefined && descriptorOf(id)?.unsupported === undefined)
      table.set(id, build(id, {}, env, stored, false))
  return [...table.values()]
}

/**
 * The providers a default model is taken from when config names none, in order: `anthropic`, then `openai`, then every
 * other provider type that is ready under its own id (or an alias), as `configuredProviders` lists them. Each offers
 * its first config model, else its descriptor's `defaultModel`.
 */
export const defaultCandidates = (providers: ReadonlyArray<ConfiguredProvider>): ReadonlyArray<ConfiguredProvider> => {
  const typed = providers.filter(
    (provider) =>
      provider.ready &&
      provider.descriptor.type !== "openai-compatible" &&
      descriptorOf(provider.id) === provider.descriptor
  )
  const first = (type: string) => typed.filter((provider) => provider.descriptor.type === type).slice(0, 1)
  return [...new Set([...first("anthropic"), ...first("openai"), ...typed])]
}

/**
 * The model `provider` offers by default: its first config model, else the catalogue's flagship of its family
 * (`flagshipCatalogModel`: the newest tool-calling model matching the descriptor's `defaultFamily`, from the loaded
 * catalogue), else its descriptor's `defaultModel` (no catalogue loaded yet, or none fits).
 */
export const defaultModelOf = (provider: ConfiguredProvider): string | undefined =>
  Object.keys(provider.models)[0] ?? descriptorDefaultModel(provider.descriptor)

/**
 * A provider type's default model: the loaded catalogue's flagship of its `defaultFamily` (`flagshipCatalogModel`),
 * else its `defaultModel` (no catalogue loaded yet, or none fits).
 */
export const descriptorDefaultModel = (descriptor: ProviderDescriptor): string | undefined =>
  flagshipCatalogModel(descriptor.catalogID, descriptor.defaultFamily) ?? descriptor.defaultModel

/**
 * A provider a model reference names that no config block or variable set up, when it can work as it is: a type that
 * needs no key and has a default address (Ollama, LM Studio on their usual ports), one whose SDK finds credentials
 * itself and that says nothing is missing, or a provider of the models.dev catalogue whose key is set (a variable the
 * catalogue names for it, `ZHIPU_API_KEY`, or a key `lathe auth login` stored). `undefined` otherwise.
 */
export const referencedProvider = (
  id: string,
  env: ProviderEnv,
  options: ConfiguredOptions = {}
): ConfiguredProvider | undefined => {
  const descriptor = descriptorOf(id)
  if (descriptor === undefined || descriptor.unsupported !== undefined) return undefined
  // A catalogue provider (`zhipuai/glm-4.6`) is usable by reference once its key is there (a variable models.dev names
  // for it, or `lathe auth login`); what else it misses (a variable its URL names) is then its problem to report.
  if (descriptor.catalogue !== undefined) {
    const provider = build(id, {}, env, options.stored ?? storedKeys(env), false)
    return provider.ready || provider.keySource !== "none" ? provider : undefined
  }
  const local = descriptor.auth === "optional" && descriptor.baseURL?.default !== undefined
  if (!local && descriptor.auth !== "ambient") return undefined
  const provider = build(id, {}, env, options.stored ?? storedKeys(env), false)
  // An ambient provider whose credentials the SDK finds itself (an AWS profile, gcloud's login) with nothing missing.
  return local || provider.ready ? provider : undefined
}

/**
 * Why a provider type a model reference names is not usable (`anthropic/…` with no key): the sentence that starts a
 * `ProviderNotConfigured` message. `undefined` when `id` is not a provider type.
 */
export const unconfiguredProblem = (ref: string, id: string, env: ProviderEnv): string | undefined => {
  const descriptor = descriptorOf(id)
  if (descriptor === undefined) return undefined
  if (descriptor.unsupported !== undefined) return `The model ${ref} cannot be used. ${descriptor.unsupported}.`
  if (descriptor.signIn !== undefined)
    return `The model ${ref} needs a ${descriptor.name} sign-in: run \`lathe auth login ${id}\`.`
  if (descriptor.auth === "key") {
    const variables = keyVariables(descriptor.keyEnv)
    const how = descriptor.hints?.key ? ` (${descriptor.hints.key})` : ""
    const needs = variables === "" ? "an API key" : variables
    return (
      `The model ${ref} needs ${needs}, which is not set. Set it, run \`lathe auth login ${id}\`, or set ` +
      `provider.${id}.apiKey in lathe.json${how}.`
    )
  }
  const settings: ProviderSettings = {
    id,
    apiKey: undefined,
    baseURL: descriptor.baseURL?.default,
    headers: undefined,
    options: {},
    env,
    fetch: nodeFetch as typeof fetch
  }
  const missing = descriptor.missing?.(settings)
  if (missing !== undefined) return `The model ${ref} needs ${descriptor.name} set up: ${sentence(missing)}`
  return `The model ${ref} needs provider "${id}" set up: add provider.${id} to lathe.json.`
}
