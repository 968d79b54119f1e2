import type { ProviderDescriptor, ReasoningSetting } from "./descriptor.js"
import { promptFamilyOf, reasoningLevelOf } from "./families.js"
import { importSDK } from "./sdk-import.js"
import { sdkSettings } from "./sdk-settings.js"

/**
 * The effort Mistral takes for `reasoning` on `modelID`: most reasoning models only switch it on (`high`); Mistral
 * Large 4 takes low, medium and high; the GLM 5 models low, high and max.
 */
const effortOf = (modelID: string, reasoning: ReasoningSetting): string => {
  const level = reasoningLevelOf(reasoning)
  if (modelID.startsWith("mistral-large-4")) return level
  if (/^(zai-)?glm-5/.test(modelID)) return { low: "low", medium: "high", high: "max" }[level]
  return "high"
}

/**
 * Mistral's Chat Completions API (`/v1/chat/completions`, its own SSE shapes: whole tool calls in one chunk, usage on
 * the finishing chunk). A per-session `promptCacheKey` keeps a session's steps on the same cache.
 */
export const mistral: ProviderDescriptor = {
  type: "mistral",
  name: "Mistral",
  catalogID: "mistral",
  auth: "key",
  keyEnv: ["MISTRAL_API_KEY"],
  defaultModel: "devstral-latest",
  defaultFamily: /^devstral-/,
  imagesInToolResults: false,
  prompt: (modelID) => promptFamilyOf(modelID, "generic"),
  cache: () => ({ kind: "session-key", options: (sessionID) => ({ mistral: { promptCacheKey: sessionID } }) }),
  reasoning: (model, reasoning) => ({ mistral: { reasoningEffort: effortOf(model.modelID, reasoning) } }),
  load: async (settings, modelID) => {
    const { createMistral } = await importSDK("@ai-sdk/mistral", "Mistral", () => import("@ai-sdk/mistral"))
    return createMistral(sdkSettings(settings))(modelID)
  },
  hints: { key: "create a key at https://console.mistral.ai/api-keys" }
}
