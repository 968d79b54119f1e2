import type { ProviderDescriptor } from "./descriptor.js"
import { ANTHROPIC_CACHE_MARK, anthropicThinking } from "./families.js"
import { sdkSettings } from "./sdk-settings.js"

/** Anthropic's Messages API, direct. */
export const anthropic: ProviderDescriptor = {
  type: "anthropic",
  name: "Anthropic",
  catalogID: "anthropic",
  auth: "key",
  keyEnv: ["ANTHROPIC_API_KEY"],
  defaultModel: "claude-sonnet-4-5",
  imagesInToolResults: true,
  prompt: "anthropic",
  cache: () => ({ kind: "breakpoints", mark: ANTHROPIC_CACHE_MARK }),
  reasoning: (model, reasoning) => ({ anthropic: anthropicThinking(model, reasoning) }),
  load: async (settings, modelID) => {
    const { createAnthropic } = await import("@ai-sdk/anthropic")
    return createAnthropic(sdkSettings(settings))(modelID)
  },
  hints: { key: "create a key at https://console.anthropic.com/settings/keys" }
}
