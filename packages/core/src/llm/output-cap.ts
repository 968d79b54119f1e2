import type { SharedV4ProviderOptions } from "@ai-sdk/provider"

/** Tokens kept for the answer when a thinking budget is fitted inside an output cap. */
const ANSWER_ROOM = 1_024
/** The smallest thinking budget Anthropic takes. */
const MIN_THINKING = 1_024

type Options = Record<string, Record<string, unknown>>

/** A thinking budget fitted inside `cap`: its tokens (0: no room for thinking at all) and the answer's limit. */
const fit = (cap: number, budget: number): { readonly thinking: number; readonly answer: number } => {
  const thinking = Math.min(budget, cap - ANSWER_ROOM)
  return thinking >= MIN_THINKING ? { thinking, answer: cap - thinking } : { thinking: 0, answer: cap }
}

/** Options `key` → `field` (an object with `type: "enabled"` and a numeric `budgetTokens`), if set. */
const enabledBudget = (options: Options, key: string, field: string): number | undefined => {
  const setting = options[key]?.[field] as { type?: unknown; budgetTokens?: unknown } | undefined
  return setting?.type === "enabled" && typeof setting.budgetTokens === "number" ? setting.budgetTokens : undefined
}

/**
 * The output limit and provider options of a request whose whole output, thinking included, must stay within `cap`
 * tokens (a cost budget's allowance, `LLMRequest.outputCap`). OpenAI's `max_output_tokens`, Chat Completions'
 * `max_tokens` and Gemini's `maxOutputTokens` already count reasoning, so `cap` is sent as it is. Anthropic's SDK
 * (direct, Vertex, Bedrock) sends the output limit plus the thinking budget as `max_tokens`, so the budget is fitted
 * inside the cap: kept while the answer still has {@link ANSWER_ROOM} tokens, else shrunk, else (too small for the
 * smallest budget) thinking is not asked for. Bedrock drops the output limit of a Nova model reasoning at `high`, so
 * that is asked at `medium`.
 */
export const fitOutputCap = (
  cap: number,
  options: SharedV4ProviderOptions | undefined
): { readonly maxOutputTokens: number; readonly providerOptions: SharedV4ProviderOptions | undefined } => {
  if (options === undefined) return { maxOutputTokens: cap, providerOptions: options }
  const next: Options = { ...(options as Options) }
  let maxOutputTokens = cap
  const anthropic = enabledBudget(next, "anthropic", "thinking")
  if (anthropic !== undefined) {
    const { thinking, answer } = fit(cap, anthropic)
    const { thinking: _, ...rest } = next.anthropic ?? {}
    next.anthropic = thinking > 0 ? { ...rest, thinking: { type: "enabled", budgetTokens: thinking } } : rest
    maxOutputTokens = answer
  }
  const bedrock = enabledBudget(next, "bedrock", "reasoningConfig")
  if (bedrock !== undefined) {
    const { thinking, answer } = fit(cap, bedrock)
    const { reasoningConfig: _, ...rest } = next.bedrock ?? {}
    next.bedrock = thinking > 0 ? { ...rest, reasoningConfig: { type: "enabled", budgetTokens: thinking } } : rest
    maxOutputTokens = answer
  }
  const nova = next.bedrock?.reasoningConfig as { maxReasoningEffort?: unknown } | undefined
  if (nova !== undefined && ["high", "xhigh", "max"].includes(String(nova.maxReasoningEffort)))
    next.bedrock = { ...next.bedrock, reasoningConfig: { ...nova, maxReasoningEffort: "medium" } }
  return { maxOutputTokens, providerOptions: next as SharedV4ProviderOptions }
}
