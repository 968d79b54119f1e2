/**
 * What counts as a secret in a child process's environment, and the one place that collects the secret values Lathe
 * holds. Every program Lathe starts (bash, MCP servers, formatters, notifiers) gets its environment through
 * {@link scrubEnv} with {@link secretValues}.
 */
import { scrubEnv as kitScrubEnv } from "@lathe/plugin"
import { isSecretName } from "@lathe/plugin/host"
import { PROVIDERS } from "../provider/registry.js"
import type { ConfigInfo } from "./config.js"
import type { ResolvedEnv } from "./config-load.js"

/**
 * Credentials the SDKs of ambient providers read from the environment themselves (AWS's credential chain, Bedrock's
 * API key, Azure's key), beyond the providers' `keyEnv`.
 */
const AMBIENT_CREDENTIAL_NAMES: ReadonlyArray<string> = [
  "AWS_SECRET_ACCESS_KEY",
  "AWS_SESSION_TOKEN",
  "AWS_BEARER_TOKEN_BEDROCK",
  "AZURE_API_KEY"
]

/**
 * Provider keys Lathe reads from its environment (every provider descriptor's `keyEnv`, `LATHE_API_KEY`, and the
 * ambient credentials above); their values are secrets wherever else they appear.
 */
export const PROVIDER_KEY_NAMES: ReadonlyArray<string> = [
  ...new Set([...PROVIDERS.flatMap((descriptor) => descriptor.keyEnv), "LATHE_API_KEY", ...AMBIENT_CREDENTIAL_NAMES])
]

/**
 * Variables whose values are never secrets even when a `{env:NAME}` placeholder uses them (a config may well say
 * `{env:HOME}`): matching their values would remove PATH and HOME from every command.
 */
const ORDINARY_NAME =
  /^(HOME|USER|USERNAME|LOGNAME|PATH|PWD|SHELL|TERM|TMPDIR|TMP|TEMP|LANG|LANGUAGE|EDITOR|VISUAL|HOSTNAME|LC_\w+|XDG_\w+)$/

/** The parts of the config that hold credentials. */
export type SecretSources = Partial<Pick<ConfigInfo, "provider" | "mcp" | "store">>

/** What {@link secretValues} reads: the merged config and the `{env:}` placeholders its files used. */
export interface SecretConfig {
  readonly info: SecretSources
  /** The `{env:NAME}` placeholders of trusted config files and their values (see `Config`'s `envResolved`). */
  readonly envResolved?: ReadonlyArray<ResolvedEnv>
}

const strings = (record: Readonly<Record<string, unknown>> | undefined): Array<string> =>
  Object.values(record ?? {}).filter((value): value is string => typeof value === "string")

/** String values under secret-looking keys (and every header value) in a provider's SDK `options`, at any depth. */
const optionSecrets = (value: unknown, secretKey: boolean): Array<string> => {
  if (typeof value === "string") return secretKey ? [value] : []
  if (Array.isArray(value)) return value.flatMap((item) => optionSecrets(item, secretKey))
  if (typeof value !== "object" || value === null) return []
  return Object.entries(value).flatMap(([key, item]) =>
    optionSecrets(item, secretKey || isSecretName(key) || key.toLowerCase() === "headers")
  )
}

/** A URL's password, decoded (`postgres://u:p%40ss@h` gives `p@ss`), if it has one. */
const urlPassword = (text: string): Array<string> => {
  try {
    const url = new URL(text)
    return url.password === "" ? [] : [url.password, decodeURIComponent(url.password)]
  } catch {
    return []
  }
}

/**
 * Every value Lathe itself uses as a credential, to be removed from child environments by value: providers' `apiKey`,
 * secret-looking `options` and `headers`; the store URL (config `store.url`, `LATHE_STORE`) and its password; MCP
 * servers' `env` values, `headers`, OAuth `clientSecret` and URL passwords; what the `{env:NAME}` placeholders of the
 * config resolved to (except ordinary variables such as HOME); and the provider keys in `env`. A header value like
 * `Bearer abc…` also yields its last word. Empty values are left out; the result has no duplicates.
 */
export const secretValues = (
  config: SecretConfig,
  env: Readonly<Record<string, string | undefined>> = process.env
): Array<string> => {
  const found: Array<string> = []
  const headerValues = (headers: Readonly<Record<string, string>> | undefined) =>
    strings(headers).flatMap((value) => [value, value.trim().split(/\s+/).pop() ?? ""])
  for (const provider of Object.values(config.info.provider ?? {})) {
    if (provider.apiKey !== undefined) found.push(provider.apiKey)
    found.push(...headerValues(provider.headers), ...optionSecrets(provider.options, false))
    if (provider.baseURL !== undefined) found.push(...urlPassword(provider.baseURL))
  }
  const store = config.info.store
  if (store?.type === "postgres") found.push(store.url, ...urlPassword(store.url))
  const fromEnv = env.LATHE_STORE?.trim()
  if (fromEnv !== undefined && fromEnv !== "sqlite") found.push(fromEnv, ...urlPassword(fromEnv))
  for (const server of Object.values(config.info.mcp ?? {})) {
    if (server.type === "local") found.push(...strings(server.env))
    else {
      found.push(...headerValues(server.headers), ...urlPassword(server.url))
      if (server.oauth && server.oauth.clientSecret !== undefined) found.push(server.oauth.clientSecret)
    }
  }
  for (const { name, value } of config.envResolved ?? []) if (!ORDINARY_NAME.test(name)) found.push(value)
  for (const name of PROVIDER_KEY_NAMES) found.push(env[name] ?? "")
  return [...new Set(found.map((value) => value.trim()).filter((value) => value !== ""))]
}

/**
 * The environment a child process gets: the kit's {@link kitScrubEnv} with the host's provider key variables
 * ({@link PROVIDER_KEY_NAMES}) counted as credentials too.
 */
export const scrubEnv = (
  base: Readonly<Record<string, string | undefined>>,
  options: { readonly inherit?: ReadonlyArray<string>; readonly secrets?: ReadonlyArray<string> } = {}
): { readonly env: Record<string, string>; readonly dropped: ReadonlyArray<string> } =>
  kitScrubEnv(base, { ...options, names: PROVIDER_KEY_NAMES })
