/**
 * @lathe/mcp/host: what a host needs on every run — the plugin, the OAuth provider (loaded on first use), the default
 * permission rule, and the configured servers (for `lathe plugin list`) — without loading the MCP SDK or the OAuth
 * module. The SDK loads when the plugin finds a server to start, the OAuth module (its token store) when a remote
 * server with OAuth connects, so a run with no MCP server configured pays for neither. The servers' prompts and
 * resources reach the host as the plugin's commands and resources, like any plugin's. Everything else (connections,
 * `authorize`, transports) is in the main entry, `@lathe/mcp`.
 */
export { loadOAuthProvider } from "./oauth-load.js"
export type { McpOAuthProvider, OAuthProviderOptions } from "./oauth-provider.js"
export { withMcpDefaults } from "./permission.js"
export { createMcpPlugin, type McpPluginOptions } from "./plugin.js"
export { resolveServers } from "./servers.js"
export { describeStatus, type McpStatus } from "./status.js"
