import type { ProviderDescriptor } from "./descriptor.js"
import { promptFamilyOf, reasoningLevelOf } from "./families.js"
import { importSDK } from "./sdk-import.js"
import { sdkSettings } from "./sdk-settings.js"

/**
 * Fireworks AI's OpenAI-compatible API (`/inference/v1`), through its own SDK. Model ids are full paths
 * (`accounts/fireworks/models/kimi-k2p7-code`). A per-session `promptCacheKey` keeps a session's steps on the same
 * cache.
 */
export const fireworks: ProviderDescriptor = {
  type: "fireworks",
  name: "Fireworks AI",
  aliases: ["fireworks-ai"],
  catalogID: "fireworks-ai",
  auth: "key",
  keyEnv: ["FIREWORKS_API_KEY"],
  defaultModel: "accounts/fireworks/models/kimi-k2p7-code",
  defaultFamily: /^accounts\/fireworks\/models\//,
  imagesInToolResults: false,
  prompt: (modelID) => promptFamilyOf(modelID, "generic"),
  cache: () => ({ kind: "session-key", options: (sessionID) => ({ fireworks: { promptCacheKey: sessionID } }) }),
  reasoning: (_model, reasoning) => ({ fireworks: { reasoningEffort: reasoningLevelOf(reasoning) } }),
  load: async (settings, modelID) => {
    const { createFireworks } = await importSDK("@ai-sdk/fireworks", "Fireworks", () => import("@ai-sdk/fireworks"))
    return createFireworks(sdkSettings(settings))(modelID)
  },
  hints: { key: "create a key at https://app.fireworks.ai/settings/users/api-keys" }
}
