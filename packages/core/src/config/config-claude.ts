/**
 * Claude Code settings as a config source: `~/.claude/settings.json` and a project's `.claude/settings.json` /
 * `.claude/settings.local.json`. `permissions.allow|ask|deny` become Lathe rules with the same meaning,
 * `permissions.additionalDirectories` becomes `external_directory` allow rules, and `env` becomes `shell.env.set`.
 * `hooks` are left to `@lathe/hooks`, which reads these files itself; other keys are Claude Code's own and not read.
 */
import { join, relative, resolve } from "node:path"
import type { PermissionAction, Rule } from "@lathe/plugin"
import { findNodeAtLocation } from "jsonc-parser"
import { isObject, isWithin, type ParsedConfig } from "./config-load.js"

/** Where a Claude rule's paths are anchored: the project root Lathe uses, the settings' project folder, home. */
export interface ClaudePlaces {
  /** The project root: paths inside it are written relative to it, as the file tools ask for them. */
  readonly root: string
  /** The folder the settings belong to (the one holding `.claude/`); for user settings, the project root. */
  readonly base: string
  readonly home: string
}

/** A Lathe permission and pattern one Claude rule stands for. */
export interface TranslatedPattern {
  readonly permission: string
  readonly pattern: string
}

/** Claude Code's path tools and the Lathe permissions that ask with a path. */
const PATH_TOOLS: Readonly<Record<string, ReadonlyArray<string>>> = {
  Read: ["read", "list"],
  Edit: ["edit"],
  Write: ["edit"],
  MultiEdit: ["edit"],
  NotebookEdit: ["edit"]
}

/** Claude Code tools a bare rule (no specifier) maps onto. */
const BARE_TOOLS: Readonly<Record<string, ReadonlyArray<string>>> = {
  Bash: ["bash"],
  Read: ["read", "list", "glob", "grep"],
  Edit: ["edit"],
  Write: ["edit"],
  MultiEdit: ["edit"],
  NotebookEdit: ["edit"],
  Glob: ["glob"],
  Grep: ["grep"],
  LS: ["list"],
  WebFetch: ["webfetch"],
  WebSearch: ["websearch"]
}

/** MCP tool names as `@lathe/mcp` gives them: `<server>_<tool>`, characters outside `[A-Za-z0-9_-]` as `_`. */
const mcpName = (text: string): string => text.replace(/[^A-Za-z0-9_-]/g, "_")

/** `**` is any number of folders in a gitignore glob; Lathe's `*` already crosses folders. */
const globVariants = (path: string): Array<string> => {
  let variants = [path.replace(/\/\*\*$/, "/*")]
  for (;;) {
    const next = variants.flatMap((v) => {
      const at = v.indexOf("**/")
      return at === -1 ? [v] : [v.slice(0, at) + v.slice(at + 3), `${v.slice(0, at)}*/${v.slice(at + 3)}`]
    })
    if (next.length === variants.length) break
    variants = next
  }
  return [...new Set(variants.map((v) => v.replace(/\*\*/g, "*")))]
}

/**
 * A Claude path specifier as Lathe path patterns: `//abs` is absolute, `~/x` under home, `/x` and `./x` and `x`
 * relative to the settings' project; a name without `/` matches at any depth (gitignore). Paths inside the project
 * root come out relative to it (how the file tools ask), others absolute.
 */
export const claudePathPatterns = (spec: string, places: ClaudePlaces): Array<string> => {
  let path = spec.trim()
  if (path.endsWith("/")) path += "**"
  let absolute: string
  let anywhere = false
  if (path.startsWith("//")) absolute = path.slice(1)
  else if (path === "~" || path.startsWith("~/")) absolute = join(places.home, path.slice(1))
  else if (path.startsWith("/")) absolute = join(places.base, path)
  else {
    const rest = path.startsWith("./") ? path.slice(2) : path
    anywhere = path === rest && !rest.includes("/")
    absolute = join(places.base, rest)
  }
  // join() keeps `*` and collapses `..`; a glob's `**` segments survive it.
  const shown = isWithin(places.root, absolute) ? relative(places.root, absolute) || "*" : absolute
  const dir = relative(places.root, places.base)
  const globs = anywhere
    ? [shown, `${dir === "" ? "" : `${dir}/`}**/${shown.slice(dir === "" ? 0 : dir.length + 1)}`]
    : [shown]
  return [...new Set(globs.flatMap(globVariants))]
}

/** A Claude Bash specifier as a Lathe bash pattern: `cmd:*` is `cmd *` (prefix at a word boundary), else as is. */
const bashPattern = (spec: string): string => {
  const trimmed = spec.trim()
  if (trimmed === "" || trimmed === "*" || trimmed === ":*") return "*"
  return trimmed.endsWith(":*") ? `${trimmed.slice(0, -2).trimEnd()} *` : trimmed
}

/** A WebFetch `domain:host` specifier as URL patterns; `undefined` when it cannot be said exactly. */
const domainPatterns = (spec: string, action: PermissionAction): Array<string> | undefined => {
  if (!spec.startsWith("domain:")) return undefined
  const host = spec.slice("domain:".length).trim().toLowerCase()
  if (!/^(\*\.)?[a-z0-9.-]+(:\d+)?$/.test(host)) return undefined
  // Lathe's `*` crosses `/`: `https://*.example.com/*` also matches other hosts' paths, so only narrowing rules use it.
  if (host.startsWith("*.") && action === "allow") return undefined
  return [`https://${host}/*`, `http://${host}/*`]
}

