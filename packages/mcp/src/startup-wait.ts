// When a turn waits for MCP servers that are still starting, and how a server that came later is announced.
import { evaluate, type Ruleset } from "@lathe/plugin"
import { sanitizeName } from "./names.js"

/**
 * How long after the servers start a turn's first request waits for those it does not need by name, in ms, when
 * config `mcp_startup_wait` says nothing: `lathe run` cannot show tools arriving, the interactive UI can.
 */
export const DEFAULT_STARTUP_WAIT_MS = { run: 10_000, interactive: 2_000 } as const

/** Why a turn needs a server's tools before its first request. */
export type StartNeed = "config" | "prompt" | "agent"

/** What a turn says about the tools it will use. */
export interface TurnNeeds {
  /** The prompt's text. */
  readonly text: string
  /** The agent's tool switches (`"github_*": true`). */
  readonly agentTools?: Readonly<Record<string, boolean>>
  /** The agent's own permission rules. */
  readonly agentPermission?: ReadonlyArray<{ readonly permission: string; readonly action: string }>
}

/** The server as far as the decision goes: its name, its config `wait`, the tool names it listed last time. */
export interface ServerNeedInput {
  readonly name: string
  readonly wait: boolean
  readonly rememberedTools: ReadonlyArray<string>
}

/** The words of a prompt, lower-cased: runs of letters, digits, `_`, `-` and `.`, without a trailing `.` or `-`. */
const words = (text: string): Set<string> =>
  new Set((text.toLowerCase().match(/[\p{L}\p{N}_.-]+/gu) ?? []).map((word) => word.replace(/[.-]+$/, "")))

/** A tool name specific enough that a prompt naming it means that tool (`get_issue`, `read-file`, `printEnv`). */
const distinctive = (tool: string): boolean => tool.length >= 4 && /[_-]|[a-z][A-Z]/.test(tool)

/** Whether a tool name or pattern of an agent's definition is one of the server's tools (`github_*`, `github_get_issue`). */
const namesServer = (pattern: string, server: string): boolean => {
  const lower = pattern.toLowerCase()
  return [server.toLowerCase(), sanitizeName(server).toLowerCase()].some(
    (prefix) => lower === prefix || lower.startsWith(`${prefix}_`)
  )
}

/**
 * Why the turn needs the server's tools in its first request, or `undefined`: its config says `wait: true`; the prompt
 * names the server, one of its Lathe tool names (`github_get_issue`) or a distinctive tool name it listed last time
 * (`get_issue`); or the agent switches on or allows (ask or allow) tools by a name or pattern of the server
 * (`"github_*"`). A rule that denies them is no need.
 */
export const serverNeed = (server: ServerNeedInput, turn: TurnNeeds): StartNeed | undefined => {
  if (server.wait) return "config"
  const said = words(turn.text)
  if ([...said].some((word) => namesServer(word, server.name))) return "prompt"
  if (server.rememberedTools.some((tool) => distinctive(tool) && said.has(tool.toLowerCase()))) return "prompt"
  const tools = Object.entries(turn.agentTools ?? {})
  if (tools.some(([pattern, on]) => on && namesServer(pattern, server.name))) return "agent"
  const rules = turn.agentPermission ?? []
  if (rules.some((rule) => rule.action !== "deny" && namesServer(rule.permission, server.name))) return "agent"
  return undefined
}

/**
 * How long from `now` a turn waits for a server still starting, in ms: a needed one until its start settles (its own
 * start timeout bounds that), within `cap`; another one until `startupWait` after the servers started, within `cap`.
 */
export const startupWaitMs = (input: {
  readonly need: StartNeed | undefined
  readonly startedAt: number
  readonly now: number
  readonly startupWait: number
  readonly cap: number
}): number => Math.max(0, Math.min(input.cap, input.need ? input.cap : input.startedAt + input.startupWait - input.now))

/** An MCP tool as offered: its Lathe name and its server. */
export interface OfferedMcpTool {
  readonly name: string
  readonly server: string
}

/** At most this many tool names are listed per server in an announcement. */
const LISTED = 20

/**
 * Announcements of MCP tools that arrived after a session's first step in this process: `note` records the tools
 * there at a session's first step, and from then on returns one line per server whose tools came later ("Tools now
 * available from MCP server …"), for the step's system prompt. The line stays in later steps, so the prompt changes
 * once per arrival. Tools the step's rules deny outright are left out.
 */
export const lateToolNotes = () => {
  const seen = new Map<string, ReadonlySet<string>>()
  return (input: {
    readonly sessionID: string
    readonly permission: Ruleset
    readonly tools: ReadonlyArray<OfferedMcpTool>
    /** Whether the tools are reached through `mcp_search` (too many to send). */
    readonly search: boolean
  }): ReadonlyArray<string> => {
    const baseline = seen.get(input.sessionID)
    if (baseline === undefined) {
      seen.set(input.sessionID, new Set(input.tools.map((tool) => tool.name)))
      return []
    }
    const late = input.tools.filter(
      (tool) => !baseline.has(tool.name) && evaluate(tool.name, "*", input.permission).action !== "deny"
    )
    const byServer = new Map<string, Array<string>>()
    for (const tool of late) byServer.set(tool.server, [...(byServer.get(tool.server) ?? []), tool.name])
    return [...byServer].map(([server, names]) => {
      const listed =
        names.slice(0, LISTED).join(", ") + (names.length > LISTED ? `, and ${names.length - LISTED} more` : "")
      const how = input.search ? " Find them with mcp_search and call them with mcp_call." : ""
      return `Tools now available from MCP server "${server}" (it finished starting after this session's first request): ${listed}.${how}`
    })
  }
}
