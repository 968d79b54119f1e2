import type { PendingAsk, Rule } from "@lathe/core"
import { isImplicit } from "./ruleset.js"

/** Says which rule decided, and where it came from, in a few words. */
export const describeRule = (rule: Rule): string =>
  isImplicit(rule)
    ? "no rule matched, so Lathe asks"
    : `rule ${rule.permission} "${rule.pattern}": ${rule.action}${rule.source ? ` (from ${rule.source})` : ""}`

interface CheckView {
  readonly permission: string
  readonly pattern: string
  readonly rule?: Rule
  readonly unparsable?: string
  readonly requiresPerson?: boolean
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null

const checksIn = (ask: PendingAsk): Array<CheckView> => {
  const raw = ask.metadata?.checks
  if (!Array.isArray(raw)) return ask.patterns.map((pattern) => ({ permission: ask.permission, pattern }))
  return raw.flatMap((item: unknown) => {
    if (!isRecord(item) || typeof item.permission !== "string" || typeof item.pattern !== "string") return []
    const rule = isRecord(item.rule) ? (item.rule as Rule) : undefined
    return [
      {
        permission: item.permission,
        pattern: item.pattern,
        ...(rule ? { rule } : {}),
        ...(typeof item.unparsable === "string" ? { unparsable: item.unparsable } : {}),
        ...(item.requiresPerson === true ? { requiresPerson: true } : {})
      }
    ]
  })
}

/**
 * Renders a pending ask for a person, as plain text lines: what is asked (tool, permission, patterns), why
 * (the rule that made it an ask, or why a command could not be analysed), what "always" would remember, and
 * the answers. Used by `lathe run`'s prompt; contains no terminal escapes.
 */
export const describeAsk = (ask: PendingAsk): string => {
  const tool = typeof ask.metadata?.tool === "string" ? ask.metadata.tool : undefined
  const command = typeof ask.metadata?.command === "string" ? ask.metadata.command : undefined
  const lines = [`Permission needed: ${ask.permission}${tool && tool !== ask.permission ? ` (tool ${tool})` : ""}`]
  if (command) lines.push(`  command: ${command}`)
  for (const check of checksIn(ask)) {
    const label = check.permission === ask.permission ? "" : `${check.permission} `
    lines.push(`  • ${label}${check.pattern}`)
    if (check.unparsable) lines.push(`    why: cannot be known statically (${check.unparsable}); asked as a whole`)
    else if (check.rule) lines.push(`    why: ${describeRule(check.rule)}`)
    if (check.requiresPerson) {
      lines.push("    a deny rule could apply to what really runs, so only a person may approve this (--yes does not)")
    }
  }
  const always = ask.always ?? []
  if (always.length > 0) lines.push(`  always would allow from now on: ${always.join(", ")}`)
  lines.push("  answer: [o]nce, [a]lways, or [r]eject (optionally with a message for the model)")
  return `${lines.join("\n")}\n`
}
