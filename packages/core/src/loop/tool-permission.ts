import type { ToolPermission } from "@lathe/plugin/schema"

const weight: Record<ToolPermission["by"], number> = { default: 0, rule: 1, hook: 2, flag: 3, person: 4 }

/**
 * Keeps what decided a call's permission asks, for its part: a call may ask several times (a command, then a directory
 * outside the project); the weightiest decision stays (a person over a flag, a hook, a rule, a default; the first of
 * equals), so the page says "you allowed it" rather than "a default allowed the read before".
 */
export const decisionKeeper = () => {
  let kept: ToolPermission | undefined
  return {
    decided: (decision: ToolPermission): void => {
      if (kept === undefined || weight[decision.by] > weight[kept.by]) kept = decision
    },
    /** `{ permission }` to spread into the call's state, or nothing before any ask was decided. */
    field: (): { readonly permission?: ToolPermission } => (kept === undefined ? {} : { permission: kept })
  }
}
