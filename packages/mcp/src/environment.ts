// The environment a local MCP server starts with: the person's own, as their shell and other MCP clients give it, less
// the credentials Lathe holds for its model providers.
import { MIN_CONTAINED_SECRET } from "@lathe/plugin"
import type { LocalServer } from "./servers.js"

type Env = Readonly<Record<string, string | undefined>>

/**
 * What a local server's process gets: every variable of `base` (the person's environment: proxies, CA bundles,
 * `npm_config_*`, tool paths), less the variables `names` lists (the host's provider key variables, `ctx.secretNames`:
 * `ANTHROPIC_API_KEY`, `OPENAI_API_KEY`, … `LATHE_API_KEY`, `AWS_SECRET_ACCESS_KEY`, …) and every variable that holds
 * one of `credentials` (its whole value, or containing it when the credential has 8 characters or more), then the
 * server's own `env` on top. A variable the server's `env` names is passed as the server says, so a server that needs
 * one of Lathe's keys gets it only when its config names it. The host gives the credentials of its model providers and
 * store, not MCP servers' own settings: a server gets what its config gives it.
 */
export const serverEnvironment = (
  server: Pick<LocalServer, "env">,
  base: Env,
  credentials: ReadonlyArray<string>,
  names: ReadonlyArray<string> = []
): Record<string, string> => {
  const exact = new Set(credentials.filter((value) => value !== ""))
  const contained = [...exact].filter((value) => value.length >= MIN_CONTAINED_SECRET)
  const env: Record<string, string> = {}
  for (const [name, value] of Object.entries(base)) {
    if (value === undefined || names.includes(name)) continue
    // A shell function exported by bash (`BASH_FUNC_x%%=() { …`) is code, not a setting; the SDK drops them too.
    if (value.startsWith("()")) continue
    if (exact.has(value) || contained.some((secret) => value.includes(secret))) continue
    env[name] = value
  }
  return { ...env, ...server.env }
}
