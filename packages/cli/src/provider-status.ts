/**
 * The providers a person has, as `lathe auth`, `lathe models` and `/models` show them (core's `configuredProviders`
 * table), and the CLI's helpers around it: masking a stored key, resolving a provider name typed on the command line,
 * asking a local server for its models within a time budget.
 */
import { type ConfigInfo, type ConfiguredProvider, configuredProviders } from "@lathe/core"
import {
  closeMatches,
  type DiscoveredModel,
  descriptorFor,
  descriptorOf,
  PROVIDERS,
  type ProviderDescriptor,
  type ProviderSettings,
  storedKeys
} from "@lathe/core/providers"

type Env = Readonly<Record<string, string | undefined>>

/**
 * The providers the person has (`configuredProviders`: configured, then set up by a variable or a stored key), with
 * the stored keys read once by the caller.
 */
export const yourProviders = (
  info: Pick<ConfigInfo, "provider">,
  env: Env,
  stored: Readonly<Record<string, string>> = storedKeys(env)
): ReadonlyArray<ConfiguredProvider> => configuredProviders(info, env, { stored })

/**
 * Provider `id` as a run would see it, also when the person does not have it (then `keySource` is `none` and
 * `problem` says what to set): `undefined` only for an id that is neither configured nor a provider type.
 */
export const providerStatus = (
  id: string,
  info: Pick<ConfigInfo, "provider">,
  env: Env,
  stored: Readonly<Record<string, string>> = storedKeys(env)
): ConfiguredProvider | undefined => {
  const yours = yourProviders(info, env, stored).find((provider) => provider.id === id)
  if (yours !== undefined || descriptorOf(id) === undefined) return yours
  const alone = configuredProviders({ provider: { [id]: {} } }, env, { stored })[0]
  return alone === undefined ? undefined : { ...alone, configured: false }
}

/** A key as it may be shown: its first 4 and last 2 characters when it has at least 12, else `****`. */
export const maskKey = (key: string): string => (key.length >= 12 ? `${key.slice(0, 4)}…${key.slice(-2)}` : "****")

/**
 * The provider a name given on the command line means: a configured provider id, else a shipped provider's type or
 * alias (stored under its type). `undefined` when it is neither.
 */
export const resolveProvider = (
  name: string,
  info: Pick<ConfigInfo, "provider">
): { readonly id: string; readonly descriptor: ProviderDescriptor } | undefined => {
  const config = info.provider?.[name]
  if (config !== undefined) return { id: name, descriptor: descriptorFor(name, config.type) }
  const descriptor = descriptorOf(name)
  return descriptor === undefined ? undefined : { id: descriptor.type, descriptor }
}

/**
 * Every provider name `resolveProvider` takes (configured ids, types, aliases), the ones close to `name` first (a
 * likely typo, or a name containing it), then the rest in registry order.
 */
export const providerNamesNear = (name: string, info: Pick<ConfigInfo, "provider">): ReadonlyArray<string> => {
  const names = [
    ...new Set([
      ...Object.keys(info.provider ?? {}),
      ...PROVIDERS.flatMap((descriptor) => [descriptor.type, ...(descriptor.aliases ?? [])])
    ])
  ]
  const wanted = name.toLowerCase()
  const containing = names.filter((candidate) => candidate.includes(wanted) || wanted.includes(candidate))
  const near = [...new Set([...closeMatches(name, names, 5), ...containing])]
  return [...near, ...names.filter((candidate) => !near.includes(candidate))]
}

/**
 * The catalogue provider whose models provider `id` serves: a shipped provider's `catalogID` when `id` is (or is
 * configured as) one, else `id` itself (a catalogue provider Lathe reaches as an OpenAI-compatible server).
 */
export const catalogueIDOf = (id: string, info: Pick<ConfigInfo, "provider">): string => {
  const type = info.provider?.[id]?.type
  const descriptor = type === undefined ? descriptorOf(id) : descriptorOf(type)
  return descriptor === undefined || descriptor.type === "openai-compatible" ? id : descriptor.catalogID
}

/**
 * The models a local server offers right now (`descriptor.discover`), or why it could not say: unreachable, or slower
 * than `timeoutMs` (every request it makes is aborted then too).
 */
export const discoverModels = async (
  settings: ProviderSettings,
  descriptor: ProviderDescriptor,
  timeoutMs: number
): Promise<{ readonly models: ReadonlyArray<DiscoveredModel> } | { readonly problem: string }> => {
  const discover = descriptor.discover
  if (discover === undefined) return { models: [] }
  const controller = new AbortController()
  const bounded: typeof fetch = (input, init) =>
    settings.fetch(input, {
      ...init,
      signal: init?.signal ? AbortSignal.any([init.signal, controller.signal]) : controller.signal
    })
  let timer: ReturnType<typeof setTimeout> | undefined
  const timeout = new Promise<{ readonly problem: string }>((resolve) => {
    timer = setTimeout(() => {
      controller.abort()
      resolve({ problem: `no answer within ${timeoutMs / 1000} s` })
    }, timeoutMs)
  })
  try {
    return await Promise.race([
      discover({ ...settings, fetch: bounded }).then(
        (models) => ({ models }),
        (error: unknown) => ({ problem: error instanceof Error ? error.message : String(error) })
      ),
      timeout
    ])
  } finally {
    clearTimeout(timer)
  }
}
