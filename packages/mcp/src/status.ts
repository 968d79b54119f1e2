// A server connection's state and its one-line description: kept apart from connection.ts so that hosts can
// describe connections without loading the MCP SDK.

/** Where a server is. `needs-auth`: a remote server answered 401 and no OAuth provider could authorize. */
export type McpStatus =
  | { readonly state: "connecting" }
  | { readonly state: "connected"; readonly tools: number }
  | { readonly state: "restarting"; readonly attempt: number; readonly reason: string }
  | { readonly state: "failed"; readonly reason: string }
  | { readonly state: "needs-auth"; readonly reason: string }
  | { readonly state: "disabled" }

/** `connected (12 tools)`, `failed: …`, `disabled`, `needs auth: …`. */
export const describeStatus = (status: McpStatus): string => {
  switch (status.state) {
    case "connected":
      return `connected (${status.tools} tool${status.tools === 1 ? "" : "s"})`
    case "connecting":
      return "connecting"
    case "restarting":
      return `restarting (attempt ${status.attempt}): ${status.reason}`
    case "failed":
      return `failed: ${status.reason}`
    case "needs-auth":
      return `needs auth: ${status.reason}`
    case "disabled":
      return "disabled"
  }
}
