import { posix, resolve } from "node:path"
import type { PermissionAsk } from "@lathe/core"
import { evaluate, type PermissionAction, type PermissionRequest, type Rule, type Ruleset } from "@lathe/plugin"
import { expandHome, implicitAsk, isImplicit, wildcardMatch } from "@lathe/plugin/host"
import type { Parser } from "web-tree-sitter"
import { analyzeWith } from "./bash.js"
import { withProgramBasenames, writtenRule } from "./program-paths.js"
import { expandGlobWrite, inside, realPath } from "./real-path.js"
import { DEFAULTS_SOURCE, RUN_FLAGS_SOURCE } from "./ruleset.js"

/**
 * One thing an ask is decided on: a pattern of a permission. An ask becomes several checks: one per pattern,
 * and for `bash` one per simple command plus an `external_directory` check per write outside the project.
 */
export interface Check {
  readonly permission: string
  readonly pattern: string
  /** What an "always" reply remembers for this check. */
  readonly always: ReadonlyArray<string>
  /**
   * Why the check cannot be known statically (an unknown command: the pattern is the whole line; or an unknown
   * write target). Never allowed by a prefix rule; see `verdictOf`.
   */
  readonly unparsable?: string
  /** A command whose tail is only known at run time: its static head (see `SimpleCommand.prefix`). */
  readonly prefix?: string
  /** The ask this check belongs to may only be approved by a person (see `isPersonOnly`). */
  readonly personOnly?: boolean
  /**
   * An `edit` check of a path a bash command writes (a redirection, `tee`, `cp`, `sed -i` …; the pattern is the path
   * as the file tools name it): the edit rules bind this route too, but only where they deny (see `verdictOf`).
   */
  readonly writeRoute?: boolean
}

/**
 * Permissions only a person may approve, whichever tool asks: a rerun outside the sandbox (`sandbox_escape`), a
 * write to a protected path (`protected_path`), and handing the session between the plan and build agents
 * (`plan_exit`, `plan_enter`).
 */
export const PERSON_ONLY_PERMISSIONS: ReadonlySet<string> = new Set([
  "sandbox_escape",
  "protected_path",
  "plan_exit",
  "plan_enter"
])

/**
 * Whether an ask may only be approved by a person: the tool marked it (`requiresPerson`, or the older
 * `metadata.requiresPerson`), or its permission is one of `PERSON_ONLY_PERMISSIONS`.
 */
export const isPersonOnly = (request: PermissionRequest): boolean =>
  request.requiresPerson === true ||
  request.metadata?.requiresPerson === true ||
  PERSON_ONLY_PERMISSIONS.has(request.permission)

/**
 * Whether `rule` may approve a person-only check of `permission`: it names that very permission (a wildcard in the
 * permission field, `*` included, does not) and is neither one of the built-in defaults nor a `lathe run --allow`.
 */
export const mayApprovePersonOnly = (rule: Rule, permission: string): boolean =>
  rule.permission === permission &&
  !/[*?]/.test(rule.permission) &&
  rule.source !== DEFAULTS_SOURCE &&
  rule.source !== RUN_FLAGS_SOURCE

/** A check's verdict: the action, the rule that decided, and whether a remembered approval upgraded it. */
export interface Verdict {
  readonly check: Check
  readonly action: PermissionAction
  readonly rule: Rule
  readonly by: "rule" | "approval"
  /**
   * An `ask` that only a person may approve: the check cannot be known statically and a deny rule could apply
   * to it. A blanket `--yes` must not approve it; without a terminal it is rejected.
   */
  readonly requiresPerson?: boolean
}

/** Where the project is, for external-directory checks. */
export interface CheckContext {
  readonly root: string
  readonly directory: string
  readonly home: string
}

const parentPattern = (path: string): string => `${path.slice(0, path.lastIndexOf("/")) || ""}/*`

