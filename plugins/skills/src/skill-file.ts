import { parse as parseYaml } from "yaml"
import { z } from "zod"

/** A skill's front matter parses once per file: zod's compiled fast path would cost more to build than it saves. */
const PARSE_ONCE = { jitless: true } as const

/** The longest skill name the Agent Skills format allows. */
export const MAX_NAME_LENGTH = 64

/** The longest description the Agent Skills format allows. */
export const MAX_DESCRIPTION_LENGTH = 1024

/**
 * A valid skill name (Agent Skills format): lowercase letters, digits and single hyphens, not starting or ending
 * with a hyphen. The length limit is checked separately so the error can say which rule failed.
 */
const NAME = /^[a-z0-9]+(?:-[a-z0-9]+)*$/

/**
 * The front matter of a `SKILL.md`. Unknown keys (e.g. `metadata`, `compatibility`) are accepted and ignored.
 * `allowed-tools` may be a list or a space- or comma-separated string.
 */
export const SkillFrontMatter = z.object({
  name: z.string({ error: "is required and must be a string" }),
  description: z
    .string({ error: "is required and must be a string" })
    .trim()
    .min(1, { error: "must not be empty" })
    .max(MAX_DESCRIPTION_LENGTH, { error: `must be at most ${MAX_DESCRIPTION_LENGTH} characters` }),
  "allowed-tools": z
    .union([z.string(), z.array(z.string())], { error: "must be a list of tool names or a string of them" })
    .optional(),
  license: z.string({ error: "must be a string" }).optional()
})

/** The front matter as written by an author. */
export type SkillFrontMatter = z.infer<typeof SkillFrontMatter>

/** A skill's parsed content, before it is placed in a folder. */
export interface ParsedSkill {
  readonly name: string
  readonly description: string
  /** The tools the skill expects to use, as its author listed them (informational; not enforced). */
  readonly allowedTools: ReadonlyArray<string>
  readonly license?: string
  /** The Markdown after the front matter, trimmed: the skill's instructions. */
  readonly body: string
}

/** Parsing succeeded with a skill, or failed with a problem written for the person who wrote the file. */
export type ParseResult =
  | { readonly ok: true; readonly skill: ParsedSkill }
  | { readonly ok: false; readonly problem: string }

const FENCE = /^---[ \t]*\r?\n(?:([\s\S]*?)\r?\n)?---[ \t]*(?:\r?\n|$)/

/** Why `name` breaks the Agent Skills name rules, or undefined when it follows them. */
export const nameProblem = (name: string): string | undefined => {
  if (name.length === 0) return `the name must not be empty`
  if (name.length > MAX_NAME_LENGTH)
    return `the name "${name}" is ${name.length} characters long; the limit is ${MAX_NAME_LENGTH}`
  if (!NAME.test(name))
    return (
      `the name "${name}" is invalid: use only lowercase letters, digits and hyphens ` +
      `(no hyphen at the start or end, never two in a row)`
    )
  return undefined
}

const splitTools = (value: string | ReadonlyArray<string> | undefined): ReadonlyArray<string> =>
  value === undefined
    ? []
    : (typeof value === "string" ? value.split(/[\s,]+/) : value).map((tool) => tool.trim()).filter(Boolean)

/**
 * Parses the text of `<folder>/SKILL.md`. The front matter must be a YAML mapping between `---` lines at the very
 * start; its `name` must follow the Agent Skills rules and equal `folder`. Never throws.
 */
export const parseSkillFile = (text: string, folder: string): ParseResult => {
  const source = text.startsWith("\uFEFF") ? text.slice(1) : text
  const fence = FENCE.exec(source)
  if (!fence)
    return {
      ok: false,
      problem: `SKILL.md must start with YAML front matter between two "---" lines, setting name and description`
    }
  let data: unknown
  try {
    data = parseYaml(fence[1] ?? "")
  } catch (error) {
    const detail = error instanceof Error ? error.message.split("\n")[0] : String(error)
    return { ok: false, problem: `the front matter is not valid YAML: ${detail}` }
  }
  if (typeof data !== "object" || data === null || Array.isArray(data))
    return { ok: false, problem: `the front matter must be a YAML mapping of fields (name: …, description: …)` }
  const parsed = SkillFrontMatter.safeParse(data, PARSE_ONCE)
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => `field "${issue.path.join(".")}" ${issue.message}`)
    return { ok: false, problem: `invalid front matter: ${issues.join("; ")}` }
  }
  const { name, description, license } = parsed.data
  const bad = nameProblem(name)
  if (bad) return { ok: false, problem: bad }
  if (name !== folder) return { ok: false, problem: `the name "${name}" must equal its folder name "${folder}"` }
  return {
    ok: true,
    skill: {
      name,
      description,
      allowedTools: splitTools(parsed.data["allowed-tools"]),
      ...(license !== undefined ? { license } : {}),
      body: source.slice(fence[0].length).trim()
    }
  }
}
