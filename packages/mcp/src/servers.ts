import { readFile } from "node:fs/promises"
import { isAbsolute, join, resolve } from "node:path"
import type { McpServerConfig, PluginConfig } from "@lathe/plugin"
import { z } from "zod"

/**
 * `.mcp.json` parses once per run: zod's compiled fast path (`new Function` on an object schema's first parse) costs
 * more at start-up than it saves here, as for the host's config files.
 */
const PARSE_ONCE = { jitless: true } as const

/** The connect timeout when a server sets none, in ms. */
export const DEFAULT_TIMEOUT_MS = 10_000

interface Common {
  /** The name the server's tools are prefixed with. */
  readonly name: string
  /** Where it was defined: a config file's `mcp` block, or a `.mcp.json` path. */
  readonly source: string
  readonly enabled: boolean
  /** How long to wait for the connection, in ms. */
  readonly timeout: number
  /**
   * How long the first start in this process may take instead of `timeout`, in ms: set by a host for a package
   * runner's server that never started on this machine (see `firstStartTimeout`); restarts keep `timeout`.
   */
  readonly firstTimeout?: number
  /** Whether a run waits for this server before its first model request (config `wait`; default false). */
  readonly wait: boolean
}

/** A server Lathe starts and talks to over stdio. */
export interface LocalServer extends Common {
  readonly type: "local"
  readonly command: string
  readonly args: ReadonlyArray<string>
  readonly env: Readonly<Record<string, string>>
  /** Absolute. */
  readonly cwd: string
}

/** A server reached over HTTP (Streamable HTTP, or SSE when `transport` says so or the first fails). */
export interface RemoteServer extends Common {
  readonly type: "remote"
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  /**
   * OAuth settings (pre-registered client, scope, client ID metadata document URL); `false` never tries OAuth. Only
   * a config `mcp` entry sets them: `.mcp.json` servers never carry any, and an untrusted project's `mcp` block is
   * dropped by the config loader, so a cloned repository cannot choose a client secret or metadata document.
   */
  readonly oauth?: NonNullable<Extract<McpServerConfig, { type: "remote" }>["oauth"]>
  /** `sse` when `.mcp.json` says so; otherwise Streamable HTTP first. */
  readonly transport?: "sse"
}

/** One configured MCP server, resolved. */
export type McpServer = LocalServer | RemoteServer

/** The servers to start and what the person should know about the rest. */
export interface ResolvedServers {
  readonly servers: ReadonlyArray<McpServer>
  /** Warnings: an untrusted project's `.mcp.json`, a broken `.mcp.json`. */
  readonly notices: ReadonlyArray<string>
}

/** The `.mcp.json` format Claude Code users already have. */
const McpJson = z.object({
  mcpServers: z.record(
    z.string(),
    z.union([
      z.object({
        type: z.literal("stdio").optional(),
        command: z.string().min(1),
        args: z.array(z.string()).optional(),
        env: z.record(z.string(), z.string()).optional(),
        cwd: z.string().optional()
      }),
      z.object({
        type: z.enum(["http", "sse", "streamable-http"]),
        url: z.string().min(1),
        headers: z.record(z.string(), z.string()).optional()
      })
    ])
  )
})

type Env = Readonly<Record<string, string | undefined>>

/** `${VAR}`, `${VAR:-default}` (Claude Code) and `{env:VAR}` (Lathe) from `env`; unset is empty. */
export const expandEnv = (text: string, env: Env): string =>
  text
    .replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g, (_, name: string, fallback?: string) => {
      const value = env[name]
      return value === undefined || value === "" ? (fallback ?? "") : value
    })
    .replace(/\{env:([^}]*)\}/g, (_, name: string) => env[name.trim()] ?? "")

const mapValues = (record: Readonly<Record<string, string>> | undefined, f: (value: string) => string) =>
  Object.fromEntries(Object.entries(record ?? {}).map(([key, value]) => [key, f(value)]))

