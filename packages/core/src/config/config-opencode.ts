/**
 * OpenCode's config as a config source: `opencode.json` / `opencode.jsonc` (a project folder, and
 * `~/.config/opencode/`). Its keys become Lathe's where they mean the same thing: `permission`, `agent`, `mcp`,
 * `provider`, `instructions`, `model`, `small_model`, `default_agent`. The result is a Lathe config value that goes
 * through the same trust rule as a `lathe.json` (`stripUntrusted`); what is not understood is named for one notice.
 * `command` entries are custom commands (see {@link opencodeCommands}), read where `/commands` are.
 */
import { readFile } from "node:fs/promises"
import { join } from "node:path"
import { parse } from "jsonc-parser"
import { drivenBy } from "../provider/driven-packages.js"
import { descriptorOf } from "../provider/registry.js"
import { isObject } from "./config-load.js"

/** The OpenCode files of one folder, in the order they load (the later wins). */
export const OPENCODE_FILES = ["opencode.json", "opencode.jsonc"] as const

/** What an OpenCode config gives Lathe. */
export interface OpencodeTranslation {
  /** A Lathe config value (not yet validated, trust not yet applied). */
  readonly config: Record<string, unknown>
  /** What was not understood, as dotted paths (`theme`, `agent.review.steps`, `provider.x.npm`). */
  readonly unknown: Array<string>
}

/** Keys that are the same in both: copied as they are (validation names what does not fit). */
const SAME = new Set(["model", "small_model", "default_agent", "permission", "instructions"])
/** OpenCode keys with no meaning for Lathe that need no notice (editor hints). */
const SILENT = new Set(["$schema"])

const AGENT_SAME = new Set([
  "description",
  "mode",
  "hidden",
  "disable",
  "prompt",
  "model",
  "temperature",
  "top_p",
  "tools",
  "permission",
  "color"
])

const agentOf = (name: string, value: unknown, unknown: Array<string>): unknown => {
  if (!isObject(value)) return value
  const out: Record<string, unknown> = {}
  for (const [key, item] of Object.entries(value)) {
    if (AGENT_SAME.has(key)) out[key] = item
    else if (key === "steps" || key === "maxSteps") out.max_steps = item
    else unknown.push(`agent.${name}.${key}`)
  }
  return out
}

const mcpOf = (name: string, value: unknown, unknown: Array<string>): unknown => {
  if (!isObject(value)) return value
  const { type, environment, ...rest } = value
  const out: Record<string, unknown> = { type }
  const known = type === "local" ? ["command", "enabled", "timeout"] : ["url", "headers", "enabled", "timeout", "oauth"]
  if (type === "local" && isObject(environment)) out.env = environment
  else if (environment !== undefined) unknown.push(`mcp.${name}.environment`)
  for (const [key, item] of Object.entries(rest))
    if (known.includes(key)) out[key] = item
    else unknown.push(`mcp.${name}.${key}`)
  return out
}

const modelOf = (path: string, value: unknown, unknown: Array<string>): unknown => {
  if (!isObject(value)) return value
  const out: Record<string, unknown> = {}
  for (const [key, item] of Object.entries(value)) {
    if (key === "name" || key === "reasoning" || key === "tool_call" || key === "temperature") out[key] = item
    else if (key === "limit" && isObject(item)) {
      if (item.context !== undefined) out.context = item.context
      if (item.output !== undefined) out.output = item.output
    } else if (key === "cost" && isObject(item)) out.cost = item
    else if (key === "attachment") out.image = item
    else unknown.push(`${path}.${key}`)
  }
  return out
}

const providerOf = (id: string, value: unknown, unknown: Array<string>): unknown => {
  if (!isObject(value)) return value
  const out: Record<string, unknown> = {}
  const npm = typeof value.npm === "string" ? value.npm : undefined
  const type = npm !== undefined ? drivenBy(npm) : undefined
  if (npm !== undefined && type === undefined) unknown.push(`provider.${id}.npm ${JSON.stringify(npm)}`)
  if (type !== undefined && descriptorOf(id)?.type !== type) out.type = type
  for (const [key, item] of Object.entries(value)) {
    if (key === "npm" || key === "id") continue
    if (key === "name") out.name = item
    else if (key === "options" && isObject(item)) {
      const { baseURL, apiKey, headers, ...rest } = item
      if (baseURL !== undefined) out.baseURL = baseURL
      if (apiKey !== undefined) out.apiKey = apiKey
      if (headers !== undefined) out.headers = headers
      if (Object.keys(rest).length > 0) out.options = rest
    } else if (key === "models" && isObject(item))
      out.models = Object.fromEntries(
        Object.entries(item).map(([model, entry]) => [model, modelOf(`provider.${id}.models.${model}`, entry, unknown)])
      )
    else unknown.push(`provider.${id}.${key}`)
  }
  if (out.type !== undefined || descriptorOf(id) !== undefined) return out
  // A provider Lathe cannot place (no known package, not a known id) is left out rather than failing the config.
  if (typeof out.baseURL === "string") return { ...out, type: "openai-compatible" }
  unknown.push(`provider.${id}`)
  return undefined
}

const each = (
  value: unknown,
  map: (name: string, item: unknown, unknown: Array<string>) => unknown,
  unknown: Array<string>
): unknown =>
  isObject(value)
    ? Object.fromEntries(
        Object.entries(value).flatMap(([k, v]) => {
          const mapped = map(k, v, unknown)
          return mapped === undefined ? [] : [[k, mapped] as const]
        })
      )
    : value

/** Translates an OpenCode config value into a Lathe one (see the module comment). Never fails. */
export const translateOpencode = (value: unknown): OpencodeTranslation => {
  const config: Record<string, unknown> = {}
  const unknown: Array<string> = []
  if (!isObject(value)) return { config, unknown }
  for (const [key, item] of Object.entries(value)) {
    if (SAME.has(key)) config[key] = item
    else if (key === "agent") config.agent = each(item, agentOf, unknown)
    else if (key === "mcp") config.mcp = each(item, mcpOf, unknown)
    else if (key === "provider") config.provider = each(item, providerOf, unknown)
    else if (key === "command" || SILENT.has(key)) continue
    else unknown.push(key)
  }
  return { config, unknown }
}

/** A custom command from an OpenCode config's `command` key. */
export interface OpencodeCommand {
  readonly name: string
  readonly template: string
  readonly description?: string
  readonly agent?: string
  readonly model?: string
  /** The file it came from. */
  readonly source: string
}

/**
 * The `command` entries of the OpenCode files in `dir` (`opencode.json`, then `opencode.jsonc`; a later one replaces
 * an entry by name). A missing or unreadable file gives none: the config loader reports broken files.
 */
export const opencodeCommands = async (dir: string): Promise<Array<OpencodeCommand>> => {
  const found = new Map<string, OpencodeCommand>()
  for (const name of OPENCODE_FILES) {
    const file = join(dir, name)
    const text = await readFile(file, "utf8").catch(() => undefined)
    if (text === undefined) continue
    const value: unknown = parse(text, [], { allowTrailingComma: true })
    const commands = isObject(value) && isObject(value.command) ? value.command : {}
    for (const [command, entry] of Object.entries(commands)) {
      if (!isObject(entry) || typeof entry.template !== "string") continue
      const text = (key: string) => (typeof entry[key] === "string" ? { [key]: entry[key] as string } : {})
      found.set(command, {
        name: command,
        template: entry.template,
        ...text("description"),
        ...text("agent"),
        ...text("model"),
        source: file
      })
    }
  }
  return [...found.values()]
}
