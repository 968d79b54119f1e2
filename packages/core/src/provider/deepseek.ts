import type { ProviderDescriptor } from "./descriptor.js"
import { promptFamilyOf, reasoningLevelOf } from "./families.js"
import { importSDK } from "./sdk-import.js"
import { sdkSettings } from "./sdk-settings.js"

/** DeepSeek's reasoning efforts for Lathe's levels (the API's own values are `low`, `high` and `max`). */
const EFFORT = { low: "low", medium: "high", high: "high" } as const

/**
 * DeepSeek's API. Its prompt cache is automatic; the stream's usage reports `prompt_cache_hit_tokens`, which the SDK
 * turns into cache reads. `deepseek-reasoner` reasons by being chosen (no option); the V4 models think by default
 * and take an effort.
 */
export const deepseek: ProviderDescriptor = {
  type: "deepseek",
  name: "DeepSeek",
  catalogID: "deepseek",
  auth: "key",
  keyEnv: ["DEEPSEEK_API_KEY"],
  defaultModel: "deepseek-v4-pro",
  imagesInToolResults: true,
  prompt: (modelID) => promptFamilyOf(modelID, "generic"),
  reasoning: (model, reasoning) =>
    model.modelID === "deepseek-reasoner"
      ? {}
      : { deepseek: { thinking: { type: "enabled" }, reasoningEffort: EFFORT[reasoningLevelOf(reasoning)] } },
  load: async (settings, modelID) => {
    const { createDeepSeek } = await importSDK("@ai-sdk/deepseek", "DeepSeek", () => import("@ai-sdk/deepseek"))
    return createDeepSeek(sdkSettings(settings))(modelID)
  },
  hints: { key: "create a key at https://platform.deepseek.com/api_keys" }
}
