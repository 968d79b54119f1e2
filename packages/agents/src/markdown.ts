import { AgentDefinition, PermissionConfig } from "@lathe/plugin"
import { isMap, LineCounter, parseDocument } from "yaml"
import { z } from "zod"
import {
  CLAUDE_MODEL_ALIASES,
  type ClaudeModelResolver,
  claudeTools,
  mergePermission,
  type ToolsAllowList
} from "./compat.js"

/** Agent files parse once each: zod's compiled fast path would cost more to build than it saves. */
const PARSE_ONCE = { jitless: true } as const

/**
 * The front matter of an agent file. Keys are snake_case like config's `agent.<name>`. Claude Code's and OpenCode's
 * files load as they are: `model` may be a Claude alias (`sonnet`, `opus`, `haiku`) or `inherit`, `tools` a list of
 * the only tools to offer (`Read, Grep, Bash(git diff:*)`), `maxSteps` is OpenCode's `max_steps`; keys Lathe does
 * not use (`color`, …) are ignored and named in the file's notice.
 */
export const AgentFrontMatter = z.object({
  description: z.string().optional(),
  mode: z.enum(["primary", "subagent", "all"]).optional(),
  hidden: z.boolean().optional(),
  /** `true` skips the file, e.g. to switch off a global agent for a while. */
  disable: z.boolean().optional(),
  model: z.string().optional(),
  temperature: z.number().optional(),
  top_p: z.number().optional(),
  max_steps: z.number().optional(),
  maxSteps: z.number().optional(),
  tools: z.union([z.record(z.string(), z.boolean()), z.string(), z.array(z.string())]).optional(),
  permission: PermissionConfig.optional(),
  /** Claude Code's name for the agent; Lathe names it after its file and says so when the two differ. */
  name: z.string().optional()
})
/** The front matter of an agent file, as written. */
export type AgentFrontMatter = z.input<typeof AgentFrontMatter>

/**
 * The outcome of parsing one agent file: the agent, nothing (a disabled file), or what is wrong with it. `notices`
 * say what of a loaded file was ignored or taken differently (unused keys, a model that inherits), for the person.
 */
export type ParsedAgentFile =
  | { readonly ok: true; readonly agent: AgentDefinition | undefined; readonly notices: ReadonlyArray<string> }
  | { readonly ok: false; readonly error: string }

/** How to read the fields that depend on the person's setup. */
export interface AgentFileOptions {
  /** Maps Claude's model names to a configured provider's model; without it (or when it finds none) they inherit. */
  readonly claudeModel?: ClaudeModelResolver
  /** The mode when the front matter names none (Claude Code's files are subagents); default: the host's (`all`). */
  readonly defaultMode?: "primary" | "subagent" | "all"
}

// AgentDefinition's camelCase fields as the author wrote them in front matter.
const FIELD_NAMES: Readonly<Record<string, string>> = {
  topP: "top_p",
  maxSteps: "max_steps",
  prompt: "the body (the prompt)",
  name: "the file name (the agent's name)"
}

const OPENING = /^\uFEFF?---[ \t]*\r?\n/
const CLOSING = /^---[ \t]*$/m

/** Splits `---` front matter from the body. A file without front matter is all body. */
const split = (text: string): { frontMatter: string; body: string; offset: number } | string => {
  const opening = OPENING.exec(text)
  if (!opening) return { frontMatter: "", body: text, offset: 0 }
  const rest = text.slice(opening[0].length)
  const closing = CLOSING.exec(rest)
  if (!closing) return 'the front matter opened with "---" is never closed: add a line "---" after it'
  return {
    frontMatter: rest.slice(0, closing.index),
    body: rest.slice(closing.index + closing[0].length).replace(/^\r?\n/, ""),
    offset: 1
  }
}

/** Splits Claude's `Read, Bash(git log --format=%h,%s)` on the commas outside parentheses. */
const toolList = (text: string): Array<string> => {
  const entries = [""]
  let depth = 0
  for (const char of text) {
    if (char === "(") depth++
    if (char === ")") depth = Math.max(0, depth - 1)
    if (char === "," && depth === 0) entries.push("")
    else entries[entries.length - 1] += char
  }
  return entries
}

/** OpenCode's `tools: { write: false }` as it is; Claude's list (a string or YAML list) as an allow-list. */
const toolsOf = (tools: z.output<typeof AgentFrontMatter>["tools"]): ToolsAllowList | undefined =>
  tools === undefined
    ? undefined
    : typeof tools === "string"
      ? claudeTools(toolList(tools))
      : Array.isArray(tools)
        ? claudeTools(tools)
        : { tools, permission: {}, notices: [] }

