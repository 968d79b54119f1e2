import type { PluginEntry } from "@lathe/core"
import tools from "@lathe/tools"

/** The plugins every run loads, in order: the built-in tools. */
export const builtinPlugins = (): Array<PluginEntry> => [{ plugin: tools, source: "@lathe/tools" }]
