import type { ProviderDescriptor } from "./descriptor.js"
import { promptFamilyOf, reasoningLevelOf } from "./families.js"
import { importSDK } from "./sdk-import.js"
import { sdkSettings } from "./sdk-settings.js"

/**
 * Cerebras' OpenAI-compatible API, through its own SDK. A per-session `promptCacheKey` keeps a session's steps on the
 * same cache. Only the GPT-OSS models take a reasoning effort; the others reason on their own.
 */
export const cerebras: ProviderDescriptor = {
  type: "cerebras",
  name: "Cerebras",
  catalogID: "cerebras",
  auth: "key",
  keyEnv: ["CEREBRAS_API_KEY"],
  defaultModel: "zai-glm-4.7",
  imagesInToolResults: false,
  prompt: (modelID) => promptFamilyOf(modelID, "generic"),
  cache: () => ({ kind: "session-key", options: (sessionID) => ({ cerebras: { promptCacheKey: sessionID } }) }),
  reasoning: (model, reasoning) =>
    model.modelID.includes("gpt-oss") ? { cerebras: { reasoningEffort: reasoningLevelOf(reasoning) } } : {},
  load: async (settings, modelID) => {
    const { createCerebras } = await importSDK("@ai-sdk/cerebras", "Cerebras", () => import("@ai-sdk/cerebras"))
    return createCerebras(sdkSettings(settings))(modelID)
  },
  hints: { key: "create a key at https://cloud.cerebras.ai (API Keys)" }
}
