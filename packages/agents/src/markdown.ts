import { AgentDefinition, PermissionConfig, parseOnce } from "@lathe/core"
import { isMap, LineCounter, parseDocument } from "yaml"
import { z } from "zod"

/**
 * The front matter of an agent file. Keys are snake_case like config's `agent.<name>`; `name` and `color` are
 * accepted (and ignored) so Claude Code agent files load unchanged, and `tools` may also be Claude's
 * comma-separated list of the only tools to offer (`tools: Read, Grep, Glob`).
 */
export const AgentFrontMatter = z.strictObject({
  description: z.string().optional(),
  mode: z.enum(["primary", "subagent", "all"]).optional(),
  hidden: z.boolean().optional(),
  /** `true` skips the file, e.g. to switch off a global agent for a while. */
  disable: z.boolean().optional(),
  model: z.string().optional(),
  temperature: z.number().optional(),
  top_p: z.number().optional(),
  max_steps: z.number().optional(),
  tools: z.union([z.record(z.string(), z.boolean()), z.string()]).optional(),
  permission: PermissionConfig.optional(),
  name: z.string().optional(),
  color: z.string().optional()
})
/** The front matter of an agent file, as written. */
export type AgentFrontMatter = z.input<typeof AgentFrontMatter>

/** The outcome of parsing one agent file: the agent, nothing (a disabled file), or what is wrong with it. */
export type ParsedAgentFile =
  | { readonly ok: true; readonly agent: AgentDefinition | undefined }
  | { readonly ok: false; readonly error: string }

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

/** Claude Code's `tools: Read, Grep` means "only these": everything else is switched off. */
const toolsMap = (tools: Record<string, boolean> | string): Record<string, boolean> =>
  typeof tools !== "string"
    ? tools
    : Object.fromEntries([
        ["*", false],
        ...tools
          .split(",")
          .map((tool) => tool.trim().toLowerCase())
          .filter((tool) => tool !== "")
          .map((tool) => [tool, true])
      ])

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
export const parseAgentFile = (name: string, text: string): ParsedAgentFile => {
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
  const fields = AgentFrontMatter.safeParse(document.toJS() ?? {}, parseOnce)
  if (!fields.success) return { ok: false, error: describeIssues(fields.error.issues, {}) }
  const f = fields.data
  if (f.disable) return { ok: true, agent: undefined }
  const prompt = parts.body.trim()
  const definition = {
    name,
    ...(f.description !== undefined ? { description: f.description } : {}),
    ...(f.mode !== undefined ? { mode: f.mode } : {}),
    ...(f.hidden !== undefined ? { hidden: f.hidden } : {}),
    ...(prompt !== "" ? { prompt } : {}),
    ...(f.permission !== undefined ? { permission: f.permission } : {}),
    // Claude Code's `model: inherit` is the default here: the session's model.
    ...(f.model !== undefined && f.model !== "inherit" ? { model: f.model } : {}),
    ...(f.temperature !== undefined ? { temperature: f.temperature } : {}),
    ...(f.top_p !== undefined ? { topP: f.top_p } : {}),
    ...(f.max_steps !== undefined ? { maxSteps: f.max_steps } : {}),
    ...(f.tools !== undefined ? { tools: toolsMap(f.tools) } : {})
  }
  const checked = AgentDefinition.safeParse(definition, parseOnce)
  if (!checked.success) return { ok: false, error: describeIssues(checked.error.issues, FIELD_NAMES) }
  return { ok: true, agent: definition }
}
