import { readdir, readFile } from "node:fs/promises"
import { basename, join } from "node:path"
import type { AgentDefinition, PluginContext } from "@lathe/plugin"
import type { ClaudeModelResolver } from "./compat.js"
import type { parseAgentFile } from "./markdown.js"

/** A folder agent files are read from. */
export interface AgentDirectory {
  readonly path: string
  /** `global` folders are the person's own; `project` folders are read only when the project is trusted. */
  readonly scope: "global" | "project"
  /** Claude Code's folder: its files are subagents (`mode: subagent`) unless their front matter says otherwise. */
  readonly claude?: boolean
}

/** An agent read from a markdown file. */
export interface MarkdownAgent {
  readonly definition: AgentDefinition
  /** The file it came from (absolute). */
  readonly path: string
}

/** What the discovery needs from the plugin context, and how to map Claude's model names (they inherit without it). */
export type DiscoveryContext = Pick<PluginContext, "root" | "configDir" | "trusted" | "log"> & {
  /** The person's home, for Claude Code's `~/.claude/agents/` (not read without it). */
  readonly home?: string
  readonly claudeModel?: ClaudeModelResolver
  /** Awaited once before the first file is parsed (the plugin loads the model catalogue the aliases resolve from). */
  readonly beforeParse?: () => Promise<void>
}

/**
 * The folders agent files come from, lowest precedence first: the person's Claude Code subagents
 * (`~/.claude/agents/`, given `home`) and `~/.config/lathe/agents/`, then the project's compatibility folders
 * (`.claude/agents/`, `.opencode/agents/`, `.opencode/agent/`), then the project's own `.lathe/agents/`. When two
 * files define the same name, the later one wins: project over global, and Lathe's own folder over the compatibility
 * ones. The home folders are the person's own, trusted like their config; a project that is the home folder itself
 * does not read `~/.claude/agents/` a second time as the project's.
 */
export const agentDirectories = (
  ctx: Pick<PluginContext, "root" | "configDir"> & { readonly home?: string }
): ReadonlyArray<AgentDirectory> => [
  ...(ctx.home !== undefined
    ? [{ path: join(ctx.home, ".claude", "agents"), scope: "global", claude: true } as const]
    : []),
  { path: join(ctx.configDir, "agents"), scope: "global" },
  ...(ctx.home !== undefined && join(ctx.home) === join(ctx.root)
    ? []
    : [{ path: join(ctx.root, ".claude", "agents"), scope: "project", claude: true } as const]),
  { path: join(ctx.root, ".opencode", "agents"), scope: "project" },
  { path: join(ctx.root, ".opencode", "agent"), scope: "project" },
  { path: join(ctx.root, ".lathe", "agents"), scope: "project" }
]

const errorCode = (error: unknown): string | undefined =>
  typeof error === "object" && error !== null && "code" in error && typeof error.code === "string"
    ? error.code
    : undefined

const reason = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/** The `*.md` files of a folder, sorted by name; none when the folder does not exist. */
const markdownFiles = async (dir: string, log: DiscoveryContext["log"]): Promise<ReadonlyArray<string>> => {
  try {
    const names = await readdir(dir)
    return names
      .filter((name) => name.endsWith(".md"))
      .sort()
      .map((name) => join(dir, name))
  } catch (error) {
    const code = errorCode(error)
    if (code !== "ENOENT" && code !== "ENOTDIR") log.warn(`Could not read agent folder ${dir}: ${reason(error)}`)
    return []
  }
}

/**
 * Reads every agent file, one definition per name (the later file wins, see {@link agentDirectories}; a later file
 * with `disable: true` removes the name's earlier definition). A file
 * that cannot be read or parsed is reported with `ctx.log.warn` (its path and the field at fault) and skipped; the
 * others still load. A file that loads with keys Lathe does not use, or a model it cannot honour, gets one warning
 * naming them. In an untrusted project the project folders are not read, and one warning says how to trust
 * it when they hold agent files.
 */
export const loadMarkdownAgents = async (ctx: DiscoveryContext): Promise<ReadonlyArray<MarkdownAgent>> => {
  const agents = new Map<string, MarkdownAgent>()
  const ignored: Array<string> = []
  // The parser (and `yaml`, which it needs) is loaded only once there is a file to parse: most runs have none.
  let parse: typeof parseAgentFile | undefined
  // The folders are listed at once (most do not exist), then read in precedence order: one after another, each
  // listing waited for the thread pool in turn, on the start-up path of every run.
  const directories = agentDirectories(ctx)
  const listings = await Promise.all(directories.map((dir) => markdownFiles(dir.path, ctx.log)))
  for (const [index, dir] of directories.entries()) {
    const files = listings[index] ?? []
    if (dir.scope === "project" && !ctx.trusted) {
      ignored.push(...files)
      continue
    }
    for (const path of files) {
      const text = await readFile(path, "utf8").catch((error: unknown) => error)
      if (typeof text !== "string") {
        ctx.log.warn(`Ignored agent file ${path}: it could not be read (${reason(text)}).`, { path })
        continue
      }
      if (parse === undefined) {
        await ctx.beforeParse?.()
        parse = (await import("./markdown.js")).parseAgentFile
      }
      const parsed = parse(basename(path, ".md"), text, {
        ...(ctx.claudeModel ? { claudeModel: ctx.claudeModel } : {}),
        ...(dir.claude ? { defaultMode: "subagent" as const } : {})
      })
      if (!parsed.ok) {
        ctx.log.warn(`Ignored agent file ${path}: ${parsed.error}. Fix the file; the other agents are loaded.`, {
          path
        })
        continue
      }
      // One warning per file for all it had that Lathe ignored or read differently.
      if (parsed.notices.length > 0) ctx.log.warn(`Agent file ${path}: ${parsed.notices.join("; ")}.`, { path })
      const name = basename(path, ".md")
      agents.delete(name) // a later file replaces (or, with `disable: true`, removes) an earlier one
      if (parsed.agent) agents.set(name, { definition: parsed.agent, path })
    }
  }
  if (ignored.length > 0)
    ctx.log.warn(
      `Ignored ${ignored.length} agent file(s) in ${ctx.root} because this project is not trusted: ` +
        `${ignored.join(", ")}. Run \`lathe trust\` in ${ctx.root} to load them.`,
      { files: ignored }
    )
  return [...agents.values()]
}
