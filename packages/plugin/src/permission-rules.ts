/**
 * Evaluating permission rulesets: the one definition of "which rule decides", shared by the permission engine
 * (`@lathe/permission`), the loop (which tools to offer) and plugins (e.g. which skills an agent may load).
 */
import { homedir } from "node:os"
import type { PermissionAction, Rule, Ruleset } from "./permission.js"
import { compilePattern, expandHome, type Matcher } from "./wildcard.js"

/** The `source` of the implicit rule `evaluate` returns when no rule matches. */
export const IMPLICIT_SOURCE = "no rule matched (the default is ask)"

/** Options of evaluation. */
export interface EvaluateOptions {
  /** What `~/` and `$HOME/` in rule patterns stand for; defaults to the user's home directory. */
  readonly home?: string
}

interface CompiledRule {
  readonly rule: Rule
  readonly permission: Matcher
  readonly pattern: Matcher
  /** The pattern's first character when it is literal: only strings starting with it can match. */
  readonly first: string | undefined
}

/** The rules that may decide one permission, last first, also split by the asked string's first character. */
interface Candidates {
  readonly all: ReadonlyArray<CompiledRule>
  readonly byFirst: Map<string, ReadonlyArray<CompiledRule>>
}

interface Compiled {
  readonly rules: ReadonlyArray<CompiledRule>
  /** Whether any rule only narrows (see `Rule.narrows`): evaluation then looks past the first match. */
  readonly narrowing: boolean
  readonly byPermission: Map<string, Candidates>
}

const MAX_INDEX = 512

// Rulesets are immutable values: a compiled form is cached per array (and home), never invalidated.
const cache = new WeakMap<Ruleset, Map<string, Compiled>>()

const compile = (ruleset: Ruleset, home: string): Compiled => {
  let perHome = cache.get(ruleset)
  if (!perHome) {
    perHome = new Map()
    cache.set(ruleset, perHome)
  }
  let compiled = perHome.get(home)
  if (!compiled) {
    compiled = {
      rules: ruleset.map((rule) => {
        const first = expandHome(rule.pattern, home)[0]
        return {
          rule,
          permission: compilePattern(rule.permission),
          pattern: compilePattern(rule.pattern, home),
          first: first === "*" || first === "?" ? undefined : first
        }
      }),
      narrowing: ruleset.some((rule) => rule.narrows === true),
      byPermission: new Map()
    }
    perHome.set(home, compiled)
  }
  return compiled
}

const candidates = (compiled: Compiled, permission: string, pattern: string): ReadonlyArray<CompiledRule> => {
  let forPermission = compiled.byPermission.get(permission)
  if (!forPermission) {
    if (compiled.byPermission.size >= MAX_INDEX) compiled.byPermission.clear()
    forPermission = {
      all: compiled.rules.filter((entry) => entry.permission(permission)).reverse(),
      byFirst: new Map()
    }
    compiled.byPermission.set(permission, forPermission)
  }
  const key = pattern.charAt(0)
  let list = forPermission.byFirst.get(key)
  if (!list) {
    list = forPermission.all.filter((entry) => entry.first === undefined || entry.first === key)
    if (forPermission.byFirst.size < MAX_INDEX) forPermission.byFirst.set(key, list)
  }
  return list
}

/** The home directory `~` in rules stands for, read on first use (not at module load: a startup snapshot would bake in the home of the machine that built it). */
let home: string | undefined
const defaultHome = (): string => {
  home ??= homedir()
  return home
}

/** The rule `evaluate` returns when nothing matched: ask. */
export const implicitAsk = (permission: string): Rule => ({
  permission,
  pattern: "*",
  action: "ask",
  source: IMPLICIT_SOURCE
})

/** Whether a rule is the implicit "no rule matched" ask. */
export const isImplicit = (rule: Rule): boolean => rule.source === IMPLICIT_SOURCE

const strictness = (action: PermissionAction): number => (action === "deny" ? 2 : action === "ask" ? 1 : 0)

/**
 * The rule that decides `pattern` for `permission`: the LAST rule whose permission and pattern both match, or
 * the implicit ask when none does. A rule marked `narrows` (an untrusted project's) decides only when it is stricter
 * than that: the last matching narrowing rule against the last matching other rule, the stricter wins. Pure; treats
 * `ruleset` as immutable (its compiled form is cached).
 */
export const evaluate = (
  permission: string,
  pattern: string,
  ruleset: Ruleset,
  options: EvaluateOptions = {}
): Rule => {
  const compiled = compile(ruleset, options.home ?? defaultHome())
  if (!compiled.narrowing) {
    for (const entry of candidates(compiled, permission, pattern)) if (entry.pattern(pattern)) return entry.rule
    return implicitAsk(permission)
  }
  let decided: Rule | undefined
  let narrowest: Rule | undefined
  // Wherever a narrowing rule stands (an untrusted project's agent rules come before the user's top-level rules).
  for (const entry of candidates(compiled, permission, pattern)) {
    if (entry.rule.narrows === true) {
      if (narrowest === undefined && entry.pattern(pattern)) narrowest = entry.rule
    } else if (decided === undefined && entry.pattern(pattern)) decided = entry.rule
    if (decided !== undefined && narrowest !== undefined) break
  }
  const base = decided ?? implicitAsk(permission)
  return narrowest !== undefined && strictness(narrowest.action) > strictness(base.action) ? narrowest : base
}

/** One pattern's verdict within a decision. */
export interface PatternVerdict {
  readonly pattern: string
  readonly rule: Rule
}

/** The verdict on an ask with several patterns. */
export interface Decision {
  /** `deny` if any pattern is denied, `allow` if all are allowed, else `ask`. */
  readonly action: PermissionAction
  readonly verdicts: ReadonlyArray<PatternVerdict>
}

/** Decides an ask with several patterns: any deny denies, all allow allow, anything else asks. No pattern asks for `*`. */
export const decide = (
  permission: string,
  patterns: ReadonlyArray<string>,
  ruleset: Ruleset,
  options: EvaluateOptions = {}
): Decision => {
  const verdicts = (patterns.length === 0 ? ["*"] : patterns).map((pattern) => ({
    pattern,
    rule: evaluate(permission, pattern, ruleset, options)
  }))
  const action = verdicts.some((verdict) => verdict.rule.action === "deny")
    ? "deny"
    : verdicts.every((verdict) => verdict.rule.action === "allow")
      ? "allow"
      : "ask"
  return { action, verdicts }
}
