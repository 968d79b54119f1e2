import { configAdvice, type PendingAsk, renderSnippet } from "@lathe/core"
import type { Rule } from "@lathe/plugin"
import { isImplicit } from "@lathe/plugin/host"
import { SESSION_ONLY_PERMISSIONS } from "./approvals.js"

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

/** How many lines of an ask's `metadata.details` `describeAsk` shows. */
const MAX_DETAIL_LINES = 40

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
  // What a tool puts before the person in its own words (the plan `plan_exit` proposes), cut to a screenful.
  const details = typeof ask.metadata?.details === "string" ? ask.metadata.details.trimEnd().split("\n") : []
  for (const line of details.slice(0, MAX_DETAIL_LINES)) lines.push(`  │ ${line}`)
  if (details.length > MAX_DETAIL_LINES) lines.push(`  │ … (${details.length - MAX_DETAIL_LINES} more lines)`)
  for (const check of checksIn(ask)) {
    const label = check.permission === ask.permission ? "" : `${check.permission} `
    lines.push(`  • ${label}${check.pattern}`)
    if (check.unparsable) lines.push(`    why: cannot be known statically (${check.unparsable}); asked as a whole`)
    else if (check.rule) lines.push(`    why: ${describeRule(check.rule)}`)
    if (check.requiresPerson) {
      lines.push(
        check.unparsable
          ? "    a deny rule could apply to what really runs, so only a person may approve this (--yes does not)"
          : "    only a person may approve this: --yes, wildcard rules, built-in defaults and plugins do not"
      )
    }
  }
  const always = ask.always ?? []
  const until = SESSION_ONLY_PERMISSIONS.has(ask.permission) ? "for the rest of this session" : "from now on"
  if (always.length > 0) lines.push(`  always would allow ${until}: ${always.join(", ")}`)
  lines.push("  answer: [o]nce, [a]lways, or [r]eject (optionally with a message for the model)")
  return `${lines.join("\n")}\n`
}

/** Where a person-only ask was refused without a person: a `--yes` reply, or no terminal to ask one. */
export type PersonOnlyRefusal = "yes" | "no-terminal"

/**
 * What the model reads when an ask only a person may approve was refused without one: why only a person may, and
 * what to do instead. An ask whose person-only checks are all commands Lathe cannot know statically says so (and
 * how to make the command knowable); any other says which rules could allow it.
 */
export const personOnlyMessage = (ask: PendingAsk, refusal: PersonOnlyRefusal): string => {
  const checks = checksIn(ask).filter((check) => check.requiresPerson)
  const unknown = checks.length > 0 && checks.every((check) => check.unparsable !== undefined)
  if (unknown) {
    const why = checks[0]?.unparsable
    return (
      `Lathe cannot tell statically what this command does${why ? ` (${why})` : ""}, and the permission rules deny ` +
      `some commands, so only a person may approve it, ${refusal === "yes" ? "not --yes" : "and there is no terminal to ask one"}. ` +
      "Rewrite it with literal command names and paths (no variables, substitutions, eval, sh -c or inline " +
      "interpreter code in their place), or ask the user to run it."
    )
  }
  const pattern = ask.patterns[0] ?? "*"
  const instead =
    ask.permission === "sandbox_escape"
      ? "Change the command so it writes only inside the project and the folders the sandbox leaves writable (and " +
        "needs no network), or tell the user what you need: they can run it themselves, "
      : "Choose another way, or tell the user what you need: they can do it themselves, "
  return (
    `Only a person may approve this ${ask.permission} request, ` +
    `${refusal === "yes" ? "not --yes" : "and there is no terminal to ask one"}; wildcard rules, built-in defaults ` +
    `and plugins cannot approve it either. Do not retry it as it is. ${instead}approve it at a terminal, or allow ` +
    `it with a rule naming this permission in their config, e.g. ` +
    `${renderSnippet(configAdvice.permissionAllow(ask.permission, pattern))}.`
  )
}
