import type { Rule } from "@lathe/plugin"
import type { ToolPermission } from "@lathe/plugin/schema"
import { APPROVAL_SOURCE } from "./approvals.js"
import type { Verdict } from "./checks.js"
import { DEFAULTS_SOURCE, RUN_FLAGS_SOURCE } from "./ruleset.js"

/** A rule as the config writes it, in one line: `bash "git *" allow`. */
export const ruleText = (rule: Rule): string => `${rule.permission} ${JSON.stringify(rule.pattern)} ${rule.action}`

/**
 * What a verdict's rule says about who decided: a built-in default, a `lathe run --allow/--deny` flag, a remembered
 * "always" (the person, earlier), or a rule of a config file or an agent (its `source`).
 */
export const verdictDecision = (verdict: Verdict): ToolPermission => {
  const { rule } = verdict
  const written = { rule: ruleText(rule), ...(rule.source ? { source: rule.source } : {}) }
  if (verdict.by === "approval" || rule.source === APPROVAL_SOURCE) return { by: "person", reply: "always", ...written }
  if (rule.source === DEFAULTS_SOURCE) return { by: "default", ...written }
  if (rule.source === RUN_FLAGS_SOURCE) return { by: "flag", ...written }
  // No rule matched: the implicit ask of the kit, which has no source.
  if (rule.source === undefined) return { by: "default", ...written }
  return { by: "rule", ...written }
}

/** The decision of several verdicts of one ask: the first deny, else the first allow. */
export const verdictsDecision = (verdicts: ReadonlyArray<Verdict>): ToolPermission | undefined => {
  const first = verdicts.find((verdict) => verdict.action === "deny") ?? verdicts[0]
  return first === undefined ? undefined : verdictDecision(first)
}