/**
 * One Claude Code permission rule (`Bash(npm run test:*)`, `Read(./secrets/**)`, `WebFetch(domain:x.com)`,
 * `mcp__github__create_issue`) as the Lathe permissions and patterns it stands for; a string says why it has none.
 */
export const translateClaudeRule = (
  text: string,
  action: PermissionAction,
  places: ClaudePlaces
): Array<TranslatedPattern> | string => {
  const rule = text.trim()
  if (rule.startsWith("mcp__")) {
    const [server = "", tool, ...more] = rule.slice(5).split("__")
    if (server === "" || more.length > 0 || /[()]/.test(rule)) return "not an MCP rule Lathe can read"
    const name = tool === undefined || tool === "*" ? `${mcpName(server)}_*` : mcpName(`${server}_${tool}`)
    return [{ permission: name, pattern: "*" }]
  }
  const match = /^([A-Za-z]+)(?:\((.*)\))?$/s.exec(rule)
  if (!match) return "not a Claude Code permission rule"
  const [, tool = "", spec] = match
  if (spec === undefined || spec.trim() === "" || spec.trim() === "*") {
    const permissions = BARE_TOOLS[tool]
    if (!permissions) return `Lathe has no tool like ${tool}`
    return permissions.map((permission) => ({ permission, pattern: "*" }))
  }
  if (tool === "Bash") return [{ permission: "bash", pattern: bashPattern(spec) }]
  if (tool === "WebFetch") {
    const patterns = domainPatterns(spec, action)
    if (!patterns) return 'only "domain:<host>" specifiers are read (a wildcard domain only in deny and ask)'
    return patterns.map((pattern) => ({ permission: "webfetch", pattern }))
  }
  const permissions = PATH_TOOLS[tool]
  if (!permissions) return `Lathe has no tool like ${tool}`
  const patterns = claudePathPatterns(spec, places)
  return permissions.flatMap((permission) => patterns.map((pattern) => ({ permission, pattern })))
}

/** A rule that came from a Claude file, with what it was written as. */
export interface ClaudeRule {
  readonly rule: Rule
  /** The Claude rule as written, e.g. `Bash(git push:*)`. */
  readonly claude: string
}

/** What a Claude Code settings file gives Lathe. */
export interface ClaudeSettings {
  /** Lathe rules, allow first, then ask, then deny (deny wins, as in Claude Code); `source` is `file:line (rule)`. */
  readonly rules: Array<ClaudeRule>
  /** Lathe config from the rest of the file (`shell.env.set` from `env`), trust not yet applied. */
  readonly config: Record<string, unknown>
  /** The rules that could not be translated, each with why. */
  readonly untranslated: Array<string>
}

const lineOf = (parsed: ParsedConfig, path: Array<string | number>): number | undefined => {
  const node = parsed.tree ? findNodeAtLocation(parsed.tree, path) : undefined
  return node === undefined ? undefined : parsed.text.slice(0, node.offset).split("\n").length
}

/** Translates a parsed Claude Code settings file (see the module comment). Never fails: odd values are skipped. */
export const translateClaudeSettings = (parsed: ParsedConfig, places: ClaudePlaces): ClaudeSettings => {
  const rules: Array<ClaudeRule> = []
  const untranslated: Array<string> = []
  const value = isObject(parsed.value) ? parsed.value : {}
  const permissions = isObject(value.permissions) ? value.permissions : {}
  const place = (path: Array<string | number>) => {
    const line = lineOf(parsed, path)
    return line === undefined ? parsed.file : `${parsed.file}:${line}`
  }
  for (const action of ["allow", "ask", "deny"] as const) {
    const list = permissions[action]
    if (!Array.isArray(list)) continue
    list.forEach((entry, index) => {
      if (typeof entry !== "string") return
      const translated = translateClaudeRule(entry, action, places)
      const at = place(["permissions", action, index])
      if (typeof translated === "string") untranslated.push(`${at} ${entry} (${translated})`)
      else
        for (const { permission, pattern } of translated)
          rules.push({ rule: { permission, pattern, action, source: `${at} (${entry})` }, claude: entry })
    })
  }
  const directories = Array.isArray(permissions.additionalDirectories) ? permissions.additionalDirectories : []
  directories.forEach((entry, index) => {
    if (typeof entry !== "string" || entry.trim() === "") return
    const dir = entry.startsWith("~/") ? join(places.home, entry.slice(2)) : resolve(places.base, entry)
    const at = place(["permissions", "additionalDirectories", index])
    const claude = `additionalDirectories ${entry}`
    const rule: Rule = {
      permission: "external_directory",
      pattern: `${dir}/*`,
      action: "allow",
      source: `${at} (${claude})`
    }
    rules.unshift({ rule, claude })
  })
  const env = isObject(value.env)
    ? Object.fromEntries(Object.entries(value.env).filter((e): e is [string, string] => typeof e[1] === "string"))
    : {}
  const config = Object.keys(env).length > 0 ? { shell: { env: { set: env } } } : {}
  return { rules, config, untranslated }
}
