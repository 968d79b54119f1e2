import type { ProviderDescriptor } from "./descriptor.js"
import { promptFamilyOf, reasoningLevelOf } from "./families.js"
import { importSDK } from "./sdk-import.js"
import { sdkSettings } from "./sdk-settings.js"

/** Grok 4.20's fixed reasoning and non-reasoning models, which take no effort (the SDK's own list). */
const FIXED_REASONING = /^grok-4\.20(-\d{4})?-(non-)?reasoning$/

/**
 * xAI's Grok models, through the Responses API (`/v1/responses`). A per-session `promptCacheKey` keeps a session's
 * steps on the same cache; tool results may carry images.
 */
export const xai: ProviderDescriptor = {
  type: "xai",
  name: "xAI",
  catalogID: "xai",
  auth: "key",
  keyEnv: ["XAI_API_KEY"],
  defaultModel: "grok-4.3",
  defaultFamily: /^grok-/,
  imagesInToolResults: true,
  prompt: (modelID) => promptFamilyOf(modelID, "generic"),
  cache: () => ({ kind: "session-key", options: (sessionID) => ({ xai: { promptCacheKey: sessionID } }) }),
  reasoning: (model, reasoning) =>
    FIXED_REASONING.test(model.modelID) ? {} : { xai: { reasoningEffort: reasoningLevelOf(reasoning) } },
  load: async (settings, modelID) => {
    const { createXai } = await importSDK("@ai-sdk/xai", "xAI", () => import("@ai-sdk/xai"))
    return createXai(sdkSettings(settings))(modelID)
  },
  hints: { key: "create a key at https://console.x.ai" }
}
