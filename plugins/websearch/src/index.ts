/**
 * @lathe/websearch: the `websearch` tool (SearxNG, Brave, Exa or Tavily) and the `codesearch` tool (GitHub or
 * Sourcegraph code search). A tool is offered only when its backend is set up (config `websearch`, keys from the
 * environment): never a tool that can only fail. Each call asks the `websearch` / `codesearch` permission first.
 *
 * The model provider's own search (Anthropic, OpenAI, Google) is not this plugin's: the host sends it with the request
 * when the `websearch` permission allows it outright (see this package's README).
 *
 * ```json
 * { "websearch": { "backend": "brave", "codesearch": { "backend": "github" } } }
 * ```
 */
import { definePlugin, type Plugin } from "@lathe/plugin"
import { DETECT_ENV } from "./detect.js"

export type { CodeResult, SearchRequest, SearchResult } from "./backends.js"
export type { CodeBackendConfig, WebBackendConfig } from "./settings.js"

/** Dependencies of the plugin, injectable for tests. */
export interface WebsearchPluginDependencies {
  /** Where keys and `SEARXNG_URL` are read from (default `process.env`). */
  readonly env?: Readonly<Record<string, string | undefined>>
  /** The HTTP client (default the global `fetch`). */
  readonly fetch?: typeof fetch
}

/**
 * Builds the plugin; the default export is `createWebsearchPlugin()`. Without a `websearch` section in config and
 * without a search variable in the environment, setup loads nothing more (start-up stays as it was); otherwise it
 * reads the settings and makes no request. A backend named in config without its URL or key fails setup with a
 * message naming the fix (the host reports it and goes on without the plugin).
 */
export const createWebsearchPlugin = (dependencies: WebsearchPluginDependencies = {}): Plugin =>
  definePlugin({
    name: "@lathe/websearch",
    setup: async (ctx) => {
      const env = dependencies.env ?? process.env
      const settings = ctx.config.websearch
      if (settings === undefined && !DETECT_ENV.some((name) => (env[name] ?? "").trim() !== "")) return {}
      const { searchTools } = await import("./tools.js")
      return { tools: searchTools(settings, env, dependencies.fetch ?? fetch) }
    }
  })

/** The plugin, reading `process.env`. */
export default createWebsearchPlugin()
