import type { ModelConfig } from "./config-schema.js"
import type { ModelInfo } from "./llm.js"

/** A catalogue entry: a model's limits, USD prices per million tokens and capabilities. */
export type CatalogEntry = Omit<ModelInfo, "providerID" | "modelID">

type Row = readonly [
  name: string,
  context: number,
  output: number,
  input: number,
  outputPrice: number,
  cacheRead: number,
  cacheWrite: number,
  reasoning: boolean,
  temperature: boolean
]

// Published list prices (USD per million tokens) and limits, by model id without its date suffix.
// Anthropic cache writes are the 5-minute rate; OpenAI charges nothing extra to write its cache.
const ROWS: Readonly<Record<string, Row>> = {
  "claude-opus-4-5": ["Claude Opus 4.5", 200_000, 64_000, 5, 25, 0.5, 6.25, true, true],
  "claude-opus-4-1": ["Claude Opus 4.1", 200_000, 32_000, 15, 75, 1.5, 18.75, true, true],
  "claude-opus-4": ["Claude Opus 4", 200_000, 32_000, 15, 75, 1.5, 18.75, true, true],
  "claude-sonnet-4-5": ["Claude Sonnet 4.5", 200_000, 64_000, 3, 15, 0.3, 3.75, true, true],
  "claude-sonnet-4": ["Claude Sonnet 4", 200_000, 64_000, 3, 15, 0.3, 3.75, true, true],
  "claude-haiku-4-5": ["Claude Haiku 4.5", 200_000, 64_000, 1, 5, 0.1, 1.25, true, true],
  "claude-3-7-sonnet": ["Claude Sonnet 3.7", 200_000, 64_000, 3, 15, 0.3, 3.75, true, true],
  "claude-3-5-haiku": ["Claude Haiku 3.5", 200_000, 8_192, 0.8, 4, 0.08, 1, false, true],
  "gpt-5.1": ["GPT-5.1", 400_000, 128_000, 1.25, 10, 0.125, 0, true, false],
  "gpt-5": ["GPT-5", 400_000, 128_000, 1.25, 10, 0.125, 0, true, false],
  "gpt-5-codex": ["GPT-5 Codex", 400_000, 128_000, 1.25, 10, 0.125, 0, true, false],
  "gpt-5-mini": ["GPT-5 mini", 400_000, 128_000, 0.25, 2, 0.025, 0, true, false],
  "gpt-5-nano": ["GPT-5 nano", 400_000, 128_000, 0.05, 0.4, 0.005, 0, true, false],
  "gpt-4.1": ["GPT-4.1", 1_047_576, 32_768, 2, 8, 0.5, 0, false, true],
  "gpt-4.1-mini": ["GPT-4.1 mini", 1_047_576, 32_768, 0.4, 1.6, 0.1, 0, false, true],
  "gpt-4.1-nano": ["GPT-4.1 nano", 1_047_576, 32_768, 0.1, 0.4, 0.025, 0, false, true],
  "gpt-4o": ["GPT-4o", 128_000, 16_384, 2.5, 10, 1.25, 0, false, true],
  "gpt-4o-mini": ["GPT-4o mini", 128_000, 16_384, 0.15, 0.6, 0.075, 0, false, true],
  o3: ["o3", 200_000, 100_000, 2, 8, 0.5, 0, true, false],
  "o3-mini": ["o3-mini", 200_000, 100_000, 1.1, 4.4, 0.55, 0, true, false],
  "o4-mini": ["o4-mini", 200_000, 100_000, 1.1, 4.4, 0.275, 0, true, false],
  o1: ["o1", 200_000, 100_000, 15, 60, 7.5, 0, true, false]
}

/** Catalogue models that take no image input. */
const TEXT_ONLY: ReadonlySet<string> = new Set(["claude-3-5-haiku", "o3-mini"])

/** The model Lathe picks when only `ANTHROPIC_API_KEY` is set and no model is configured. */
export const DEFAULT_ANTHROPIC_MODEL = "claude-sonnet-4-5"
/** The model Lathe picks when only `OPENAI_API_KEY` is set and no model is configured. */
export const DEFAULT_OPENAI_MODEL = "gpt-5"

/** Limits for a model the catalogue does not know: small enough to be safe anywhere, free, tools on. */
export const UNKNOWN_MODEL: CatalogEntry = {
  name: "unknown model",
  limit: { context: 32_768, output: 4_096 },
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  capabilities: { reasoning: false, toolCall: true, temperature: true, image: false }
}

const entry = (
  id: string,
  [name, context, output, input, outputPrice, cacheRead, cacheWrite, reasoning, temperature]: Row
) => ({
  name,
  limit: { context, output },
  cost: { input, output: outputPrice, cacheRead, cacheWrite },
  capabilities: { reasoning, toolCall: true, temperature, image: !TEXT_ONLY.has(id) }
})

/**
 * The catalogue entry for a model id, whatever the provider (a proxy serving `gpt-4.1` has GPT-4.1's limits).
 * Matches the id as is, then without a date or `-latest` suffix (`claude-sonnet-4-5-20250929`,
 * `gpt-4.1-2025-04-14`), with `.` and `-` treated alike for Claude ids (`claude-sonnet-4.5`).
 */
export const lookupModel = (modelID: string): CatalogEntry | undefined => {
  const id = modelID.toLowerCase()
  const bare = id.replace(/-(\d{8}|\d{4}-\d{2}-\d{2}|latest)$/, "")
  for (const candidate of [id, bare, bare.startsWith("claude") ? bare.replaceAll(".", "-") : bare]) {
    const row = ROWS[candidate]
    if (row !== undefined) return entry(candidate, row)
  }
  return undefined
}

/** Every model id in the built-in catalogue. */
export const catalogModels = (): ReadonlyArray<string> => Object.keys(ROWS)

/**
 * A model's info: the catalogue entry (or `UNKNOWN_MODEL`), then the config override
 * `provider.<id>.models.<model>` field by field on top.
 */
export const modelInfo = (providerID: string, modelID: string, override?: ModelConfig): ModelInfo => {
  const base = lookupModel(modelID) ?? { ...UNKNOWN_MODEL, name: modelID }
  const cost = override?.cost
  return {
    providerID,
    modelID,
    name: override?.name ?? base.name,
    limit: { context: override?.context ?? base.limit.context, output: override?.output ?? base.limit.output },
    cost: cost
      ? {
          input: cost.input,
          output: cost.output,
          cacheRead: cost.cache_read ?? base.cost.cacheRead,
          cacheWrite: cost.cache_write ?? base.cost.cacheWrite
        }
      : base.cost,
    capabilities: {
      reasoning: override?.reasoning ?? base.capabilities.reasoning,
      toolCall: override?.tool_call ?? base.capabilities.toolCall,
      temperature: override?.temperature ?? base.capabilities.temperature,
      image: override?.image ?? base.capabilities.image
    }
  }
}
