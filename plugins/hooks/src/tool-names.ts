import { isAbsolute, resolve } from "node:path"

/**
 * Lathe's tools under Claude Code's names, so matchers and scripts written for Claude Code see what they expect:
 * `bash` is `Bash`, an MCP tool `<server>_<tool>` is `mcp__<server>__<tool>`, and inputs use Claude's snake_case keys
 * (`filePath` is `file_path`).
 */

const CLAUDE_NAMES: Readonly<Record<string, string>> = {
  bash: "Bash",
  read: "Read",
  edit: "Edit",
  multiedit: "MultiEdit",
  write: "Write",
  glob: "Glob",
  grep: "Grep",
  list: "LS",
  webfetch: "WebFetch",
  websearch: "WebSearch",
  task: "Task",
  todowrite: "TodoWrite",
  todoread: "TodoRead",
  skill: "Skill",
  question: "AskUserQuestion"
}

/** Keys that are not just camelCase of Claude's, by Lathe tool. */
const RENAMED: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  grep: { include: "glob" }
}

/** The name MCP gives a server in tool ids (see `@lathe/mcp`): characters outside `[A-Za-z0-9_-]` become `_`. */
const sanitize = (text: string): string => text.replace(/[^A-Za-z0-9_-]/g, "_")

/**
 * The name Claude Code would give a Lathe tool: its own tools by name, an MCP tool (`<server>_<tool>`, `servers` being
 * the configured MCP server names) as `mcp__<server>__<tool>`, anything else as it is.
 */
export const claudeToolName = (tool: string, servers: ReadonlyArray<string> = []): string => {
  const own = CLAUDE_NAMES[tool]
  if (own !== undefined) return own
  // The longest server name that prefixes the id wins (`a_b` over `a` for `a_b_tool`).
  const server = servers
    .map(sanitize)
    .filter((name) => tool.startsWith(`${name}_`) && tool.length > name.length + 1)
    .sort((a, b) => b.length - a.length)[0]
  return server === undefined ? tool : `mcp__${server}__${tool.slice(server.length + 1)}`
}

const snakeCase = (key: string): string => key.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`)

/** Keys holding a path, which Claude Code's tools always take absolute. */
const PATH_KEYS = new Set(["file_path", "path", "notebook_path"])

/**
 * A tool's input with Claude Code's keys (`filePath` → `file_path`, grep's `include` → `glob`) and, given the
 * working directory, its paths absolute as Claude Code's tools send them (a hook script that checks
 * `.tool_input.file_path` against `$CLAUDE_PROJECT_DIR/...` works unchanged).
 */
export const claudeInput = (
  tool: string,
  args: Readonly<Record<string, unknown>>,
  cwd?: string
): Record<string, unknown> => {
  const renamed = RENAMED[tool] ?? {}
  return Object.fromEntries(
    Object.entries(args).map(([key, value]) => {
      const claude = renamed[key] ?? snakeCase(key)
      const absolute =
        cwd !== undefined && PATH_KEYS.has(claude) && typeof value === "string" && value !== "" && !isAbsolute(value)
      return [claude, absolute ? resolve(cwd, value) : value]
    })
  )
}

/**
 * Applies a hook's `updatedInput` (Claude's keys) to a call's arguments: keys map back to the tool's own (`file_path`
 * → `filePath`, when the tool has `filePath`), and the result replaces the arguments it names; the rest stay.
 */
export const applyUpdatedInput = (
  tool: string,
  args: Readonly<Record<string, unknown>>,
  updated: Readonly<Record<string, unknown>>
): Record<string, unknown> => {
  const renamed = RENAMED[tool] ?? {}
  const back = new Map<string, string>()
  for (const key of Object.keys(args)) back.set(renamed[key] ?? snakeCase(key), key)
  for (const [key, claude] of Object.entries(renamed)) back.set(claude, key)
  const camel = (key: string) => key.replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase())
  const result: Record<string, unknown> = { ...args }
  for (const [key, value] of Object.entries(updated)) {
    // A key the call did not have: the tool's camelCase form when the call uses camelCase keys, else as written.
    const own = back.get(key) ?? (Object.keys(args).some((k) => /[A-Z]/.test(k)) ? camel(key) : key)
    result[own] = value
  }
  return result
}

/** Matches a name (a tool's Claude name, a session source, a notification type), or explains why it cannot. */
export type Matcher = (name: string) => boolean

/**
 * Compiles a Claude Code matcher: empty or `*` matches everything; a plain name or `A|B` list matches those names
 * exactly; anything else is a regular expression tested against the name (`mcp__github__.*`, `^Notebook`). Returns
 * the error message when the regular expression is invalid.
 */
export const compileMatcher = (matcher: string | undefined): Matcher | string => {
  const text = matcher?.trim() ?? ""
  if (text === "" || text === "*") return () => true
  if (/^[A-Za-z0-9_|-]+$/.test(text)) {
    const names = new Set(text.split("|"))
    return (name) => names.has(name)
  }
  try {
    const pattern = new RegExp(text)
    return (name) => pattern.test(name)
  } catch (error) {
    return error instanceof Error ? error.message : String(error)
  }
}