const INHERITS = "the agent runs on the model of the turn that runs it"

/** The agent's `provider/model`, or none (it inherits), with a notice when the file asked for something else. */
const agentModel = (model: string | undefined, options: AgentFileOptions): { model?: string; notice?: string } => {
  if (model === undefined || model === "inherit") return {}
  if (model.includes("/")) return { model }
  if (CLAUDE_MODEL_ALIASES.includes(model) || model.startsWith("claude-")) {
    const mapped = options.claudeModel?.(model)
    return mapped
      ? { model: mapped }
      : { notice: `model: "${model}" is a Claude model and no Anthropic provider is configured; ${INHERITS}` }
  }
  return { notice: `model: "${model}" is not "provider/model" or a Claude alias; ${INHERITS}` }
}

const describeIssues = (issues: ReadonlyArray<z.core.$ZodIssue>, names: Readonly<Record<string, string>>): string =>
  issues
    .map((issue) => {
      const [head, ...rest] = issue.path.map(String)
      const field = head === undefined ? "front matter" : [names[head] ?? head, ...rest].join(".")
      return `${field}: ${issue.message}`
    })
    .join("; ")

/**
 * Parses an agent file: YAML front matter between `---` lines, then the prompt. `name` is the agent's name (the file
 * name without `.md`). Never throws: a problem comes back as an error naming the field at fault, or the line of
 * the front matter that does not parse.
 */
export const parseAgentFile = (name: string, text: string, options: AgentFileOptions = {}): ParsedAgentFile => {
  const parts = split(text)
  if (typeof parts === "string") return { ok: false, error: parts }
  const lines = new LineCounter()
  const document = parseDocument(parts.frontMatter, { lineCounter: lines, prettyErrors: false })
  const problem = document.errors[0]
  if (problem) {
    const at = lines.linePos(problem.pos[0])
    return { ok: false, error: `front matter line ${at.line + parts.offset}, column ${at.col}: ${problem.message}` }
  }
  if (document.contents !== null && !isMap(document.contents))
    return { ok: false, error: "front matter: expected `key: value` lines (a YAML mapping)" }
  const raw: Record<string, unknown> = document.toJS() ?? {}
  const fields = AgentFrontMatter.safeParse(raw, PARSE_ONCE)
  if (!fields.success) return { ok: false, error: describeIssues(fields.error.issues, {}) }
  const f = fields.data
  if (f.disable) return { ok: true, agent: undefined, notices: [] }
  const notices: Array<string> = []
  const unused = Object.keys(raw).filter((key) => !Object.hasOwn(AgentFrontMatter.shape, key))
  if (unused.length > 0)
    notices.push(`ignored ${unused.join(", ")} (Lathe does not use ${unused.length > 1 ? "them" : "it"})`)
  if (f.name !== undefined && f.name !== name)
    notices.push(`name: the agent is called "${name}" after its file, not "${f.name}"`)
  const { model, notice } = agentModel(f.model, options)
  if (notice) notices.push(notice)
  const offered = toolsOf(f.tools)
  if (offered) notices.push(...offered.notices)
  const tools = offered?.tools
  const permission = mergePermission(offered?.permission ?? {}, f.permission)
  const maxSteps = f.max_steps ?? f.maxSteps
  const prompt = parts.body.trim()
  const definition = {
    name,
    ...(f.description !== undefined ? { description: f.description } : {}),
    ...(f.mode !== undefined
      ? { mode: f.mode }
      : options.defaultMode !== undefined
        ? { mode: options.defaultMode }
        : {}),
    ...(f.hidden !== undefined ? { hidden: f.hidden } : {}),
    ...(prompt !== "" ? { prompt } : {}),
    ...(permission !== undefined ? { permission } : {}),
    // Claude Code's `model: inherit` is the default here: the model of the turn that runs the agent.
    ...(model !== undefined ? { model } : {}),
    ...(f.temperature !== undefined ? { temperature: f.temperature } : {}),
    ...(f.top_p !== undefined ? { topP: f.top_p } : {}),
    ...(maxSteps !== undefined ? { maxSteps } : {}),
    ...(tools !== undefined ? { tools } : {})
  }
  const checked = AgentDefinition.safeParse(definition, PARSE_ONCE)
  if (!checked.success)
    return {
      ok: false,
      error: describeIssues(checked.error.issues, {
        ...FIELD_NAMES,
        maxSteps: f.max_steps === undefined ? "maxSteps" : "max_steps"
      })
    }
  return { ok: true, agent: definition, notices }
}
