// The plugins' light entries: their file parsers (and `yaml`) load only when an agent or skill file exists.
import agents from "@lathe/agents/plugin"
import { type ConfigInfo, dataDir, type PluginEntry, PROVIDER_KEY_NAMES, secretValues } from "@lathe/core"
import hooks from "@lathe/hooks"
import { createLspPlugin } from "@lathe/lsp"
import { createMcpPlugin, loadOAuthProvider } from "@lathe/mcp/host"
import skills from "@lathe/skills/plugin"
import { createToolsPlugin } from "@lathe/tools"
import { createWebsearchPlugin } from "@lathe/websearch"
import { commandFilesPlugin } from "./command-files.js"

type Env = Readonly<Record<string, string | undefined>>

/**
 * What local MCP servers must not inherit: the credentials Lathe itself uses to reach its model providers and its
 * store (each provider's `apiKey`, secret headers and options, a store URL, and the values of the provider key
 * variables in `env`), and those variables by name. MCP servers' own settings are not among them: a server gets what
 * its config gives it (so one server's `env` does not take variables from another).
 */
export const mcpCredentials = (
  config: Pick<ConfigInfo, "provider" | "store">,
  env: Env
): { readonly credentials: ReadonlyArray<string>; readonly credentialNames: ReadonlyArray<string> } => ({
  credentials: secretValues(
    { info: { provider: config.provider ?? {}, ...(config.store ? { store: config.store } : {}) } },
    env
  ),
  credentialNames: PROVIDER_KEY_NAMES
})

/**
 * The plugins every run loads, in order: the built-in tools, the agents and the task tool, skills, shell hooks (Claude
 * Code's settings and lathe.json `hooks`), the markdown command files (`.lathe/commands`, …) as commands, then MCP
 * servers' tools, prompts (commands) and resources. A command name both define stays the command file's.
 */
export const builtinPlugins = (
  env: Readonly<Record<string, string | undefined>> = process.env,
  options: { readonly mcpWait?: boolean; readonly mcp?: boolean } = {}
): Array<PluginEntry> => [
  // bash starts from the environment Lathe was started with, `env`: the keys the launcher handed over are not in
  // process.env (they are in `launcherKeys()`, which `io.env` already merges).
  { plugin: createToolsPlugin({ startEnv: () => ({ ...process.env, ...env }) }), source: "@lathe/tools" },
  { plugin: agents, source: "@lathe/agents" },
  { plugin: skills, source: "@lathe/skills" },
  { plugin: hooks, source: "@lathe/hooks" },
  { plugin: commandFilesPlugin, source: "command-files" },
  // Search keys may be among those the launcher handed over in `env`; setup reads config and makes no request.
  { plugin: createWebsearchPlugin({ env: { ...process.env, ...env } }), source: "@lathe/websearch" },
  // Language servers start on the first edit of their file type; until then the plugin is a few closures.
  { plugin: createLspPlugin({ dataDir: dataDir(env), env: { ...process.env, ...env } }), source: "@lathe/lsp" },
  ...(options.mcp === false
    ? []
    : [
        {
          // Remote servers sign in with the tokens `lathe mcp auth <name>` stored; a run never opens a browser itself.
          plugin: createMcpPlugin({
            env,
            wait: options.mcpWait !== false,
            dataDir: dataDir(env),
            // The plugin sees the merged config as the kit types it; these are the host's own sections of it.
            credentials: (config, env) =>
              mcpCredentials(config as Pick<ConfigInfo, "provider" | "store">, env).credentials,
            authProvider: (server) =>
              loadOAuthProvider({
                serverName: server.name,
                serverUrl: server.url,
                dataDir: dataDir(env),
                openBrowser: async () => undefined
              })
          }),
          source: "@lathe/mcp"
        }
      ])
]
