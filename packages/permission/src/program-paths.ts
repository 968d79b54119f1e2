/**
 * Bash rules that name a program by its path. Commands are checked with their program reduced to its basename
 * (`/usr/bin/rm -rf x` is checked as `rm -rf x`), so a rule written `/bin/rm *` must meet them the same way: each
 * such rule is followed by its basename form, with the same action, and both match.
 */
import type { Rule, Ruleset } from "@lathe/plugin"

const variants = new WeakMap<Ruleset, { readonly ruleset: Ruleset; readonly origin: Map<Rule, Rule> }>()

/** The basename form of a bash rule pattern whose first word is a program path, or undefined. */
export const basenamePattern = (pattern: string): string | undefined => {
  const space = pattern.indexOf(" ")
  const program = space < 0 ? pattern : pattern.slice(0, space)
  const slash = program.lastIndexOf("/")
  if (slash < 0) return undefined
  const name = program.slice(slash + 1)
  // `/tmp/*` names no program: its basename would be `*`, which matches every command.
  if (name === "" || /[*?]/.test(name)) return undefined
  return name + (space < 0 ? "" : pattern.slice(space))
}

/**
 * `ruleset` with every rule of the `bash` permission (named exactly) whose pattern names a program by path
 * followed by its basename form (`/bin/rm *` then `rm *`). Two adjacent rules with one action decide as one rule
 * matching either, so last-match-wins is unchanged. Cached per ruleset (rulesets are immutable values).
 */
export const withProgramBasenames = (ruleset: Ruleset): Ruleset => {
  let entry = variants.get(ruleset)
  if (!entry) {
    const origin = new Map<Rule, Rule>()
    const rules: Array<Rule> = []
    for (const rule of ruleset) {
      rules.push(rule)
      const pattern = rule.permission === "bash" ? basenamePattern(rule.pattern) : undefined
      if (pattern === undefined || pattern === rule.pattern) continue
      const variant: Rule = { ...rule, pattern }
      origin.set(variant, rule)
      rules.push(variant)
    }
    entry = { ruleset: origin.size === 0 ? ruleset : rules, origin }
    variants.set(ruleset, entry)
  }
  return entry.ruleset
}

/** The rule as the person wrote it, for a rule `withProgramBasenames` derived (`rm *` from `/bin/rm *`). */
export const writtenRule = (ruleset: Ruleset, rule: Rule): Rule => variants.get(ruleset)?.origin.get(rule) ?? rule
