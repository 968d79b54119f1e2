import type { Rule, Ruleset } from "@lathe/plugin"

/** The pattern an MCP tool the server marks `readOnlyHint: true` asks with. */
export const MCP_READ_ONLY = "mcp:read-only"
/** The pattern every other MCP tool asks with. */
export const MCP_MAY_WRITE = "mcp:may-write"

/**
 * The default rule for MCP tools, to go right after the host's `"*": "allow"` (see {@link withMcpDefaults}): tools
 * the server does not mark read-only are asked. Every MCP tool asks the permission named after its Lathe tool name with one of the
 * two patterns above, so the person's own rules (`"github_*": "allow"`, `"github_*": "ask"`, which match every
 * pattern) come later and win; read-only tools fall through to the host's allow. The rule is `scoped`: it decides
 * only asks with the pattern `mcp:may-write`, which only MCP tools send, and never makes a bash command that Lathe
 * cannot analyse (a heredoc, `python3 -c`) an ask.
 */
export const mcpPermissionDefaults: ReadonlyArray<Rule> = [
  {
    permission: "*",
    pattern: MCP_MAY_WRITE,
    action: "ask",
    source: "defaults (MCP tools without readOnlyHint)",
    scoped: true
  }
]

/**
 * The host's default rules with {@link mcpPermissionDefaults} inserted right after their last `"*": "allow"`-style
 * catch-all (`*` / `*`), or first when there is none. Not appended at the end: a later rule matching every permission
 * would hide the defaults' own `deny` rules (e.g. `question`) from the check that leaves denied tools out of a step.
 */
export const withMcpDefaults = (defaults: Ruleset): Array<Rule> => {
  const at = defaults.findLastIndex((rule) => rule.permission === "*" && rule.pattern === "*") + 1
  return [...defaults.slice(0, at), ...mcpPermissionDefaults, ...defaults.slice(at)]
}