/** Resolves one `mcp` entry of the merged config (its `{env:}` was already substituted by the config loader). */
export const fromConfig = (name: string, entry: McpServerConfig, root: string): McpServer => {
  const common = {
    name,
    source: "lathe.json",
    enabled: entry.enabled ?? true,
    timeout: entry.timeout ?? DEFAULT_TIMEOUT_MS,
    wait: entry.wait ?? false
  }
  if (entry.type === "remote")
    return {
      ...common,
      type: "remote",
      url: entry.url,
      headers: entry.headers ?? {},
      ...(entry.oauth !== undefined ? { oauth: entry.oauth } : {})
    }
  const [command = "", ...args] = entry.command
  const cwd = entry.cwd === undefined ? root : isAbsolute(entry.cwd) ? entry.cwd : resolve(root, entry.cwd)
  return { ...common, type: "local", command, args, env: entry.env ?? {}, cwd }
}

/** Reads `<root>/.mcp.json`; `undefined` when there is none. A broken file is a notice, never a crash. */
const readMcpJson = async (
  root: string,
  env: Env
): Promise<{ readonly servers: Array<McpServer>; readonly notice?: string } | undefined> => {
  const file = join(root, ".mcp.json")
  let text: string
  try {
    text = await readFile(file, "utf8")
  } catch {
    return undefined
  }
  let raw: unknown
  try {
    raw = JSON.parse(text)
  } catch (error) {
    return { servers: [], notice: `${file}: invalid JSON (${String(error)}); its MCP servers were not started.` }
  }
  const parsed = McpJson.safeParse(raw, PARSE_ONCE)
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => `${issue.path.join(".") || "(root)"}: ${issue.message}`)
    return {
      servers: [],
      notice:
        `${file} is not in the .mcp.json format ({ "mcpServers": { name: { command, args, env } | { type: "http", url } } }): ` +
        `${issues.join("; ")}. Its MCP servers were not started.`
    }
  }
  const servers = Object.entries(parsed.data.mcpServers).map(([name, entry]): McpServer => {
    const common = { name, source: file, enabled: true, timeout: DEFAULT_TIMEOUT_MS, wait: false }
    if ("url" in entry)
      return {
        ...common,
        type: "remote",
        url: expandEnv(entry.url, env),
        headers: mapValues(entry.headers, (value) => expandEnv(value, env)),
        ...(entry.type === "sse" ? { transport: "sse" as const } : {})
      }
    const cwd = entry.cwd === undefined ? root : resolve(root, expandEnv(entry.cwd, env))
    return {
      ...common,
      type: "local",
      command: expandEnv(entry.command, env),
      args: (entry.args ?? []).map((arg) => expandEnv(arg, env)),
      env: mapValues(entry.env, (value) => expandEnv(value, env)),
      cwd
    }
  })
  return { servers }
}

/**
 * The servers of the merged config's `mcp` block, then those of the project's `.mcp.json` that the config does not
 * already name (the config wins). An untrusted project's `.mcp.json` is not read for servers: one notice names them
 * and says how to trust the folder. (The config loader already dropped an untrusted project file's `mcp` block.)
 */
export const resolveServers = async (input: {
  readonly config: Pick<PluginConfig, "mcp">
  readonly root: string
  readonly trusted: boolean
  readonly env: Env
}): Promise<ResolvedServers> => {
  const servers = Object.entries(input.config.mcp ?? {}).map(([name, entry]) => fromConfig(name, entry, input.root))
  const notices: Array<string> = []
  const project = await readMcpJson(input.root, input.env)
  if (project?.notice) notices.push(project.notice)
  if (project && project.servers.length > 0) {
    if (!input.trusted)
      notices.push(
        `Did not start the MCP servers of ${join(input.root, ".mcp.json")} (${project.servers.map((s) => s.name).join(", ")}): ` +
          `this project is not trusted. Run \`lathe trust\` in ${input.root} to start them.`
      )
    else for (const server of project.servers) if (!servers.some((s) => s.name === server.name)) servers.push(server)
  }
  return { servers, notices }
}
