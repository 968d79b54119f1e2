import { z } from "zod"
import type { ProviderDescriptor, ReasoningTarget } from "./descriptor.js"
import { BUDGETS, budgetOf, reasoningLevelOf } from "./families.js"
import { descriptorOf } from "./registry.js"

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
export const REASONING_BUDGETS: Readonly<Record<ReasoningLevel, number>> = BUDGETS

/** The level a budget stands for, on providers that take a level (OpenAI's reasoning effort). */
export const reasoningLevel = (reasoning: Reasoning): ReasoningLevel => reasoningLevelOf(reasoning)

/**
 * The thinking budget for `reasoning` on `model`: the level's budget (or the one given), kept below the model's output
 * limit with room for the answer (Anthropic counts thinking in `max_tokens`), and never under 1,024 tokens.
 */
export const reasoningBudget = (reasoning: Reasoning, model: ReasoningTarget): number => budgetOf(model, reasoning)

/**
 * The SDK family a request goes through, as far as reasoning and caching options went before providers became
 * descriptors. Kept for code that imports it; `reasoningOptions` takes one (or any provider type) still.
 * @deprecated Use the provider's `ProviderDescriptor` (`descriptorOf(type)`).
 */
export type ProviderFamily = "anthropic" | "openai" | "openai-compatible"

/**
 * Provider options (keyed by the ai SDK provider's options name) that ask `model` to reason as `reasoning` says, as
 * the provider's descriptor maps them (Anthropic `thinking` with a budget, OpenAI `reasoningEffort`,
 * OpenAI-compatible `reasoningEffort` sent as `reasoning_effort`, …). `provider` is a descriptor or a provider type.
 * Empty when nothing is asked, the model does not reason (its catalogue entry says so) or the provider has no mapping.
 */
export const reasoningOptions = (
  provider: Pick<ProviderDescriptor, "reasoning"> | string,
  model: ReasoningTarget,
  reasoning: Reasoning | undefined
): Record<string, Record<string, unknown>> => {
  if (reasoning === undefined || !model.capabilities.reasoning) return {}
  const descriptor = typeof provider === "string" ? descriptorOf(provider) : provider
  const mapped = descriptor?.reasoning?.(model, reasoning) ?? {}
  return Object.fromEntries(Object.entries(mapped).map(([name, options]) => [name, { ...options }]))
}