const bashChecks = (parser: Parser, line: string, cwd: string, context: CheckContext): Array<Check> => {
  const analysis = analyzeWith(parser, line)
  const checks: Array<Check> = analysis.commands.map((command) => ({
    permission: "bash",
    pattern: command.text,
    always: [command.always],
    ...(command.prefix !== undefined ? { prefix: command.prefix } : {})
  }))
  if (analysis.unparsable !== undefined) {
    checks.push({ permission: "bash", pattern: line, always: [line], unparsable: analysis.unparsable })
  } else if (checks.length === 0) {
    checks.push({ permission: "bash", pattern: line, always: [line] })
  }
  const root = realPath(context.root)
  const outside = (path: string) => {
    const relative = posix.relative(root, path)
    const pattern = inside(root, path) ? relative || "." : path
    checks.push({ permission: "edit", pattern, always: [pattern], writeRoute: true })
    if (!inside(root, path))
      checks.push({ permission: "external_directory", pattern: path, always: [parentPattern(path)] })
  }
  const unknownWrite = (permission: string, target: string, reason: string) =>
    checks.push({
      permission,
      pattern: target,
      always: [target],
      unparsable: reason,
      ...(permission === "edit" ? { writeRoute: true } : {})
    })
  // Joined without normalising: `link/..` must be resolved through the link, not lexically.
  const absolute = (write: string) => {
    const path = expandHome(write, context.home)
    return path.startsWith("/") ? path : `${cwd}/${path}`
  }
  for (const write of analysis.writes) outside(realPath(absolute(write)))
  for (const write of analysis.globWrites) {
    const paths = expandGlobWrite(absolute(write))
    if (paths === undefined) {
      const reason = `the pattern ${write} matches too many files to check`
      for (const permission of ["external_directory", "edit"]) unknownWrite(permission, write, reason)
    } else for (const path of paths) outside(path)
  }
  for (const { target, reason } of analysis.unknownWrites) {
    for (const permission of ["external_directory", "edit"]) unknownWrite(permission, target, reason)
  }
  const redirected = new Set<string>()
  for (const { write, created, by } of analysis.throughCreated) {
    const path = tidy(absolute(write))
    if (redirected.has(path) || (created !== undefined && !goesThrough(path, absolute(created)))) continue
    redirected.add(path)
    const reason =
      created === undefined
        ? `${by} in the same line may create links at paths not known statically, and this write could go through one`
        : `it goes through ${tidy(absolute(created))}, which ${by} in the same line may create or replace (a link could point anywhere)`
    for (const permission of ["external_directory", "edit"]) unknownWrite(permission, path, reason)
  }
  return checks
}

/** Drops `.` segments (never `..`: it must be resolved through links). */
const tidy = (path: string): string => path.replace(/\/\.(?=\/|$)/g, "") || "/"

/**
 * Whether `write` goes through `created` at run time: some leading part of it, as written (a later `..` applies
 * after the link is followed), is the same real path as `created`.
 */
const goesThrough = (write: string, created: string): boolean => {
  const target = realPath(created)
  let prefix = ""
  for (const part of write.split("/")) {
    if (part === "" || part === ".") continue
    prefix = `${prefix}/${part}`
    if (part !== ".." && realPath(prefix) === target) return true
  }
  return false
}

/**
 * The checks of an ask. `bash` patterns are command lines, analysed with `parser` (the bash tool passes the raw
 * line; `metadata.workdir` or `metadata.cwd`, when a string, is where it runs, else the project directory). Written
 * paths are resolved through symlinks (the real path of the deepest existing ancestor). Other permissions check
 * each pattern as given, with the request's `always` (default: the pattern). Every check of a person-only ask
 * (`isPersonOnly`) is marked `personOnly`.
 */
export const checksOf = (request: PermissionAsk, context: CheckContext, parser: Parser | undefined): Array<Check> => {
  const checks = plainChecksOf(request, context, parser)
  return isPersonOnly(request) ? checks.map((check) => ({ ...check, personOnly: true })) : checks
}

