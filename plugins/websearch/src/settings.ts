import { z } from "zod"

/** The web search services the `websearch` tool can query. */
export const WEB_BACKENDS = ["searxng", "brave", "exa", "tavily"] as const
export type WebBackendName = (typeof WEB_BACKENDS)[number]

/** The code search services the `codesearch` tool can query. */
export const CODE_BACKENDS = ["github", "sourcegraph"] as const
export type CodeBackendName = (typeof CODE_BACKENDS)[number]

/**
 * The `websearch` section of lathe.json as this plugin reads it (the host's config schema checks the same shape).
 * Keys are never written in config: `key_env` names the variable that holds one.
 */
export const WebsearchSettings = z
  .object({
    /** The service `websearch` queries; `off` offers no `websearch` tool. Default: the first whose variable is set. */
    backend: z.enum([...WEB_BACKENDS, "off"]).optional(),
    /** The service's address (SearxNG: required, e.g. `http://localhost:8080`; the others: their public API). */
    url: z.string().optional(),
    /** The variable holding the service's key (default `BRAVE_API_KEY`, `EXA_API_KEY`, `TAVILY_API_KEY`). */
    key_env: z.string().optional(),
    /** How many results one search returns (default 8). */
    max_results: z.number().int().positive().max(20).optional(),
    /** Whether a model whose provider searches itself (Anthropic, OpenAI, Google) gets that search (default true). */
    native: z.boolean().optional(),
    /** `codesearch`: search code in public repositories; not offered without a backend. */
    codesearch: z
      .object({
        backend: z.enum([...CODE_BACKENDS, "off"]).optional(),
        /** GitHub: `https://api.github.com` (or an Enterprise API URL); Sourcegraph: the instance, default sourcegraph.com. */
        url: z.string().optional(),
        /** The variable holding the token (default `GITHUB_TOKEN`, `SRC_ACCESS_TOKEN`). */
        token_env: z.string().optional()
      })
      .strict()
      .optional()
  })
  .strict()
export type WebsearchSettings = z.infer<typeof WebsearchSettings>

/** A web backend, ready to query. */
export interface WebBackendConfig {
  readonly name: WebBackendName
  readonly url: string
  /** Absent for SearxNG (an instance needs none). */
  readonly key?: string
}

/** A code backend, ready to query. */
export interface CodeBackendConfig {
  readonly name: CodeBackendName
  readonly url: string
  readonly token?: string
}

type Env = Readonly<Record<string, string | undefined>>

/** Each web service's public API and the variable its key is read from by default. */
export const WEB_DEFAULTS: Readonly<Record<WebBackendName, { readonly url?: string; readonly keyEnv?: string }>> = {
  searxng: {},
  brave: { url: "https://api.search.brave.com", keyEnv: "BRAVE_API_KEY" },
  exa: { url: "https://api.exa.ai", keyEnv: "EXA_API_KEY" },
  tavily: { url: "https://api.tavily.com", keyEnv: "TAVILY_API_KEY" }
}

/** Each code service's API and the variable its token is read from by default. */
export const CODE_DEFAULTS: Readonly<Record<CodeBackendName, { readonly url: string; readonly tokenEnv: string }>> = {
  github: { url: "https://api.github.com", tokenEnv: "GITHUB_TOKEN" },
  sourcegraph: { url: "https://sourcegraph.com", tokenEnv: "SRC_ACCESS_TOKEN" }
}

const set = (value: string | undefined): string | undefined =>
  value === undefined || value.trim() === "" ? undefined : value.trim()

/**
 * The web backend `settings` and `env` make: the configured one when its URL and key are there, else (nothing
 * configured) the first service whose variable is set (`SEARXNG_URL`, then the keys of Tavily, Exa and Brave).
 * `undefined`: no backend, so no `websearch` tool. A backend named without what it needs is an error worded as the fix.
 */
export const webBackend = (settings: WebsearchSettings, env: Env): WebBackendConfig | undefined => {
  if (settings.backend === "off") return undefined
  const pick = (name: WebBackendName): WebBackendConfig | string => {
    const defaults = WEB_DEFAULTS[name]
    if (name === "searxng") {
      const url = set(settings.url) ?? set(env.SEARXNG_URL)
      return url
        ? { name, url }
        : 'websearch.backend "searxng" needs websearch.url (or SEARXNG_URL), e.g. http://localhost:8080'
    }
    const keyEnv = settings.key_env ?? defaults.keyEnv ?? ""
    const key = set(env[keyEnv])
    if (key === undefined) return `websearch.backend "${name}" needs its key in the environment variable ${keyEnv}`
    return { name, url: set(settings.url) ?? defaults.url ?? "", key }
  }
  if (settings.backend !== undefined) {
    const picked = pick(settings.backend)
    if (typeof picked === "string") throw new Error(picked)
    return picked
  }
  if (set(env.SEARXNG_URL)) return { name: "searxng", url: set(env.SEARXNG_URL) as string }
  for (const name of ["tavily", "exa", "brave"] as const) {
    const key = set(env[WEB_DEFAULTS[name].keyEnv ?? ""])
    if (key !== undefined) return { name, url: WEB_DEFAULTS[name].url ?? "", key }
  }
  return undefined
}

/**
 * The code backend of `settings.codesearch`: only when one is configured (a token in the environment alone does not
 * offer code search). GitHub's code search needs a token; Sourcegraph's public instance does not.
 */
export const codeBackend = (settings: WebsearchSettings, env: Env): CodeBackendConfig | undefined => {
  const code = settings.codesearch
  if (code?.backend === undefined || code.backend === "off") return undefined
  const defaults = CODE_DEFAULTS[code.backend]
  const token = set(env[code.token_env ?? defaults.tokenEnv])
  if (code.backend === "github" && token === undefined)
    throw new Error(
      `websearch.codesearch.backend "github" needs a token in the environment variable ${code.token_env ?? defaults.tokenEnv}`
    )
  return { name: code.backend, url: set(code.url) ?? defaults.url, ...(token === undefined ? {} : { token }) }
}
