import type { ProviderDescriptor } from "./descriptor.js"
import { promptFamilyOf, reasoningLevelOf } from "./families.js"
import { importSDK } from "./sdk-import.js"
import { sdkSettings } from "./sdk-settings.js"

/**
 * Together AI's OpenAI-compatible API, through its own SDK. Its prompt cache is automatic. Reasoning: the GPT-OSS
 * models take an effort level; the hybrid ones (Kimi, GLM, Qwen, DeepSeek) are switched to thinking with
 * `reasoning: { enabled: true }`.
 */
export const togetherai: ProviderDescriptor = {
  type: "togetherai",
  name: "Together AI",
  aliases: ["together"],
  catalogID: "togetherai",
  auth: "key",
  // The SDK reads TOGETHER_API_KEY, and TOGETHER_AI_API_KEY as a deprecated fallback.
  keyEnv: ["TOGETHER_API_KEY", "TOGETHER_AI_API_KEY"],
  defaultModel: "moonshotai/Kimi-K2.7-Code",
  imagesInToolResults: false,
  prompt: (modelID) => promptFamilyOf(modelID, "generic"),
  reasoning: (model, reasoning) =>
    model.modelID.includes("gpt-oss")
      ? { togetherai: { reasoningEffort: reasoningLevelOf(reasoning) } }
      : { togetherai: { reasoning: { enabled: true } } },
  load: async (settings, modelID) => {
    const { createTogetherAI } = await importSDK(
      "@ai-sdk/togetherai",
      "Together AI",
      () => import("@ai-sdk/togetherai")
    )
    return createTogetherAI(sdkSettings(settings))(modelID)
  },
  hints: { key: "create a key at https://api.together.ai/settings/api-keys" }
}