const plainChecksOf = (request: PermissionAsk, context: CheckContext, parser: Parser | undefined): Array<Check> => {
  const patterns = request.patterns.length === 0 ? ["*"] : request.patterns
  if (request.permission === "bash" && parser) {
    const where = request.metadata?.workdir ?? request.metadata?.cwd
    const cwd = typeof where === "string" ? resolve(context.directory, where) : context.directory
    const checks = patterns.flatMap((line) => bashChecks(parser, line, cwd, context))
    const seen = new Set<string>()
    return checks.filter((check) => {
      const key = `${check.permission}\u0000${check.pattern}\u0000${check.unparsable ?? ""}`
      if (seen.has(key)) return false
      seen.add(key)
      return true
    })
  }
  return patterns.map((pattern) => ({ permission: request.permission, pattern, always: request.always ?? [pattern] }))
}

/** Whether some completion of `prefix` could match `pattern` (its literal head is compatible with the prefix). */
const couldMatch = (pattern: string, prefix: string): boolean => {
  const wild = pattern.search(/[*?]/)
  const head = wild < 0 ? pattern : pattern.slice(0, wild)
  return head.startsWith(prefix) || prefix.startsWith(head)
}

const approved = (check: Check, approvals: Ruleset, home: string, exactOnly: boolean): Rule | undefined => {
  const approval = evaluate(check.permission, check.pattern, approvals, { home })
  if (approval.action !== "allow" || isImplicit(approval)) return undefined
  return exactOnly && approval.pattern !== check.pattern ? undefined : approval
}

/**
 * Decides one check: the last matching rule of `ruleset`; a rule's `ask` becomes `allow` when a remembered
 * approval matches (approvals never override `deny`).
 *
 * Fail-closed contract for what cannot be known statically:
 * - an unknown check (`unparsable`) is allowed only by a rule whose pattern is that exact line (naming its
 *   permission, when a rule of it denies something) or, when no rule of its permission denies anything and none
 *   asks for a specific pattern, by the `*` rule; never by a prefix rule.
 *   When some rule of its permission denies, it is an ask with `requiresPerson` (an exact remembered approval,
 *   given by a person, still allows it);
 * - a command with a run-time tail (`prefix`) that a deny rule could match once completed is an ask with
 *   `requiresPerson`; one that an ask rule could match is an ask.
 *
 * A `personOnly` check is decided without the allow rules that may not approve it (see `mayApprovePersonOnly`:
 * wildcard permissions, built-in defaults); deny and ask rules of every kind still count. What is left to ask is
 * an ask with `requiresPerson`; a remembered approval (given by a person) still allows it.
 */
export const verdictOf = (check: Check, ruleset: Ruleset, approvals: Ruleset, home: string): Verdict => {
  if (check.writeRoute) return writeRouteVerdict(check, ruleset, approvals, home)
  // `/bin/rm *` meets `rm -rf x` as `rm *` does: commands are checked with their program's basename.
  const rules = check.permission === "bash" ? withProgramBasenames(ruleset) : ruleset
  const verdict = check.personOnly
    ? personOnlyVerdict(check, rules, approvals, home)
    : decideCheck(check, rules, approvals, home)
  return verdict.by === "rule" ? { ...verdict, rule: writtenRule(ruleset, verdict.rule) } : verdict
}

const personOnlyVerdict = (check: Check, ruleset: Ruleset, approvals: Ruleset, home: string): Verdict => {
  const explicit = ruleset.filter((rule) => rule.action !== "allow" || mayApprovePersonOnly(rule, check.permission))
  const verdict = decideCheck(check, explicit, approvals, home)
  return verdict.action === "ask" ? { ...verdict, requiresPerson: true } : verdict
}

/** What a bash write is allowed by when the edit rules do not deny it: they bind this route only where they deny. */
export const WRITE_ROUTE_RULE: Rule = {
  permission: "edit",
  pattern: "*",
  action: "allow",
  source: "bash writes are decided by the bash rules; edit rules bind them only where they deny"
}

