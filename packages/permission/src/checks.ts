import { dirname, resolve } from "node:path"
import type { PermissionAction, PermissionAsk, Rule, Ruleset } from "@lathe/core"
import type { Parser } from "web-tree-sitter"
import { analyzeWith } from "./bash.js"
import { evaluate } from "./ruleset.js"
import { expandHome } from "./wildcard.js"

/**
 * One thing an ask is decided on: a pattern of a permission. An ask becomes several checks: one per pattern,
 * and for `bash` one per simple command plus an `external_directory` check per write outside the project.
 */
export interface Check {
  readonly permission: string
  readonly pattern: string
  /** What an "always" reply remembers for this check. */
  readonly always: ReadonlyArray<string>
  /** Why the check is an unparsable whole line: only `*` or this exact line may allow it. */
  readonly unparsable?: string
}

/** A check's verdict: the action, the rule that decided, and whether a remembered approval upgraded it. */
export interface Verdict {
  readonly check: Check
  readonly action: PermissionAction
  readonly rule: Rule
  readonly by: "rule" | "approval"
}

/** Where the project is, for external-directory checks. */
export interface CheckContext {
  readonly root: string
  readonly directory: string
  readonly home: string
}

const inside = (root: string, path: string): boolean =>
  path === root || path.startsWith(root.endsWith("/") ? root : `${root}/`)

const bashChecks = (parser: Parser, line: string, cwd: string, context: CheckContext): Array<Check> => {
  const analysis = analyzeWith(parser, line)
  const checks: Array<Check> = analysis.commands.map((command) => ({
    permission: "bash",
    pattern: command.text,
    always: [command.always]
  }))
  if (analysis.unparsable !== undefined) {
    checks.push({ permission: "bash", pattern: line, always: [line], unparsable: analysis.unparsable })
  } else if (checks.length === 0) {
    checks.push({ permission: "bash", pattern: line, always: [line] })
  }
  for (const write of analysis.writes) {
    const path = resolve(cwd, expandHome(write, context.home))
    if (!inside(context.root, path)) {
      checks.push({ permission: "external_directory", pattern: path, always: [`${dirname(path)}/*`] })
    }
  }
  return checks
}

/**
 * The checks of an ask. `bash` patterns are command lines, analysed with `parser` (the bash tool passes the raw
 * line; `metadata.workdir` or `metadata.cwd`, when a string, is where it runs, else the project directory); other permissions check
 * each pattern as given, with the request's `always` (default: the pattern).
 */
export const checksOf = (request: PermissionAsk, context: CheckContext, parser: Parser | undefined): Array<Check> => {
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

/**
 * Decides one check: the last matching rule of `ruleset`; a rule's `ask` becomes `allow` when a remembered
 * approval matches (approvals never override `deny`). An unparsable line is allowed only by a rule whose pattern
 * is `*` or the exact line, never by a prefix rule.
 */
export const verdictOf = (check: Check, ruleset: Ruleset, approvals: Ruleset, home: string): Verdict => {
  const rule = evaluate(check.permission, check.pattern, ruleset, { home })
  const exact = (candidate: Rule) => candidate.pattern === "*" || candidate.pattern === check.pattern
  let action = rule.action
  if (action === "allow" && check.unparsable !== undefined && !exact(rule)) action = "ask"
  if (action === "ask") {
    const approval = evaluate(check.permission, check.pattern, approvals, { home })
    if (approval.action === "allow" && (check.unparsable === undefined || approval.pattern === check.pattern)) {
      return { check, action: "allow", rule: approval, by: "approval" }
    }
  }
  return { check, action, rule, by: "rule" }
}
