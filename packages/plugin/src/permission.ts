import { Schema } from "effect"
import { z } from "zod"

/** What a rule does when it matches. */
export const PermissionAction = Schema.Literals(["allow", "deny", "ask"])
export type PermissionAction = typeof PermissionAction.Type

/**
 * One rule: `permission` (e.g. `edit`, `bash`, `read`, or `*`) and `pattern` (a wildcard over the thing asked
 * for: a path, a command) decide `action`. A ruleset is an ordered list; the LAST matching rule wins.
 */
export const Rule = Schema.Struct({
  permission: Schema.String,
  pattern: Schema.String,
  action: PermissionAction,
  /** Where the rule came from (a config file, an agent, "session"), for explanations and the audit trail. */
  source: Schema.optionalKey(Schema.String),
  /**
   * A rule that may only make a decision stricter (an untrusted project's deny or ask): it decides only when it is
   * stricter than what the other rules decide, wherever it stands in the ruleset. So a cloned repository's
   * `"rm *": "ask"` cannot turn the user's or an agent's `deny` into a question.
   */
  narrows: Schema.optionalKey(Schema.Boolean),
  /**
   * A rule that decides only the asks its pattern matches (a plugin's default for its own tools, such as MCP's
   * `mcp:may-write` ask): it never stands for what a command Lathe cannot analyse might run, so it cannot turn an
   * unknown bash command or write into an ask. Rules a person writes are never scoped.
   */
  scoped: Schema.optionalKey(Schema.Boolean)
})
export type Rule = typeof Rule.Type

/** An ordered list of rules; the last matching rule wins. Rulesets merge by concatenation. */
export type Ruleset = ReadonlyArray<Rule>

/** What a tool asks for. `patterns` are matched against rules; `always` are remembered on an "always" reply. */
export interface PermissionRequest {
  /** The permission asked for: `edit`, `bash`, `external_directory`, `doom_loop`, a tool name, … */
  readonly permission: string
  /** The concrete things asked for, e.g. file paths or normalised commands. An ask with no pattern asks for `*`. */
  readonly patterns: ReadonlyArray<string>
  /** The patterns an "always" reply adds allow rules for (e.g. `git push *`); defaults to `patterns`. */
  readonly always?: ReadonlyArray<string>
  /** Shown to the person answering: a diff, the full command, a reason. */
  readonly metadata?: Readonly<Record<string, unknown>>
  /**
   * Only a person may approve this ask (a rerun outside the sandbox, a write to a protected path): no wildcard rule,
   * no built-in default, no plugin hook and no `--yes` answers it; only a rule naming this very permission, an
   * "always" a person gave, or a person at a terminal. Without a terminal it is refused and the model told why.
   */
  readonly requiresPerson?: boolean
}

/** A rule said `deny`. The message is written for the model. */
export class PermissionDenied extends Schema.TaggedError<PermissionDenied>()("PermissionDenied", {
  permission: Schema.String,
  pattern: Schema.String,
  rule: Schema.optionalKey(Rule),
  message: Schema.String
}) {}

/** The person (or a hook) rejected the ask, optionally with guidance for the model in `feedback`. */
export class PermissionRejected extends Schema.TaggedError<PermissionRejected>()("PermissionRejected", {
  permission: Schema.String,
  patterns: Schema.Array(Schema.String),
  feedback: Schema.optionalKey(Schema.String),
  message: Schema.String
}) {}

/** Every way an ask can fail. */
export type PermissionError = PermissionDenied | PermissionRejected

/** Builds the model-facing denial for a deny rule. */
export const denied = (permission: string, pattern: string, rule?: Rule): PermissionDenied =>
  new PermissionDenied({
    permission,
    pattern,
    ...(rule ? { rule } : {}),
    message:
      `Permission "${permission}" is denied for "${pattern}" by a rule` +
      `${rule?.source ? ` in ${rule.source}` : ""}. Do not retry it; choose another approach or ask the user.`
  })

/** Builds the model-facing rejection, carrying the person's words when they gave any. */
export const rejected = (permission: string, patterns: ReadonlyArray<string>, feedback?: string): PermissionRejected =>
  new PermissionRejected({
    permission,
    patterns: [...patterns],
    ...(feedback ? { feedback } : {}),
    message: feedback
      ? `The user rejected this ${permission} request and said: ${feedback}`
      : `The user rejected this ${permission} request. Stop and wait for the user's next instruction.`
  })

// Permission rules as a config file or an agent definition writes them.

// Each schema's `error` is the human "expected …" text; the loader writes `<path>: expected <error>, got <value>`.
const says = (expected: string) => ({ error: expected })

/** What a permission rule does: `allow`, `deny` or `ask`. */
export const PermissionActionConfig = z.enum(["allow", "deny", "ask"], says('"allow", "deny" or "ask"'))
/** What a permission rule does: `allow`, `deny` or `ask`. */
export type PermissionActionConfig = z.infer<typeof PermissionActionConfig>

/**
 * Permission rules as written in config: one action for everything (`"ask"`), or per permission an action or an
 * object of `pattern: action`. Key order is meaningful: rules expand in order and the last match wins.
 */
export const PermissionConfig = z.union(
  [
    PermissionActionConfig,
    z.record(
      z.string(),
      z.union(
        [PermissionActionConfig, z.record(z.string(), PermissionActionConfig)],
        says('"allow", "deny" or "ask", or an object of pattern: action')
      )
    )
  ],
  says('"allow", "deny" or "ask", or an object of permission: action')
)
/** Permission rules as written in config. */
export type PermissionConfig = z.infer<typeof PermissionConfig>

/**
 * Expands config permissions into an ordered ruleset, in key order: `"ask"` is `*: *`, `{ "bash": "ask" }` is
 * `bash: *`, `{ "read": { "*": "allow", "*.env": "ask" } }` is two `read` rules. Every rule carries `source`.
 */
export const permissionRules = (config: PermissionConfig | undefined, source: string): Array<Rule> => {
  if (config === undefined) return []
  if (typeof config === "string") return [{ permission: "*", pattern: "*", action: config, source }]
  return Object.entries(config).flatMap(([permission, value]) =>
    typeof value === "string"
      ? [{ permission, pattern: "*", action: value, source }]
      : Object.entries(value).map(([pattern, action]) => ({ permission, pattern, action, source }))
  )
}