/**
 * Decides a bash write as an `edit` check (the agent's `edit` rules bind every write route): a known path the edit
 * rules deny is denied; any other known path is left to the bash rules (allowed here). A target that cannot be known
 * statically is an ask only a person may approve unless the edit rules allow every path (an exact remembered approval
 * still allows it).
 */
const writeRouteVerdict = (check: Check, ruleset: Ruleset, approvals: Ruleset, home: string): Verdict => {
  if (check.unparsable === undefined) {
    const rule = evaluate("edit", check.pattern, ruleset, { home })
    if (rule.action === "deny") return { check, action: "deny", rule, by: "rule" }
    return { check, action: "allow", rule: rule.action === "allow" ? rule : WRITE_ROUTE_RULE, by: "rule" }
  }
  const relevant = ruleset.filter((rule) => rule.scoped !== true && wildcardMatch(rule.permission, "edit"))
  // The edit rules allow every path when the last catch-all allows and nothing after it (or narrowing) asks or denies.
  const catchAll = relevant.findLastIndex((rule) => rule.pattern === "*" && rule.narrows !== true)
  const binding =
    relevant.findLast((rule) => rule.narrows === true && rule.action !== "allow") ??
    relevant.slice(Math.max(catchAll, 0)).findLast((rule) => rule.narrows !== true && rule.action !== "allow") ??
    (catchAll < 0 ? implicitAsk("edit") : undefined)
  if (binding === undefined) return { check, action: "allow", rule: relevant[catchAll] ?? WRITE_ROUTE_RULE, by: "rule" }
  const approval = approved(check, approvals, home, true)
  if (approval) return { check, action: "allow", rule: approval, by: "approval" }
  return { check, action: "ask", rule: binding, by: "rule", requiresPerson: true }
}

const decideCheck = (check: Check, ruleset: Ruleset, approvals: Ruleset, home: string): Verdict => {
  const rule = evaluate(check.permission, check.pattern, ruleset, { home })
  // A scoped rule (a plugin's default for its own patterns) never stands for what an unknown command might run.
  const relevant = ruleset.filter(
    (candidate) => candidate.scoped !== true && wildcardMatch(candidate.permission, check.permission)
  )
  const ask = (decider: Rule, requiresPerson: boolean): Verdict => {
    const approval = approved(check, approvals, home, requiresPerson || check.unparsable !== undefined)
    if (approval) return { check, action: "allow", rule: approval, by: "approval" }
    return { check, action: "ask", rule: decider, by: "rule", ...(requiresPerson ? { requiresPerson } : {}) }
  }
  if (rule.action === "deny") return { check, action: "deny", rule, by: "rule" }
  if (check.unparsable !== undefined) {
    const deny = relevant.findLast((candidate) => candidate.action === "deny")
    // Under a deny rule only a rule naming this very permission may allow the exact line (a person wrote it).
    const exact = rule.action === "allow" && rule.pattern === check.pattern
    if (exact && (!deny || mayApprovePersonOnly(rule, check.permission)))
      return { check, action: "allow", rule, by: "rule" }
    if (deny) return ask(deny, true)
    const narrow = relevant.findLast((candidate) => candidate.action === "ask" && candidate.pattern !== "*")
    if (narrow) return ask(narrow, false)
    const star = evaluate(
      check.permission,
      check.pattern,
      relevant.filter((candidate) => candidate.pattern === "*"),
      { home }
    )
    return star.action === "allow" ? { check, action: "allow", rule: star, by: "rule" } : ask(star, false)
  }
  if (check.prefix !== undefined) {
    const prefix = check.prefix
    const open = relevant.filter(
      (candidate) =>
        candidate.action !== "allow" &&
        candidate.pattern !== "*" &&
        couldMatch(expandHome(candidate.pattern, home), prefix)
    )
    const deny = open.findLast((candidate) => candidate.action === "deny")
    if (deny) return ask(deny, true)
    const narrow = open.findLast((candidate) => candidate.action === "ask")
    if (narrow && rule.action === "allow") return ask(narrow, false)
  }
  return rule.action === "ask" ? ask(rule, false) : { check, action: rule.action, rule, by: "rule" }
}
