import type { PromptFamily, ProviderOptions, ReasoningSetting, ReasoningTarget } from "./descriptor.js"

/**
 * What several providers share because they serve the same model families: Anthropic's thinking budget and cache
 * mark (direct, Bedrock, Vertex), OpenAI's reasoning effort and session cache key, the prompt family of a model id.
 */

/** The thinking budget, in tokens, a level stands for on providers that take a budget. */
export const BUDGETS = { low: 4_000, medium: 16_000, high: 32_000 } as const
/** The smallest thinking budget Anthropic accepts. */
const MIN_BUDGET = 1_024
/** Tokens kept for the answer itself when a budget is clamped to the model's output limit. */
const ANSWER_ROOM = 4_096

/** A budget for `reasoning`, below the model's output limit with room for the answer, never under 1,024. */
export const budgetOf = (model: ReasoningTarget, reasoning: ReasoningSetting): number => {
  const wanted = typeof reasoning === "string" ? BUDGETS[reasoning] : reasoning.budget
  const ceiling = Math.max(MIN_BUDGET, model.limit.output - ANSWER_ROOM)
  return Math.max(MIN_BUDGET, Math.min(wanted, ceiling))
}

/** The level a setting stands for, on providers that take a level. */
export const reasoningLevelOf = (reasoning: ReasoningSetting): "low" | "medium" | "high" => {
  if (typeof reasoning === "string") return reasoning
  if (reasoning.budget <= BUDGETS.low) return "low"
  return reasoning.budget <= BUDGETS.medium ? "medium" : "high"
}

/** Anthropic's `thinking` option for `reasoning`. */
export const anthropicThinking = (model: ReasoningTarget, reasoning: ReasoningSetting) => ({
  thinking: { type: "enabled", budgetTokens: budgetOf(model, reasoning) }
})

/** The cache breakpoint mark of Anthropic's SDK (and Vertex's Anthropic models, which use the same SDK options). */
export const ANTHROPIC_CACHE_MARK: ProviderOptions = { anthropic: { cacheControl: { type: "ephemeral" } } }

/** OpenAI's prompt cache keyed to one session, so its steps land on the same cache. */
export const openAISessionKey = (sessionID: string): ProviderOptions => ({ openai: { promptCacheKey: sessionID } })

/** The prompt family of a model id served by a provider whose own family is `fallback`. */
export const promptFamilyOf = (modelID: string, fallback: PromptFamily): PromptFamily => {
  const id = modelID.toLowerCase()
  if (id.includes("claude")) return "anthropic"
  if (id.includes("gemini")) return "gemini"
  if (/(^|\/)(gpt-|o\d)/.test(id)) return "openai"
  return fallback
}
