import type { ProviderDescriptor } from "./descriptor.js"
import { openAISessionKey, promptFamilyOf, reasoningLevelOf } from "./families.js"
import { sdkSettings } from "./sdk-settings.js"

/** OpenAI, through the Responses API. */
export const openai: ProviderDescriptor = {
  type: "openai",
  name: "OpenAI",
  catalogID: "openai",
  auth: "key",
  keyEnv: ["OPENAI_API_KEY"],
  defaultModel: "gpt-5",
  imagesInToolResults: true,
  prompt: (modelID) => promptFamilyOf(modelID, "openai"),
  cache: () => ({ kind: "session-key", options: openAISessionKey }),
  reasoning: (_model, reasoning) => ({ openai: { reasoningEffort: reasoningLevelOf(reasoning) } }),
  load: async (settings, modelID) => {
    const { createOpenAI } = await import("@ai-sdk/openai")
    return createOpenAI(sdkSettings(settings))(modelID)
  },
  hints: { key: "create a key at https://platform.openai.com/api-keys" }
}
