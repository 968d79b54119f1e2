// The plugins' light entries: their file parsers (and `yaml`) load only when an agent or skill file exists.
import agents from "@lathe/agents/plugin"
import { dataDir, type PluginEntry } from "@lathe/core"
import hooks from "@lathe/hooks"
import { createMcpPlugin, loadOAuthProvider } from "@lathe/mcp/host"
import skills from "@lathe/skills/plugin"
import tools from "@lathe/tools"
import { commandFilesPlugin } from "./command-files.js"

/**
 * The plugins every run loads, in order: the built-in tools, the agents and the task tool, skills, shell hooks (Claude
 * Code's settings and lathe.json `hooks`), the markdown command files (`.lathe/commands`, …) as commands, then MCP
 * servers' tools, prompts (commands) and resources. A command name both define stays the command file's.
 */
export const builtinPlugins = (
  env: Readonly<Record<string, string | undefined>> = process.env,
  options: { readonly mcpWait?: boolean; readonly mcp?: boolean } = {}
): Array<PluginEntry> => [
  { plugin: tools, source: "@lathe/tools" },
  { plugin: agents, source: "@lathe/agents" },
  { plugin: skills, source: "@lathe/skills" },
  { plugin: hooks, source: "@lathe/hooks" },
  { plugin: commandFilesPlugin, source: "command-files" },
  ...(options.mcp === false
    ? []
    : [
        {
          // Remote servers sign in with the tokens `lathe mcp auth <name>` stored; a run never opens a browser itself.
          plugin: createMcpPlugin({
            env,
            wait: options.mcpWait !== false,
            dataDir: dataDir(env),
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
