import { z } from "zod"
import type { ModelInfo } from "./llm.js"

/** A named reasoning level: how hard a reasoning model thinks before it answers. */
export const ReasoningLevel = z.enum(["low", "medium", "high"], { error: '"low", "medium" or "high"' })
/** A named reasoning level. */
export type ReasoningLevel = z.infer<typeof ReasoningLevel>

/**
 * How much a reasoning model thinks: a level, or a token budget (Anthropic's thinking budget; for providers that
 * take a level, the nearest level).
 */
export const Reasoning = z.union(
  [
    ReasoningLevel,
    z.strictObject({
      budget: z.number({ error: "a positive integer" }).int({ error: "a positive integer" }).min(1024, {
        error: "an integer >= 1024 (the smallest thinking budget Anthropic takes)"
      })
    })
  ],
  { error: '"low", "medium", "high", or { "budget": tokens }' }
)
/** How much a reasoning model thinks: a level, or a token budget. */
export type Reasoning = z.infer<typeof Reasoning>

/** The thinking budget, in tokens, a level stands for on providers that take a budget (Anthropic). */
export const REASONING_BUDGETS: Readonly<Record<ReasoningLevel, number>> = { low: 4_000, medium: 16_000, high: 32_000 }

/** The smallest thinking budget Anthropic accepts. */
const MIN_BUDGET = 1_024
/** Tokens kept for the answer itself when a budget is clamped to the model's output limit. */
const ANSWER_ROOM = 4_096

/** The level a budget stands for, on providers that take a level (OpenAI's reasoning effort). */
export const reasoningLevel = (reasoning: Reasoning): ReasoningLevel => {
  if (typeof reasoning === "string") return reasoning
  if (reasoning.budget <= REASONING_BUDGETS.low) return "low"
  return reasoning.budget <= REASONING_BUDGETS.medium ? "medium" : "high"
}

/**
 * The thinking budget for `reasoning` on `model`: the level's budget (or the one given), kept below the model's output
 * limit with room for the answer (Anthropic counts thinking in `max_tokens`), and never under 1,024 tokens.
 */
export const reasoningBudget = (reasoning: Reasoning, model: ModelInfo): number => {
  const wanted = typeof reasoning === "string" ? REASONING_BUDGETS[reasoning] : reasoning.budget
  const ceiling = Math.max(MIN_BUDGET, model.limit.output - ANSWER_ROOM)
  return Math.max(MIN_BUDGET, Math.min(wanted, ceiling))
}

/** The SDK family a request goes through, as far as reasoning and caching options go. */
export type ProviderFamily = "anthropic" | "openai" | "openai-compatible"

/**
 * Provider options (keyed by the ai SDK provider's options name) that ask `model` to reason as `reasoning` says:
 * Anthropic `thinking` with a budget, OpenAI `reasoningEffort`, OpenAI-compatible `reasoningEffort` (sent as
 * `reasoning_effort`). Empty when nothing is asked or the model does not reason (its catalogue entry says so).
 */
export const reasoningOptions = (
  family: ProviderFamily,
  model: ModelInfo,
  reasoning: Reasoning | undefined
): Record<string, Record<string, unknown>> => {
  if (reasoning === undefined || !model.capabilities.reasoning) return {}
  switch (family) {
    case "anthropic":
      return { anthropic: { thinking: { type: "enabled", budgetTokens: reasoningBudget(reasoning, model) } } }
    case "openai":
      return { openai: { reasoningEffort: reasoningLevel(reasoning) } }
    case "openai-compatible":
      return { openaiCompatible: { reasoningEffort: reasoningLevel(reasoning) } }
  }
}
