import { emptyTokens, type Tokens } from "@lathe/plugin/schema"
import type { LanguageModelUsage } from "ai"
import type { ModelInfo } from "../catalog/model-info.js"

const count = (value: number | undefined): number => (value !== undefined && Number.isFinite(value) ? value : 0)

/**
 * A step's tokens from ai 7's nested usage. `input` excludes cache reads and writes (when the provider reports only
 * a total, the cached parts are subtracted from it); `output` excludes reasoning (likewise).
 */
export const tokensFromUsage = (usage: LanguageModelUsage | undefined): Tokens => {
  if (!usage) return emptyTokens()
  const cacheRead = count(usage.inputTokenDetails?.cacheReadTokens)
  const cacheWrite = count(usage.inputTokenDetails?.cacheWriteTokens)
  const reasoning = count(usage.outputTokenDetails?.reasoningTokens)
  const noCache = usage.inputTokenDetails?.noCacheTokens
  const text = usage.outputTokenDetails?.textTokens
  return {
    input: noCache !== undefined ? count(noCache) : Math.max(0, count(usage.inputTokens) - cacheRead - cacheWrite),
    output: text !== undefined ? count(text) : Math.max(0, count(usage.outputTokens) - reasoning),
    reasoning,
    cache: { read: cacheRead, write: cacheWrite }
  }
}

/** The sum of two token counts. */
export const addTokens = (a: Tokens, b: Tokens): Tokens => ({
  input: a.input + b.input,
  output: a.output + b.output,
  reasoning: a.reasoning + b.reasoning,
  cache: { read: a.cache.read + b.cache.read, write: a.cache.write + b.cache.write }
})

/** What a step cost in USD at the model's prices (per million tokens); reasoning is billed as output. */
export const stepCost = (tokens: Tokens, model: ModelInfo): number =>
  (tokens.input * model.cost.input +
    (tokens.output + tokens.reasoning) * model.cost.output +
    tokens.cache.read * model.cost.cacheRead +
    tokens.cache.write * model.cost.cacheWrite) /
  1_000_000

/** How much of the context window a step filled: everything sent plus everything produced. */
export const contextUsed = (tokens: Tokens): number =>
  tokens.input + tokens.cache.read + tokens.cache.write + tokens.output + tokens.reasoning

/**
 * Whether the next step would no longer fit: the context used exceeds the window minus room for one more answer
 * (the model's output limit, at most 32,000 tokens).
 */
export const isOverflow = (tokens: Tokens, model: ModelInfo): boolean => {
  if (model.limit.context <= 0) return false
  const reserve = Math.min(model.limit.output, 32_000)
  return contextUsed(tokens) > Math.max(0, model.limit.context - reserve)
}
