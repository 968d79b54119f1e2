/**
 * @lathe/mcp: tools from Model Context Protocol servers, loaded as a plugin.
 *
 * The default export is the plugin (no OAuth); `createMcpPlugin({ authProvider })` builds one with OAuth. The
 * connection, naming, result and permission helpers are exported for hosts (`lathe mcp list`) and tests. The servers'
 * prompts and resources reach a host as the plugin's commands and resources (`Plugins.commands`, `Plugins.resources`).
 */
import { createMcpPlugin } from "./plugin.js"

export * from "./connection.js"
export * from "./contributions.js"
export * from "./environment.js"
export * from "./message-reader.js"
export * from "./names.js"
export * from "./oauth.js"
export * from "./permission.js"
export * from "./plugin.js"
export * from "./prompts.js"
export * from "./resources.js"
export * from "./result.js"
export * from "./search.js"
export * from "./search-tools.js"
export * from "./servers.js"
export * from "./start-memory.js"
export * from "./stdio-transport.js"
export * from "./tools.js"
export * from "./transport.js"

/** The MCP plugin with default options. */
export default createMcpPlugin()
