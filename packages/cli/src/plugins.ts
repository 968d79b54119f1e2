import agents from "@lathe/agents"
import type { PluginEntry } from "@lathe/core"
import mcp from "@lathe/mcp"
import skills from "@lathe/skills"
import tools from "@lathe/tools"

/** The plugins every run loads, in order: the built-in tools, the agents and the task tool, skills, then MCP servers' tools. */
export const builtinPlugins = (): Array<PluginEntry> => [
  { plugin: tools, source: "@lathe/tools" },
  { plugin: agents, source: "@lathe/agents" },
  { plugin: skills, source: "@lathe/skills" },
  { plugin: mcp, source: "@lathe/mcp" }
]
