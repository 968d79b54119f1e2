/**
 * What counts as a secret in a child process's environment, and the one place that collects the secret values Lathe
 * holds. Every program Lathe starts (bash, MCP servers, formatters, notifiers) gets its environment through
 * {@link scrubEnv} with {@link secretValues}.
 */
import type { ConfigInfo } from "../config/config.js"
import type { ResolvedEnv } from "../config/config-load.js"
import { PROVIDERS } from "../provider/registry.js"

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

/** Names containing one of these (any case, anywhere in the name) are secrets: `MONKEY` is one too, by design. */
export const SECRET_NAME = /KEY|SECRET|TOKEN|PASSWORD|PASSWD|PASSPHRASE|CREDENTIAL|COOKIE/i

/**
 * Whole words of a name (split at `_`, `-`, `.`) that make it a secret: `GH_PAT`, `CORP_AUTH`, `DB_PASS`, `SENTRY_DSN`,
 * but not `PATH` or `GIT_AUTHOR_NAME`.
 */
const SECRET_WORDS: ReadonlySet<string> = new Set([
  "PAT",
  "AUTH",
  "PASS",
  "PWD",
  "DSN",
  "CRED",
  "CREDS",
  "JWT",
  "BEARER",
  "WEBHOOK",
  "APIKEY"
])

/**
 * Names that match the rules but hold no secret: the working directories (`PWD`, `OLDPWD`) and the SSH agent's socket
 * path (`SSH_AUTH_SOCK`: a path, not a key; commands that use git over SSH need it, as they do outside Lathe).
 */
const NOT_SECRET: ReadonlySet<string> = new Set(["PWD", "OLDPWD", "SSH_AUTH_SOCK"])

/** Whether a variable name looks like it holds a secret. */
export const isSecretName = (name: string): boolean => {
  if (NOT_SECRET.has(name)) return false
  if (SECRET_NAME.test(name)) return true
  return name
    .toUpperCase()
    .split(/[^A-Z0-9]+/)
    .some((word) => SECRET_WORDS.has(word))
}

/** `scheme://user:password@` (or `scheme://:password@`) anywhere in a text. */
const PASSWORD_URL = /[a-z][a-z0-9+.-]*:\/\/[^\s/?#@:]*:[^\s/?#@]+@/i

/** Whether a text holds a URL with a password in it (`postgres://u:pw@host/db`): a secret wherever it appears. */
export const hasPasswordUrl = (text: string): boolean => PASSWORD_URL.test(text)

/**
 * Secret values shorter than this are matched only when a variable's value is exactly the secret, longer ones when a
 * value contains them: a short dummy key such as `"none"` must not remove every variable that contains the word.
 */
export const MIN_CONTAINED_SECRET = 8

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
 * The environment a child process gets: `base` without every variable that (1) has a secret-looking name
 * ({@link isSecretName}, provider keys included), (2) holds a URL with a password ({@link hasPasswordUrl}) or
 * (3) carries one of `secrets` (its whole value, or containing it when the secret has at least
 * {@link MIN_CONTAINED_SECRET} characters), except the names in `inherit`, which pass as they are. `dropped` names
 * what was removed (names only, never values).
 */
export const scrubEnv = (
  base: Readonly<Record<string, string | undefined>>,
  options: { readonly inherit?: ReadonlyArray<string>; readonly secrets?: ReadonlyArray<string> } = {}
): { readonly env: Record<string, string>; readonly dropped: ReadonlyArray<string> } => {
  const inherit = new Set(options.inherit ?? [])
  const secrets = (options.secrets ?? []).filter((value) => value !== "")
  const exact = new Set(secrets)
  const contained = secrets.filter((value) => value.length >= MIN_CONTAINED_SECRET)
  const env: Record<string, string> = {}
  const dropped: Array<string> = []
  for (const [name, value] of Object.entries(base)) {
    if (value === undefined) continue
    const secret =
      PROVIDER_KEY_NAMES.includes(name) ||
      isSecretName(name) ||
      hasPasswordUrl(value) ||
      exact.has(value) ||
      contained.some((secret) => value.includes(secret))
    if (secret && !inherit.has(name)) dropped.push(name)
    else env[name] = value
  }
  return { env, dropped }
}
