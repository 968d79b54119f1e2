import type { McpConnection } from "./connection.js"

/**
 * The live connections of each loaded MCP plugin, keyed by project root. The plugin registers its connections when
 * setup is done and removes them on dispose, so a host (the CLI's `--command`, `/<server>:<prompt>` and
 * `@<server>:<uri>`) reaches the same servers the session's tools use, without starting them a second time.
 */
const live = new Map<string, ReadonlyArray<McpConnection>>()

/**
 * Registers `connections` as the MCP connections of the project at `root` (replacing any earlier ones) and returns
 * the function that unregisters them; it leaves a later registration in place.
 */
export const registerMcpConnections = (root: string, connections: ReadonlyArray<McpConnection>): (() => void) => {
  live.set(root, connections)
  return () => {
    if (live.get(root) === connections) live.delete(root)
  }
}

/** The connections the MCP plugin loaded for the project at `root` (empty when it loaded none or was disposed). */
export const mcpConnections = (root: string): ReadonlyArray<McpConnection> => live.get(root) ?? []
