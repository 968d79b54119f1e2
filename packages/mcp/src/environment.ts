// The environment a local MCP server starts with: the person's own, as their shell and other MCP clients give it, less
// the credentials Lathe holds for its model providers.
import { MIN_CONTAINED_SECRET, PROVIDER_KEY_NAMES, type SecretSources, secretValues } from "@lathe/core"
import type { LocalServer } from "./servers.js"

type Env = Readonly<Record<string, string | undefined>>

/**
 * The credentials Lathe itself uses to reach its model providers and its store: each provider's `apiKey`, secret
 * headers and options (with what their `{env:NAME}` placeholders resolved to, since the config holds the resolved
 * values), a store URL, and the values of the provider key variables (`PROVIDER_KEY_NAMES`: every provider's key
 * variables, `LATHE_API_KEY`, AWS and Azure credentials) in `env`. MCP
 * servers' own settings are not among them: a server gets what its config gives it.
 */
export const lathesCredentials = (config: SecretSources, env: Env): ReadonlyArray<string> =>
  secretValues({ info: { provider: config.provider ?? {}, ...(config.store ? { store: config.store } : {}) } }, env)

/**
 * What a local server's process gets: every variable of `base` (the person's environment: proxies, CA bundles,
 * `npm_config_*`, tool paths), less the provider key variables (`PROVIDER_KEY_NAMES`: `ANTHROPIC_API_KEY`,
 * `OPENAI_API_KEY`, `GEMINI_API_KEY`, … `LATHE_API_KEY`, `AWS_SECRET_ACCESS_KEY`, …) and every variable that holds one of `credentials` (its whole value, or containing it when the
 * credential has 8 characters or more), then the server's own `env` on top. A variable the server's `env` names is
 * passed as the server says, so a server that needs one of Lathe's keys gets it only when its config names it.
 */
export const serverEnvironment = (
  server: Pick<LocalServer, "env">,
  base: Env,
  credentials: ReadonlyArray<string>
): Record<string, string> => {
  const exact = new Set(credentials.filter((value) => value !== ""))
  const contained = [...exact].filter((value) => value.length >= MIN_CONTAINED_SECRET)
  const env: Record<string, string> = {}
  for (const [name, value] of Object.entries(base)) {
    if (value === undefined || PROVIDER_KEY_NAMES.includes(name)) continue
    // A shell function exported by bash (`BASH_FUNC_x%%=() { …`) is code, not a setting; the SDK drops them too.
    if (value.startsWith("()")) continue
    if (exact.has(value) || contained.some((secret) => value.includes(secret))) continue
    env[name] = value
  }
  return { ...env, ...server.env }
}
