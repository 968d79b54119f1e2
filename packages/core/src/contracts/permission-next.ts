import { Context, Effect, Layer, Schema } from "effect"

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

/**
 * The rules every ruleset starts with: the host's defaults (`defaults()` of `@lathe/permission` in the CLI). The loop
 * puts them first, so agent rules, the user's config and remembered approvals come after and win. Empty by default.
 */
export const PermissionDefaults = Context.Reference<Ruleset>("@lathe/core/PermissionDefaults", {
  defaultValue: () => []
})

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

/** A request as the service receives it: who asks, under which ruleset. */
export interface PermissionAsk extends PermissionRequest {
  readonly sessionID: string
  readonly messageID?: string
  readonly callID?: string
  /** The effective ruleset for this ask (defaults, agent, user config, session), in order. */
  readonly ruleset: Ruleset
  /**
   * Rulesets that must also allow: a subagent's asks carry its parents' rulesets, so it can never do what a parent
   * could not. Each check takes the strictest verdict (deny, then ask, then allow) over `ruleset` and these.
   */
  readonly constraints?: ReadonlyArray<Ruleset>
  /** Aborting cancels a pending ask with `PermissionRejected`; nothing waits forever. */
  readonly signal?: AbortSignal
}

/** How a person answered an ask. */
export type PermissionReply =
  | { readonly type: "once"; readonly by?: ReplySource }
  | { readonly type: "always"; readonly by?: ReplySource }
  | { readonly type: "reject"; readonly message?: string; readonly by?: ReplySource }

/** Who answered: the person (default), or a blanket `--yes`; recorded in the audit trail. */
export type ReplySource = "person" | "yes"

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

/** A pending ask, as a UI lists it. */
export interface PendingAsk extends PermissionRequest {
  readonly id: string
  readonly sessionID: string
  readonly callID?: string
}

/**
 * The permission service: evaluate rules, ask and wait for a reply, remember "always" answers.
 * The real layer lives in `@lathe/permission`; core ships `allowAll` and `denyAll` for tests.
 */
export class PermissionNext extends Context.Service<
  PermissionNext,
  {
    /** Decides an ask: succeeds when allowed (by rule, hook, remembered approval or reply), fails otherwise. */
    readonly ask: (request: PermissionAsk) => Effect.Effect<void, PermissionError>
    /** Answers a pending ask by id. Unknown ids are ignored. */
    readonly reply: (id: string, reply: PermissionReply) => Effect.Effect<void>
    /** The asks waiting for a reply. */
    readonly pending: Effect.Effect<ReadonlyArray<PendingAsk>>
  }
>()("@lathe/core/PermissionNext") {
  /** Allows every ask: for tests, and for `--yes`-style runs where deny rules are enforced elsewhere. */
  static readonly allowAll = Layer.succeed(
    PermissionNext,
    PermissionNext.of({ ask: () => Effect.void, reply: () => Effect.void, pending: Effect.succeed([]) })
  )

  /** Rejects every ask, as a person who says no to everything would. */
  static readonly denyAll = Layer.succeed(
    PermissionNext,
    PermissionNext.of({
      ask: (request) => Effect.fail(rejected(request.permission, request.patterns)),
      reply: () => Effect.void,
      pending: Effect.succeed([])
    })
  )
}
