/**
 * What the hooks of one event decided, read with Claude Code's contract: exit 2 blocks (stderr is the reason), exit 0
 * with JSON decides through `decision` / `hookSpecificOutput`, plain stdout is context where the event takes it.
 * Several hooks ran in parallel: any block wins over approval, and reasons and context are joined in order.
 */
import type { HookJson, HookResult } from "./run-command.js"

/** A hook's JSON answer, when it gave one. */
const answers = (results: ReadonlyArray<HookResult>): Array<HookJson> =>
  results.flatMap((result) => (result.kind === "ok" && result.json ? [result.json] : []))

/** The stderr of each hook that exited 2 (or `fallback` when it said nothing). */
const blocked = (results: ReadonlyArray<HookResult>, fallback: string): Array<string> =>
  results.flatMap((result) => (result.kind === "block" ? [result.stderr || fallback] : []))

const contextOf = (json: HookJson): Array<string> => {
  const text = json.hookSpecificOutput?.additionalContext
  return text?.trim() ? [text] : []
}

/** PreToolUse: refuse the call (the reason goes to the model), approve it without an ask, and/or change its input. */
export interface PreToolUseDecision {
  readonly deny?: string
  readonly allow: boolean
  /** `updatedInput` objects, in hook order (Claude's keys). */
  readonly updates: ReadonlyArray<Readonly<Record<string, unknown>>>
}

export const preToolUse = (results: ReadonlyArray<HookResult>): PreToolUseDecision => {
  const denied = blocked(results, "A PreToolUse hook blocked this call (exit code 2).")
  let allow = false
  const updates: Array<Readonly<Record<string, unknown>>> = []
  for (const json of answers(results)) {
    const specific = json.hookSpecificOutput
    const legacy = json.decision === "block" ? "deny" : json.decision === "approve" ? "allow" : undefined
    const decision = specific?.permissionDecision ?? legacy
    const reason = specific?.permissionDecisionReason ?? json.reason
    if (json.continue === false) denied.push(json.stopReason ?? reason ?? "A PreToolUse hook stopped this call.")
    else if (decision === "deny") denied.push(reason ?? "A PreToolUse hook denied this call.")
    else if (decision === "allow") allow = true
    if (specific?.updatedInput) updates.push(specific.updatedInput)
  }
  return denied.length > 0 ? { deny: denied.join("\n"), allow: false, updates } : { allow, updates }
}

/** PostToolUse: text for the model, after the tool's output (exit 2's stderr, a block's reason, added context). */
export const postToolUse = (results: ReadonlyArray<HookResult>): Array<string> =>
  [
    ...blocked(results, ""),
    ...answers(results).flatMap((json) => [
      ...(json.decision === "block" && json.reason?.trim() ? [json.reason] : []),
      ...contextOf(json)
    ])
  ].filter((text) => text.trim() !== "")

/** UserPromptSubmit: withdraw the prompt (the reason goes to the person), or context for the model. */
export interface PromptDecision {
  readonly block?: string
  readonly context: ReadonlyArray<string>
}

export const promptSubmit = (results: ReadonlyArray<HookResult>): PromptDecision => {
  const reasons = blocked(results, "A UserPromptSubmit hook blocked the prompt (exit code 2).")
  const context: Array<string> = []
  for (const result of results) {
    if (result.kind !== "ok") continue
    const json = result.json
    if (json === undefined) {
      if (result.stdout.trim()) context.push(result.stdout.trim())
      continue
    }
    if (json.continue === false) reasons.push(json.stopReason ?? json.reason ?? "A UserPromptSubmit hook stopped it.")
    else if (json.decision === "block") reasons.push(json.reason ?? "A UserPromptSubmit hook blocked the prompt.")
    context.push(...contextOf(json))
  }
  return reasons.length > 0 ? { block: reasons.join("\n"), context: [] } : { context }
}

/** SessionStart: context for the model (plain stdout or `additionalContext`); exit 2's stderr is for the person. */
export const sessionStart = (
  results: ReadonlyArray<HookResult>
): { readonly context: ReadonlyArray<string>; readonly notices: ReadonlyArray<string> } => ({
  context: results.flatMap((result) =>
    result.kind !== "ok"
      ? []
      : result.json
        ? contextOf(result.json)
        : result.stdout.trim()
          ? [result.stdout.trim()]
          : []
  ),
  notices: blocked(results, "")
})

/** Stop / SubagentStop: an instruction to go on with (exit 2's stderr, or `decision: "block"` with its reason). */
export const stop = (results: ReadonlyArray<HookResult>): string | undefined => {
  const json = answers(results)
  // `continue: false` means stop for good, whatever another hook asked.
  if (json.some((answer) => answer.continue === false)) return undefined
  const reasons = [
    ...blocked(results, "A Stop hook asks you to keep working."),
    ...json.flatMap((answer) =>
      answer.decision === "block" ? [answer.reason?.trim() || "A Stop hook asks you to keep working."] : []
    )
  ]
  return reasons.length > 0 ? reasons.join("\n") : undefined
}
