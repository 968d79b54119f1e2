import type { ProviderDescriptor, ProviderOptions } from "./descriptor.js"
import { budgetOf, promptFamilyOf, reasoningLevelOf } from "./families.js"

/** OpenRouter's cache breakpoint: its SDK turns it into `cache_control` on the marked message, part or tool. */
const OPENROUTER_CACHE_MARK: ProviderOptions = { openrouter: { cacheControl: { type: "ephemeral" } } }

/**
 * OpenRouter, one key for many vendors' models (`anthropic/claude-sonnet-4.6`, `openai/gpt-5`, …), through its own
 * SDK over Chat Completions. The prompt and caching follow the routed model: Claude models take `cache_control`
 * breakpoints (OpenRouter passes them to Anthropic), the others cache on their own. Usage comes back with the cost
 * OpenRouter charged and the cached tokens; `compatibility: "strict"` asks for it on every stream.
 */
export const openrouter: ProviderDescriptor = {
  type: "openrouter",
  name: "OpenRouter",
  catalogID: "openrouter",
  auth: "key",
  keyEnv: ["OPENROUTER_API_KEY"],
  defaultModel: "anthropic/claude-sonnet-4.6",
  defaultFamily: /^anthropic\/claude-sonnet-/,
  imagesInToolResults: true,
  prompt: (modelID) => promptFamilyOf(modelID, "generic"),
  cache: (modelID) =>
    modelID.toLowerCase().includes("claude") ? { kind: "breakpoints", mark: OPENROUTER_CACHE_MARK } : undefined,
  reasoning: (model, reasoning) => ({
    openrouter: {
      reasoning:
        typeof reasoning === "string"
          ? { effort: reasoningLevelOf(reasoning) }
          : { max_tokens: budgetOf(model, reasoning) }
    }
  }),
  load: async (settings, modelID) => (await import("./openrouter-model.js")).openrouterModel(settings, modelID),
  hints: { key: "create a key at https://openrouter.ai/settings/keys" }
}
